"""Celery tasks of the release app: thin wrappers around the services."""

from __future__ import annotations

import logging
import socket

from celery import Task, shared_task
from django.conf import settings

from apps.datasets import services
from apps.datasets.models import ReleaseShard

logger = logging.getLogger(__name__)


@shared_task(
    name="apps.datasets.tasks.release_run",
    soft_time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT,
    time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT + 300,
    # A killed build must not be retried as it is: the next scheduled run fails it and starts
    # anew. acks_late would hand the same message to another worker after a crash.
    acks_late=False,
)
def release_run() -> str:
    """Periodic (beat): build, announce or publish whatever release is due."""
    result = services.release_run()
    logger.info("release run: %s", result.message)
    return result.action


@shared_task(
    name="apps.datasets.tasks.release_removals",
    soft_time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT,
    time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT + 300,
    acks_late=False,
)
def release_removals() -> str:
    """Queued (debounced) when a trajectory of a published release was deleted or left
    public(): the removal-only release. Another build holding the lock: try again later."""
    services.release_removals_started()
    result = services.release_run(removals_only=True)
    logger.info("release removals: %s", result.message)
    if result.action == "busy":
        services.release_queue_removal_build()
    return result.action


@shared_task(
    bind=True,
    name="apps.datasets.tasks.release_shard",
    soft_time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT,
    time_limit=settings.TRAJHUB_RELEASE_TIME_LIMIT + 300,
    acks_late=False,
)
def release_shard(self: Task, shard_id: int) -> str | None:
    """Build one shard of a release split across workers; the last one publishes."""
    shard = ReleaseShard.objects.select_related("release").filter(pk=shard_id).first()
    if shard is None:
        return None
    worker = self.request.hostname or socket.gethostname()
    return services.release_shard_build(shard=shard, worker=worker)
