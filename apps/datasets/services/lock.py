"""The release build's lock: one build at a time (release_run holds it while it builds,
announces or publishes; shard tasks hold none). The site's one lock (apps/core/locks.py), its
database variant: on PostgreSQL a session advisory lock, so a worker that dies loses its
connection and with it the lock, and the next run can tell its build is dead; elsewhere a lease
that its holder renews while it builds and that expires soon after a killed holder."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from apps.core.locks import advisory_lock

LOCK_KEY = "trajhub.datasets.release-build"
# The lease of the embedded (SQLite) site, renewed while the build runs.
LEASE_SECONDS = 60


@contextlib.contextmanager
def build_lock() -> Iterator[bool]:
    """`with build_lock() as acquired:` — False when another build holds it."""
    with advisory_lock(LOCK_KEY, lease_seconds=LEASE_SECONDS) as acquired:
        yield acquired
