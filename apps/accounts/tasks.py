"""Celery tasks of accounts: thin wrappers around the services."""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.db import OperationalError

from apps.accounts import notices
from apps.accounts.models import Notice


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
