"""Services queue their tasks by name (apps.accounts.queueing), never importing the tasks module
that imports them. Every name they queue must be a task that the apps' `ready()` registered:
a typo, or a tasks module no AppConfig imports, fails here rather than as an email that never
goes out (the callers log a queueing error and carry on)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from celery import current_app
from django.conf import settings

from apps.accounts.queueing import enqueue


def _queued_names() -> set[str]:
    names = set()
    for path in (Path(settings.BASE_DIR) / "apps").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "enqueue"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(node.args[0].value)
    return names


def test_every_queued_name_is_a_registered_task():
    names = _queued_names()
    assert {
        "apps.accounts.tasks.notice_email_send",
        "apps.accounts.tasks.email_deletion_link_send",
        "apps.accounts.tasks.export_build_task",
    } <= names
    missing = sorted(name for name in names if name not in current_app.tasks)
    assert not missing


def test_an_unknown_name_is_refused():
    with pytest.raises(KeyError):
        enqueue("apps.accounts.tasks.no_such_task", 1)
