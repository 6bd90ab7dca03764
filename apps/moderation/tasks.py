"""Celery tasks of the moderation pipeline: thin wrappers around the services."""

from __future__ import annotations

import logging
import smtplib

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from apps.core.locks import Lease
from apps.moderation.services import mail, scan, sweeps
from apps.trajectories.models import Trajectory

logger = logging.getLogger(__name__)

SWEEP_LOCK = "moderation:scan-sweep:lock"
RESCAN_LOCK = "moderation:rescan-sweep:lock"


@shared_task(
    name="apps.moderation.tasks.scan_trajectory",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def scan_trajectory(trajectory_id: int) -> str | None:
    """Scan one trajectory (queued on commit when it is stored). Gone by now: nothing to do.

    The scan reads the row itself (it must read it fresh anyway): the task does not load it."""
    result = scan.trajectory_scan(trajectory=Trajectory(pk=trajectory_id))
    return result.review_state or None


@shared_task(name="apps.moderation.tasks.scan_sweep")
def scan_sweep() -> int:
    """Periodic: scan pending trajectories whose on-commit scan never ran. One sweep at a time:
    its lock is renewed while it runs and expires soon after a killed worker stops renewing it."""
    with Lease(SWEEP_LOCK, settings.TRAJHUB_SCAN_SWEEP_LOCK_SECONDS) as held:
        if not held:
            logger.info("scan sweep already running; skipped")
            return 0
        results = sweeps.pending_scan_sweep(limit=settings.TRAJHUB_SCAN_SWEEP_BATCH)
    if results:
        logger.info("scan sweep scanned %d pending trajectories", len(results))
    return len(results)


@shared_task(name="apps.moderation.tasks.rescan_sweep")
def rescan_sweep() -> int:
    """Periodic: rescan a bounded batch of public trajectories scanned by older rules (newest
    first); `manage.py rescan` does the same on demand. One sweep at a time."""
    with Lease(RESCAN_LOCK, settings.TRAJHUB_SCAN_SWEEP_LOCK_SECONDS) as held:
        if not held:
            logger.info("rescan sweep already running; skipped")
            return 0
        results = sweeps.rescan_due_sweep(limit=settings.TRAJHUB_SCAN_SWEEP_BATCH)
    if results:
        logger.info("rescan sweep rescanned %d trajectories", len(results))
    return len(results)


@shared_task(
    name="apps.moderation.tasks.takedown_email",
    autoretry_for=(OperationalError, smtplib.SMTPException, ConnectionError),
    retry_backoff=True,
    max_retries=5,
)
def takedown_email(request_id: int, what: str) -> bool:
    """Mail a takedown requester the confirmation link or the outcome (queued on commit)."""
    return mail.takedown_mail(request_id=request_id, what=what)
