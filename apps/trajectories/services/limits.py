"""Limits of what an upload may hold, and of anonymous sharing (on/off, shares per hour, the
contact address)."""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from apps.trajectories.importers import Limits
from apps.trajectories.services.errors import RateLimited, SharingRefused

ANON_EMAIL_PLACEHOLDERS = {"", "not_provided", "none", "null", "anonymous"}


def ingest_limits() -> Limits:
    return Limits(
        max_events=settings.TRAJHUB_MAX_EVENTS,
        max_field_bytes=settings.TRAJHUB_MAX_FIELD_BYTES,
        max_depth=settings.TRAJHUB_MAX_JSON_DEPTH,
    )


def _hashed(value: str) -> str:
    # Cache keys must not carry email addresses in clear (they may end up in Redis dumps).
    return hashlib.sha256(value.encode()).hexdigest()[:32]


WINDOW_SECONDS = 3600


def _seconds_left_in_window() -> int:
    return WINDOW_SECONDS - int(time.time()) % WINDOW_SECONDS


def _rate_limit_hit(scope: str, value: str) -> bool:
    """Count one anonymous share against `scope`; True when the hourly limit is exceeded.

    Counted per clock hour, so that a refusal can say when the count starts again (Retry-After).
    """
    limit = settings.TRAJHUB_ANON_SHARES_PER_HOUR
    window = int(time.time()) // WINDOW_SECONDS
    key = f"trajhub:anon-share:{scope}:{_hashed(value)}:{window}"
    cache.add(key, 0, timeout=WINDOW_SECONDS + 60)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=WINDOW_SECONDS + 60)
        count = 1
    return count > limit


def _check_anonymous_allowed(client_ip: str) -> None:
    if not settings.TRAJHUB_ANONYMOUS_SHARING:
        raise SharingRefused(
            "anonymous sharing is turned off on this site: sign in or send an API token"
        )
    if client_ip and _rate_limit_hit("ip", client_ip):
        raise RateLimited(
            f"too many anonymous shares from this address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later or use an API token",
            retry_after=_seconds_left_in_window(),
        )


def _check_email_rate(email: str) -> None:
    if email and _rate_limit_hit("email", email.lower()):
        raise RateLimited(
            f"too many anonymous shares for this email address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later",
            retry_after=_seconds_left_in_window(),
        )


def normalize_email(value: str) -> str:
    """A usable contact address, or "" (OpenHands sends "" or "NOT_PROVIDED" when there is none)."""
    value = (value or "").strip() if isinstance(value, str) else ""
    if value.lower() in ANON_EMAIL_PLACEHOLDERS or len(value) > 254:
        return ""
    try:
        validate_email(value)
    except ValidationError:
        return ""
    return value
