"""Celery tasks of accounts: thin wrappers around the services."""

from __future__ import annotations

import logging
import smtplib

from celery import shared_task
from django.db import OperationalError

from apps.accounts import notices
from apps.accounts.models import DataExport, Notice

logger = logging.getLogger(__name__)


@shared_task(
    name="apps.accounts.tasks.notice_email_send",
    autoretry_for=(OperationalError, smtplib.SMTPException, ConnectionError),
    retry_backoff=True,
    max_retries=5,
)
def notice_email_send(notice_id: int) -> bool:
    """Email one notice (queued on commit by notices.notice_send). Gone by now: nothing to do."""
    notice = Notice.objects.select_related("user").filter(pk=notice_id).first()
    if notice is None:
        return False
    return notices.notice_email(notice=notice)


@shared_task(
    name="apps.accounts.tasks.email_deletion_link_send",
    autoretry_for=(OperationalError, smtplib.SMTPException, ConnectionError),
    retry_backoff=True,
    max_retries=5,
)
def email_deletion_link_send(request_id: int, token: str) -> bool:
    """Email the deletion link of one request (its address is read from the row)."""
    from apps.accounts.services.erasure import email_deletion_link_email

    return email_deletion_link_email(request_id=request_id, token=token)


@shared_task(name="apps.accounts.tasks.export_build_task", autoretry_for=(OperationalError,))
def export_build_task(export_id: int) -> int | None:
    """Build one data export archive (queued on commit by export_request). Gone: nothing to do."""
    from apps.accounts.services.export import export_build

    export = DataExport.objects.select_related("user").filter(pk=export_id).first()
    if export is None:
        return None
    built = export_build(export=export)
    return built.size if built is not None else None


@shared_task(name="apps.accounts.tasks.export_expired_sweep")
def export_expired_sweep() -> int:
    """Periodic: delete data export archives past TRAJHUB_EXPORT_KEEP_DAYS (safe to run twice)."""
    from apps.accounts.services.export import export_expired_sweep as sweep

    return sweep()


@shared_task(name="apps.accounts.tasks.avatar_fetch_task", autoretry_for=(OperationalError,))
def avatar_fetch_task(user_id: int, url: str) -> bool:
    """Fetch a GitHub avatar into storage once (queued on GitHub sign-in)."""
    from apps.accounts.models import User
    from apps.accounts.services.avatars import AvatarError, avatar_fetch

    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return False
    try:
        return avatar_fetch(user=user, url=url)
    except AvatarError as exc:
        # Not transient enough to retry: the profile shows no picture, the next sign-in tries again.
        logger.warning("avatar of account %s not stored: %s", user_id, exc)
        return False
