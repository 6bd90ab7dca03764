"""Services queue their tasks by name (apps/core/queueing.py), never importing the tasks module
that imports them. Every name they queue must be a task that the apps' `ready()` registered:
a typo, or a tasks module no AppConfig imports, fails here rather than as an email that never
goes out or a release build that never starts (the callers log a queueing error and carry on)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from celery import current_app
from django.conf import settings

from apps.core.queueing import enqueue, task


def _queued_names() -> set[str]:
    """Names given to enqueue() / task() as literals, and the module constants `*_TASK` that
    the services pass them."""
    names = set()
    for path in (Path(settings.BASE_DIR) / "apps").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                first = node.args[0]
                if called in ("enqueue", "task") and isinstance(first, ast.Constant):
                    names.add(first.value)
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_TASK")
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                names.add(node.value.value)
    return names


def test_every_queued_name_is_a_registered_task():
    names = _queued_names()
    assert {
        "apps.accounts.tasks.notice_email_send",
        "apps.accounts.tasks.email_deletion_link_send",
        "apps.accounts.tasks.export_build_task",
        "apps.moderation.tasks.takedown_email",
        "apps.datasets.tasks.release_removals",
        "apps.datasets.tasks.release_shard",
    } <= names
    missing = sorted(name for name in names if name not in current_app.tasks)
    assert not missing


def test_an_unknown_name_is_refused():
    with pytest.raises(KeyError):
        enqueue("apps.accounts.tasks.no_such_task", 1)
    with pytest.raises(KeyError):
        task("apps.datasets.tasks.no_such_task")
