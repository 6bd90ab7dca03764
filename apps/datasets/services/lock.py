"""The release build's lock: one build at a time (release_run holds it while it builds,
announces or publishes; shard tasks hold none)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import cache
from django.db import connection

LOCK_KEY = "trajhub.datasets.release-build"


def _lock_number() -> int:
    return int.from_bytes(hashlib.sha256(LOCK_KEY.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def build_lock() -> Iterator[bool]:
    """One build at a time. On PostgreSQL a session advisory lock: a worker that dies loses its
    connection and with it the lock, so the next run can tell its build is dead. Elsewhere a
    cache lock that expires after TRAJHUB_RELEASE_STALE_SECONDS."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [_lock_number()])
            acquired = bool(cursor.fetchone()[0])
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [_lock_number()])
        return
    acquired = cache.add(LOCK_KEY, "1", timeout=settings.TRAJHUB_RELEASE_STALE_SECONDS)
    try:
        yield acquired
    finally:
        if acquired:
            cache.delete(LOCK_KEY)


def build_lock_keep() -> None:
    """Called as the build makes progress, by the holder: the cache lock expires on its own (a
    dead worker's must), so keep ours alive; the advisory lock needs nothing."""
    if connection.vendor != "postgresql":
        cache.touch(LOCK_KEY, settings.TRAJHUB_RELEASE_STALE_SECONDS)
