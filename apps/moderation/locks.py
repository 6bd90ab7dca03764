"""A lock for periodic tasks that cannot outlive its holder by more than a short interval.

The lock is a cache key with a short expiry (Redis in production) that a thread of the holder
renews while the holder runs. A holder that is killed (OOM, kill -9, a lost machine) stops
renewing, and the key expires a few seconds later, so the next run is not skipped for the whole
bound of a long task, as a single long expiry would do.
"""

from __future__ import annotations

import logging
import secrets
import threading
from types import TracebackType

from django.core.cache import cache

logger = logging.getLogger(__name__)


class RenewedLock:
    """`with RenewedLock(key, seconds) as held:` — `held` is False when another holds it."""

    def __init__(self, key: str, seconds: float):
        self.key = key
        self.seconds = max(1.0, float(seconds))
        self.token = secrets.token_hex(16)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def acquire(self) -> bool:
        if not cache.add(self.key, self.token, timeout=self.seconds):
            return False
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

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=self.seconds)
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
