"""What one client may send: the rate limits of reports and takedown requests per client
address, of takedown confirmation mails per recipient (both through the site's one limiter,
apps/core/ratelimit.py, which keeps its keys as HMACs), and the length of a reader's text.
"""

from __future__ import annotations

from django.conf import settings

from apps.core import ratelimit, signing
from apps.core.ratelimit import RateLimited

TEXT_LIMIT = 5000
REPORTER_PURPOSE = "trajhub.moderation.reporter"


def address_key(client_ip: str) -> str:
    """The reporter's address as stored on a report (Report.address_key), never the address."""
    # sha1: the reports stored before issue 21 hold sha1 digests.
    return signing.digest(REPORTER_PURPOSE, client_ip or "-", algorithm="sha1")


def _count(scope: str, key: str, *, limit: int, seconds: int, message: str) -> None:
    """One more against `key` in its window; RateLimited past `limit`."""
    verdict = ratelimit.hit(scope, key, limit, seconds)
    if not verdict.allowed:
        raise RateLimited(message, retry_after=verdict.retry_after)


def count_submission(client_ip: str) -> None:
    """One more report or request from this address this hour; refused past the limit."""
    _count(
        "moderation.reports",
        client_ip or "-",
        limit=settings.TRAJHUB_REPORTS_PER_HOUR,
        seconds=3600,
        message="too many reports from your network in the last hour; try again later",
    )


# Confirmation mails to one address per day, whatever client asks: the form must not be a way
# to flood someone's mailbox from many addresses.
TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY = 3


def count_takedown_recipient(email: str) -> None:
    _count(
        "moderation.takedown-recipient",
        signing.canonical_email(email),
        limit=TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY,
        seconds=24 * 3600,
        message=(
            "too many takedown confirmation emails to this address today "
            f"(at most {TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY} a day); check its inbox for the "
            "links already sent, or try again tomorrow"
        ),
    )
