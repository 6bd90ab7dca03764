"""Celery tasks of accounts: thin wrappers around the services. (The export and email deletion
tasks are apps.owners.tasks, under their old names.)"""

from __future__ import annotations

import logging
import smtplib

from celery import shared_task
from django.db import OperationalError

from apps.accounts import notices
from apps.accounts.models import Notice

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
