"""Celery tasks of the owner features: thin wrappers around the services.

They moved here from apps.accounts.tasks and keep their names (`name=`): the beat schedule in
settings and messages already queued refer to them by those. The services queue them by name
(apps.core.queueing) and never import this module.
"""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.db import OperationalError

from apps.accounts.models import DataExport
from apps.owners.services import erasure, export


@shared_task(
    name="apps.accounts.tasks.email_deletion_link_send",
    autoretry_for=(OperationalError, smtplib.SMTPException, ConnectionError),
    retry_backoff=True,
    max_retries=5,
)
def email_deletion_link_send(request_id: int, token: str) -> bool:
    """Email the deletion link of one request (its address is read from the row)."""
    return erasure.email_deletion_link_email(request_id=request_id, token=token)


@shared_task(name="apps.accounts.tasks.export_build_task", autoretry_for=(OperationalError,))
def export_build_task(export_id: int) -> int | None:
    """Build one data export archive (queued on commit by export_request). Gone: nothing to do."""
    item = DataExport.objects.select_related("user").filter(pk=export_id).first()
    if item is None:
        return None
    built = export.export_build(export=item)
    return built.size if built is not None else None


@shared_task(name="apps.accounts.tasks.export_expired_sweep")
def export_expired_sweep() -> int:
    """Periodic: delete data export archives past TRAJHUB_EXPORT_KEEP_DAYS (safe to run twice)."""
    return export.export_expired_sweep()
