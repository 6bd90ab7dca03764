"""Limits of what an upload may hold, and of anonymous sharing (on/off, shares per hour, the
contact address)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from apps.core import ratelimit
from apps.core.ratelimit import RateLimited
from apps.trajectories.importers import Limits
from apps.trajectories.importers.archive import ArchiveLimits
from apps.trajectories.services.errors import SharingRefused

ANON_EMAIL_PLACEHOLDERS = {"", "not_provided", "none", "null", "anonymous"}


def ingest_limits() -> Limits:
    return Limits(
        max_events=settings.TRAJHUB_MAX_EVENTS,
        max_field_bytes=settings.TRAJHUB_MAX_FIELD_BYTES,
        max_depth=settings.TRAJHUB_MAX_JSON_DEPTH,
        # A zip's entries inflate within the gzip limit, in total.
        archive=ArchiveLimits(
            max_entries=settings.TRAJHUB_MAX_ZIP_ENTRIES,
            max_entry_bytes=settings.TRAJHUB_MAX_ZIP_ENTRY_BYTES,
            max_total_bytes=settings.TRAJHUB_MAX_DECOMPRESSED_BYTES,
            max_ratio=settings.TRAJHUB_MAX_ZIP_RATIO,
        ),
    )


WINDOW_SECONDS = 3600


def _over_limit(scope: str, value: str) -> ratelimit.Verdict | None:
    """Count one anonymous share against `scope`; the verdict when the hourly limit is exceeded.

    Counted per clock hour, so that a refusal can say when the count starts again (Retry-After).
    """
    verdict = ratelimit.hit(
        f"trajectories.anon-share.{scope}",
        value,
        settings.TRAJHUB_ANON_SHARES_PER_HOUR,
        WINDOW_SECONDS,
    )
    return None if verdict.allowed else verdict


def anonymous_share_check(client_ip: str) -> None:
    """SharingRefused when anonymous sharing is off; RateLimited past the shares per hour from
    this client address (counted here)."""
    if not settings.TRAJHUB_ANONYMOUS_SHARING:
        raise SharingRefused(
            "anonymous sharing is turned off on this site: sign in or send an API token"
        )
    over = _over_limit("ip", client_ip) if client_ip else None
    if over is not None:
        raise RateLimited(
            f"too many anonymous shares from this address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later or use an API token",
            retry_after=over.retry_after,
        )


def email_share_check(email: str) -> None:
    """RateLimited past the anonymous shares per hour under this contact email (counted here)."""
    over = _over_limit("email", email.lower()) if email else None
    if over is not None:
        raise RateLimited(
            f"too many anonymous shares for this email address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later",
            retry_after=over.retry_after,
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
