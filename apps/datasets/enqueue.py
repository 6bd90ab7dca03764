"""How the release services queue background work without importing tasks.py (tasks import
services, never the reverse): tasks.py registers each task here under its Celery name as it is
defined, DatasetsConfig.ready() imports tasks.py so that they are registered in every process,
and a service looks its task up by that name when it queues one."""

from __future__ import annotations

from typing import Any

_tasks: dict[str, Any] = {}


def register(name: str, task: Any) -> Any:
    """Register `task` (a Celery task) under its name; returns it."""
    _tasks[name] = task
    return task


def task(name: str) -> Any:
    """The task registered under `name` (a KeyError: apps.datasets.tasks was not imported,
    which DatasetsConfig.ready() does)."""
    return _tasks[name]
