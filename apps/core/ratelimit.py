"""The one rate limiter: a fixed window on the Django cache, and the one error for being over it.

`hit(scope, key, limit, window)` counts one action of `key` (a client address, an email, an
account) in `scope` and says whether it is within `limit` per `window` seconds, and how long
until the window that counted it is over. Windows are aligned on the clock (every `window`
seconds since the epoch), so that a refusal can say exactly when the count starts again.
`peek` says the same without counting, for limits that count only failures.

Keys are kept only as HMACs under the site's secret key (`signing.digest`): no client address or
email address is ever part of a cache key (they may end up in Redis dumps).

Counting is `add` then `incr`, atomic on Redis and on the local-memory cache; with several
cache servers a count may be a little low, never a refusal too many.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.cache import cache

from apps.core.signing import digest

# Kept a little past its window, so that a count read at the very end is still there.
GRACE_SECONDS = 60


class RateLimited(Exception):
    """Over a limit; `retry_after`: seconds until the window that counts it has passed. The
    API's error handler and the pages answer it with 429 and Retry-After."""

    status_code = 429

    def __init__(self, message: str, where: str = "", *, retry_after: int = 3600):
        super().__init__(message)
        self.message = message
        self.where = where
        self.retry_after = retry_after


@dataclass(frozen=True)
class Verdict:
    """Whether the action is within its limit, and seconds until its window is over."""

    allowed: bool
    retry_after: int


def hashed_key(scope: str, key: str) -> str:
    """What a cache key holds of the value counted: an HMAC, never the value. DRF's throttles
    name their idents with it too."""
    return digest("trajhub.ratelimit", f"{scope}\0{key}")[:32]


def _cache_key(scope: str, key: str, window: int, now: int) -> str:
    return f"trajhub:ratelimit:{scope}:{hashed_key(scope, key)}:{window}:{now // window}"


def hit(scope: str, key: str, limit: int, window: int) -> Verdict:
    """Count one action of `key` in `scope`; allowed while at most `limit` in this window."""
    now = int(time.time())
    cache_key = _cache_key(scope, key, window, now)
    cache.add(cache_key, 0, timeout=window + GRACE_SECONDS)
    try:
        count = cache.incr(cache_key)
    except ValueError:  # expired between add and incr
        cache.set(cache_key, 1, timeout=window + GRACE_SECONDS)
        count = 1
    return Verdict(allowed=count <= limit, retry_after=window - now % window)


def peek(scope: str, key: str, limit: int, window: int) -> Verdict:
    """Whether one more `hit` would be allowed, counting nothing."""
    now = int(time.time())
    count = cache.get(_cache_key(scope, key, window, now), 0)
    return Verdict(allowed=count < limit, retry_after=window - now % window)
