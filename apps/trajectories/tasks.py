"""Celery tasks of the trajectories app: thin wrappers around the services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from apps.trajectories import services

logger = logging.getLogger(__name__)

ORPHAN_SWEEP_LOCK = "trajectories:orphan-sweep:lock"
# Longer than a sweep can take, so that a crashed worker's lock expires on its own.
ORPHAN_SWEEP_LOCK_SECONDS = 30 * 60


@shared_task(name="apps.trajectories.tasks.orphan_sweep")
def orphan_sweep() -> int:
    """Periodic: delete stored files no row refers to (left by a killed ingest) after the grace
    period. One sweep at a time; each is bounded by TRAJHUB_ORPHAN_SWEEP_BATCH deletions."""
    if not cache.add(ORPHAN_SWEEP_LOCK, "1", timeout=ORPHAN_SWEEP_LOCK_SECONDS):
        logger.info("orphan sweep already running; skipped")
        return 0
    try:
        result = services.storage_orphan_sweep(
            older_than_seconds=settings.TRAJHUB_ORPHAN_GRACE_SECONDS,
            limit=settings.TRAJHUB_ORPHAN_SWEEP_BATCH,
        )
    finally:
        cache.delete(ORPHAN_SWEEP_LOCK)
    if result.deleted:
        logger.info("orphan sweep deleted %d of %d old files", len(result.deleted), result.checked)
    return len(result.deleted)


REDACTION_INDEX_SWEEP_LOCK = "trajectories:redaction-index-sweep:lock"


@shared_task(name="apps.trajectories.tasks.redaction_index_refresh")
def redaction_index_refresh(trajectory_id: int) -> bool:
    """Rebuild one trajectory's redaction index after an edit (services/redaction_index.py)."""
    return services.trajectory_redaction_index_refresh(trajectory_id=trajectory_id)


@shared_task(name="apps.trajectories.tasks.redaction_index_sweep")
def redaction_index_sweep() -> int:
    """Periodic: index TRAJHUB_REDACTION_INDEX_SWEEP_BATCH trajectories whose index is not
    current (stored before the index existed, or a lost refresh). One sweep at a time."""
    if not cache.add(REDACTION_INDEX_SWEEP_LOCK, "1", timeout=ORPHAN_SWEEP_LOCK_SECONDS):
        logger.info("redaction index sweep already running; skipped")
        return 0
    try:
        return services.redaction_index_sweep(limit=settings.TRAJHUB_REDACTION_INDEX_SWEEP_BATCH)
    finally:
        cache.delete(REDACTION_INDEX_SWEEP_LOCK)
