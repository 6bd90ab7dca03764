"""Queueing a Celery task by its registered name, for the services a task calls.

A task imports the service it runs; a service that imported the task back to queue it would
close an import circle (notices <-> tasks, export <-> tasks, erasure <-> tasks were three). So a
service queues by name here, and never imports a tasks module. Each app's `AppConfig.ready()`
imports its tasks module, which registers its tasks with the Celery app under their explicit
names: every name is known in the web process and in the worker before the first request.
"""

from __future__ import annotations

from typing import Any

from celery import current_app


def enqueue(name: str, *args: Any) -> None:
    """Queue the task registered as `name` with `args` (its `.delay()`: run at once under
    CELERY_TASK_ALWAYS_EAGER). celery's NotRegistered, a KeyError, for a name no tasks module
    registered."""
    current_app.tasks[name].delay(*args)
