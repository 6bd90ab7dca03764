"""What one client may send: the rate limits of reports and takedown requests per client
address (kept only as an HMAC), of takedown confirmation mails per recipient, and the length of
a reader's text.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac

from apps.moderation.errors import ModerationError

TEXT_LIMIT = 5000


class RateLimited(ModerationError):
    """Too many reports or requests from one client address in the last hour."""


def address_key(client_ip: str) -> str:
    return salted_hmac("trajhub.moderation.reporter", client_ip or "-").hexdigest()


def _count(key: str, *, limit: int, seconds: int, message: str) -> None:
    """One more against `key` in its window (started by the first); RateLimited past `limit`."""
    cache.add(key, 0, seconds)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, seconds)
        count = 1
    if count > limit:
        raise RateLimited(message)


def count_submission(client_ip: str) -> None:
    """One more report or request from this address this hour; refused past the limit."""
    _count(
        f"moderation:reports:{address_key(client_ip)}",
        limit=settings.TRAJHUB_REPORTS_PER_HOUR,
        seconds=3600,
        message="too many reports from your network in the last hour; try again later",
    )


# Confirmation mails to one address per day, whatever client asks: the form must not be a way
# to flood someone's mailbox from many addresses.
TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY = 3


def count_takedown_recipient(email: str) -> None:
    digest = salted_hmac("trajhub.moderation.takedown-recipient", email.strip().lower())
    _count(
        f"moderation:takedown-recipient:{digest.hexdigest()}",
        limit=TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY,
        seconds=24 * 3600,
        message=(
            "too many takedown confirmation emails to this address today "
            f"(at most {TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY} a day); check its inbox for the "
            "links already sent, or try again tomorrow"
        ),
    )
