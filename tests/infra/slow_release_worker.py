"""A real Celery worker (`celery -A config worker`) with a release build slowed down where a
test needs it (tests/infra/test_release_workers.py only):

- SLOW_RELEASE_MARK: the first build stops after its Parquet files are uploaded and before the
  card and manifest, writing its process id to that file, so the test can kill it there.
- SLOW_SHARD_SECONDS: each shard task sleeps that long first, so two workers both get some.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from apps.datasets import services  # noqa: E402
from apps.datasets.services import shards, storage  # noqa: E402
from config.celery_app import app  # noqa: E402

_upload = storage.upload
_shard = shards.release_shard_build


def _stalling_upload(prefix: str, path: str, local: Path) -> None:
    mark = os.environ.get("SLOW_RELEASE_MARK")
    if mark and path == "README.md" and not Path(mark).exists():
        Path(mark).write_text(str(os.getpid()))
        time.sleep(3600)  # killed here by the test
    _upload(prefix, path, local)


def _slow_shard(**kwargs):
    time.sleep(float(os.environ.get("SLOW_SHARD_SECONDS", "0")))
    return _shard(**kwargs)


storage.upload = _stalling_upload
services.release_shard_build = _slow_shard  # what the task calls

if __name__ == "__main__":
    app.worker_main(["worker", "--loglevel=INFO", "--concurrency=1", *sys.argv[1:]])
