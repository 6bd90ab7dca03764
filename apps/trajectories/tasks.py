"""Celery tasks of the trajectories app: thin wrappers around the services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from apps.core.locks import Lease
from apps.trajectories import services

logger = logging.getLogger(__name__)

ORPHAN_SWEEP_LOCK = "trajectories:orphan-sweep:lock"
REDACTION_INDEX_SWEEP_LOCK = "trajectories:redaction-index-sweep:lock"
# The sweeps' leases are renewed while they run: a killed worker's lease is free this soon.
SWEEP_LEASE_SECONDS = 60


@shared_task(name="apps.trajectories.tasks.orphan_sweep")
def orphan_sweep() -> int:
    """Periodic: delete stored files no row refers to (left by a killed ingest) after the grace
    period. One sweep at a time; each is bounded by TRAJHUB_ORPHAN_SWEEP_BATCH deletions."""
    with Lease(ORPHAN_SWEEP_LOCK, SWEEP_LEASE_SECONDS) as held:
        if not held:
            logger.info("orphan sweep already running; skipped")
            return 0
        result = services.storage_orphan_sweep(
            older_than_seconds=settings.TRAJHUB_ORPHAN_GRACE_SECONDS,
            limit=settings.TRAJHUB_ORPHAN_SWEEP_BATCH,
        )
    if result.deleted:
        logger.info("orphan sweep deleted %d of %d old files", len(result.deleted), result.checked)
    return len(result.deleted)


@shared_task(name="apps.trajectories.tasks.redaction_index_refresh")
def redaction_index_refresh(trajectory_id: int) -> bool:
    """Rebuild one trajectory's redaction index after an edit (services/redaction_index.py)."""
    return services.trajectory_redaction_index_refresh(trajectory_id=trajectory_id)


@shared_task(name="apps.trajectories.tasks.redaction_index_sweep")
def redaction_index_sweep() -> int:
    """Periodic: index TRAJHUB_REDACTION_INDEX_SWEEP_BATCH trajectories whose index is not
    current (stored before the index existed, or a lost refresh). One sweep at a time."""
    with Lease(REDACTION_INDEX_SWEEP_LOCK, SWEEP_LEASE_SECONDS) as held:
        if not held:
            logger.info("redaction index sweep already running; skipped")
            return 0
        return services.redaction_index_sweep(limit=settings.TRAJHUB_REDACTION_INDEX_SWEEP_BATCH)
