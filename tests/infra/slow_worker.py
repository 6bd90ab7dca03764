"""A real Celery worker (`celery -A config worker`) whose FIRST scan stops in the middle, so a
test can kill it there: the scan writes its pool process id to $SLOW_SCAN_MARK, then sleeps.
Later scans (the file exists) run normally. Used by tests/infra/test_worker_crash.py only."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from apps.moderation.services import scan  # noqa: E402
from config.celery_app import app  # noqa: E402

_scan = scan.trajectory_scan


def _stalling_scan(*, trajectory):
    mark = Path(os.environ["SLOW_SCAN_MARK"])
    if not mark.exists():
        mark.write_text(str(os.getpid()))
        time.sleep(3600)  # killed here by the test
    return _scan(trajectory=trajectory)


scan.trajectory_scan = _stalling_scan

if __name__ == "__main__":
    app.worker_main(["worker", "--loglevel=INFO", "--concurrency=1", *sys.argv[1:]])
