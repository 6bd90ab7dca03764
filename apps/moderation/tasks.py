"""Celery tasks of the moderation pipeline: thin wrappers around the services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import OperationalError

from apps.moderation import services
from apps.trajectories.models import Trajectory

logger = logging.getLogger(__name__)

SWEEP_LOCK = "moderation:scan-sweep:lock"
# Longer than a sweep can take (bounded batch) so a crashed worker's lock expires on its own.
SWEEP_LOCK_SECONDS = 15 * 60


@shared_task(
    name="apps.moderation.tasks.scan_trajectory",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def scan_trajectory(trajectory_id: int) -> str | None:
    """Scan one trajectory (queued on commit when it is stored). Gone by now: nothing to do."""
    trajectory = Trajectory.objects.filter(pk=trajectory_id).first()
    if trajectory is None:
        return None
    result = services.trajectory_scan(trajectory=trajectory)
    return result.review_state


@shared_task(name="apps.moderation.tasks.scan_sweep")
def scan_sweep() -> int:
    """Periodic: scan pending trajectories whose on-commit scan never ran. One sweep at a time."""
    if not cache.add(SWEEP_LOCK, "1", timeout=SWEEP_LOCK_SECONDS):
        logger.info("scan sweep already running; skipped")
        return 0
    try:
        results = services.pending_scan_sweep(limit=settings.TRAJHUB_SCAN_SWEEP_BATCH)
    finally:
        cache.delete(SWEEP_LOCK)
    if results:
        logger.info("scan sweep scanned %d pending trajectories", len(results))
    return len(results)
