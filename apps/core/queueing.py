"""Queueing a Celery task by its registered name: how a service starts background work.

A task imports the service it runs; a service that imported the task back to queue it would
close an import circle (there were several: notices, exports, erasure, takedown mails, release
removals and shards). So services queue by name here and never import a tasks module. Each
app's `AppConfig.ready()` imports its tasks module, which registers its tasks with the Celery
app under their explicit names: every name is known in the web process and in the worker
before the first request (tests/core/test_queueing.py checks every name queued in apps/).
"""

from __future__ import annotations

from typing import Any

from celery import current_app


def task(name: str) -> Any:
    """The task registered as `name` (for `.apply_async(countdown=...)` or a signature).
    celery's NotRegistered, a KeyError, for a name no tasks module registered."""
    return current_app.tasks[name]


def enqueue(name: str, *args: Any) -> None:
    """Queue the task registered as `name` with `args` (its `.delay()`: run at once under
    CELERY_TASK_ALWAYS_EAGER)."""
    task(name).delay(*args)
