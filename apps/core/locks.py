"""The one lock of the site: who runs a periodic task, a build or a slot of a shared resource.

`Lease(key, seconds)` is a cache key (Redis in production) holding a random token, which a
thread of the holder renews every third of `seconds` while the holder runs. A holder that is
killed (OOM, kill -9, a lost machine) stops renewing, and the key expires at most `seconds`
later, so the next run is not skipped for the whole bound of a long task, as a single long
expiry would do. Only the holder of the token releases it: a holder whose lease expired and
was taken by another worker leaves the new holder's lease alone.

`advisory_lock(name)` is the database variant, where the lock must go with the holder's
connection (a release build: a worker that dies loses its connection and with it the lock, so
the next run knows at once that the build is dead). It is a PostgreSQL session advisory lock;
on other databases (the embedded SQLite default) it falls back to a `Lease`.
`transaction_lock(name)` serialises writers inside one PostgreSQL transaction (SQLite
serialises every write already).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import secrets
import threading
from collections.abc import Iterator
from types import TracebackType

from django.core.cache import cache
from django.db import connection

logger = logging.getLogger(__name__)


class Lease:
    """`with Lease(key, seconds) as held:` — `held` is False when another holds it."""

    def __init__(self, key: str, seconds: float):
        self.key = key
        self.seconds = max(1.0, float(seconds))
        self.token = secrets.token_hex(16)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def acquire(self) -> bool:
        if not cache.add(self.key, self.token, timeout=self.seconds):
            return False
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name=f"lock:{self.key}", daemon=True)
        self._renewer.start()
        return True

    def _renew(self) -> None:
        # Three renewals per expiry: one missed renewal (a busy machine) does not lose the lock.
        while not self._stop.wait(self.seconds / 3):
            if cache.get(self.key) != self.token:
                logger.warning("lock %s was lost (expired or taken over)", self.key)
                return
            cache.touch(self.key, timeout=self.seconds)

    def stop_renewing(self) -> None:
        """What a killed holder does: the lease expires `seconds` from its last renewal."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=self.seconds)
            self._renewer = None

    def release(self) -> None:
        self.stop_renewing()
        # Ours only: an expired lease may have been taken by another holder since. (Between
        # this read and the delete the lease would have to expire, seconds after a renewal.)
        if cache.get(self.key) == self.token:
            cache.delete(self.key)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._renewer is not None:
            self.release()


def _lock_number(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def advisory_lock(name: str, *, lease_seconds: float) -> Iterator[bool]:
    """`with advisory_lock(name, lease_seconds=30) as held:` — one holder at a time, without
    waiting (`held` is False when another holds it). PostgreSQL: a session advisory lock, gone
    with its holder's connection. Elsewhere: a `Lease` of `lease_seconds`."""
    if connection.vendor != "postgresql":
        with Lease(name, lease_seconds) as held:
            yield held
        return
    number = _lock_number(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [number])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [number])


def transaction_lock(name: str) -> None:
    """Wait for, and hold until the current transaction ends, the lock called `name`
    (PostgreSQL; SQLite serialises all writes, so there it does nothing)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_number(name)])
