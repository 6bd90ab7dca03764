"""Deleting people's data: a whole account, or everything shared anonymously under an email.

Every trajectory goes through trajectory_delete (events, raw upload, images nobody else uses,
findings and derived data at once; a tombstone so that the next release lists it as removed;
an audit entry that names who did it by a username snapshot).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import EmailDeletionRequest, Notice, User
from apps.core import ratelimit, signing
from apps.core.queueing import enqueue
from apps.core.ratelimit import RateLimited
from apps.trajectories.models import Trajectory
from apps.trajectories.services import normalize_email, trajectory_delete

logger = logging.getLogger(__name__)

LINK_SALT = "trajhub.accounts.email-deletion"


@transaction.atomic
def account_delete(*, user: User) -> int:
    """Delete every trajectory of the account, then the account (its tokens, notices and
    export go with it). Returns how many trajectories were deleted."""
    count = 0
    for trajectory in Trajectory.objects.filter(owner=user).only("pk", "share_id", "raw_path"):
        trajectory_delete(trajectory=trajectory, reason="account", actor=user)
        count += 1
    _export_files_delete(user)
    User.objects.filter(pk=user.pk).delete()
    logger.info("account %s deleted with %d trajectories", user.pk, count)
    return count


def _export_files_delete(user: User) -> None:
    from apps.owners.services.export import export_delete_files

    export_delete_files(user=user)


# --- Deletion by email -----------------------------------------------------------------------


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _refused(kind: str, value: str) -> int:
    """Count one request against `value` (a client address or an email); past the hourly
    limit, the seconds until its window is over (0: allowed)."""
    verdict = ratelimit.hit(
        f"accounts.email-deletion.{kind}",
        value.lower(),
        settings.TRAJHUB_EMAIL_DELETION_PER_HOUR,
        3600,
    )
    return 0 if verdict.allowed else verdict.retry_after


def email_deletion_request(*, email: str, client: str) -> None:
    """Email a one-time link that deletes what was shared anonymously under `email`.

    The caller learns nothing: the link goes out whether or not anything was shared under that
    address (after commit, through a task, so the answer takes the same time either way).
    RateLimited past TRAJHUB_EMAIL_DELETION_PER_HOUR per client address or per email.
    """
    email = normalize_email(email)
    wait = _refused("client", client or "unknown") or (_refused("email", email) if email else 0)
    if wait:
        raise RateLimited(
            "too many deletion links asked for; try again in an hour", retry_after=wait
        )
    if not email:
        return
    secret = secrets.token_urlsafe(32)
    request = EmailDeletionRequest.objects.create(secret_hash=_hash(secret), email=email)
    token = signing.link_token(LINK_SALT, secret)
    transaction.on_commit(lambda: _queue_link_email(request.pk, token))


def _queue_link_email(request_id: int, token: str) -> None:
    try:
        enqueue("apps.accounts.tasks.email_deletion_link_send", request_id, token)
    except Exception:  # a broker that is down must not turn the form into an error page
        logger.exception("could not queue the email deletion link %s", request_id)


def email_deletion_link_email(*, request_id: int, token: str) -> bool:
    """Send the link (the task calls this). The address comes from the row, never the broker."""
    request = EmailDeletionRequest.objects.filter(pk=request_id, used_at__isnull=True).first()
    if request is None:
        return False
    url = settings.SITE_URL + reverse("email-deletion-confirm", args=[token])
    body = render_to_string(
        "owners/email_deletion_link.txt",
        {
            "url": url,
            "hours": settings.TRAJHUB_EMAIL_DELETION_HOURS,
            "site_name": settings.SITE_NAME,
        },
    )
    EmailMessage(
        subject=f"Delete what you shared on {settings.SITE_NAME}", body=body, to=[request.email]
    ).send()
    logger.info("email deletion link %s sent", request_id)
    return True


def email_deletion_open(token: str) -> EmailDeletionRequest | None:
    """The unused, unexpired request behind a link, else None."""
    try:
        secret = signing.link_payload(
            LINK_SALT,
            token,
            max_age=timedelta(hours=settings.TRAJHUB_EMAIL_DELETION_HOURS),
            expect=str,
        )
    except signing.BadLink:  # expired too
        return None
    cutoff = timezone.now() - timedelta(hours=settings.TRAJHUB_EMAIL_DELETION_HOURS)
    return EmailDeletionRequest.objects.filter(
        secret_hash=_hash(secret), used_at__isnull=True, created_at__gte=cutoff
    ).first()


def anonymous_shares_of(email: str) -> QuerySet[Trajectory]:
    """What was shared without an account under `email`. Shares an account owns (claimed, or
    shared signed in) are that account's to manage and are not included."""
    return Trajectory.objects.filter(owner__isnull=True, contact_email__iexact=email)


@transaction.atomic
def email_deletion_confirm(*, request: EmailDeletionRequest) -> int | None:
    """Delete the anonymous shares of the request's email; the link is used up. None if it was
    used meanwhile (of two clicks at once, one deletes)."""
    used = EmailDeletionRequest.objects.filter(pk=request.pk, used_at__isnull=True).update(
        used_at=timezone.now(), email=""
    )
    if used != 1:
        return None
    count = 0
    for trajectory in anonymous_shares_of(request.email).only("pk", "share_id", "raw_path"):
        trajectory_delete(trajectory=trajectory, reason="email")
        count += 1
    # Notices waiting to be emailed there go too; the address is forgotten.
    Notice.objects.filter(user__isnull=True, email__iexact=request.email).delete()
    return count
