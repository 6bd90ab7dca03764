"""Telling listeners (moderation queues its scan, records deletions) that a trajectory was stored
or deleted, once the transaction has committed."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from apps.trajectories.models import Trajectory
from apps.trajectories.signals import trajectory_stored

logger = logging.getLogger(__name__)


def _on_commit_stored(pk: int, *, created: bool) -> None:
    transaction.on_commit(
        lambda: _send_robust(trajectory_stored, trajectory_id=pk, created=created)
    )


def _send_robust(signal: Signal, **kwargs: Any) -> None:
    """Tell listeners, after the commit. A failing listener (say, a broker that is down when the
    scan is queued) must not turn a stored trajectory into an error answer: it is logged, and
    the periodic scan sweep picks the trajectory up."""
    for receiver, result in signal.send_robust(sender=Trajectory, **kwargs):
        if isinstance(result, Exception):
            logger.error(
                "a %s listener failed: %s",
                getattr(receiver, "__name__", receiver),
                result,
                exc_info=result,
            )
