"""Telling listeners (moderation queues its scan, records deletions; caches of public data forget
it) that a trajectory was stored, deleted or may have entered or left `public()`, once the
transaction has committed."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from apps.trajectories.models import Trajectory
from apps.trajectories.signals import (
    public_set_changed,
    redaction_index_stale,
    trajectory_deleted,
    trajectory_stored,
)

logger = logging.getLogger(__name__)


def announce_stored(pk: int, *, created: bool) -> None:
    """Say, once the current transaction commits, that this trajectory was stored (created, or
    its content changed): moderation queues its scan."""
    transaction.on_commit(
        lambda: _send_robust(trajectory_stored, trajectory_id=pk, created=created)
    )


def announce_deleted(
    *, share_id: str, was_public: bool, reason: str, actor_id: int | None, actor_username: str
) -> None:
    """Say, once the current transaction commits, that this trajectory was deleted."""
    transaction.on_commit(
        lambda: _send_robust(
            trajectory_deleted,
            share_id=share_id,
            was_public=was_public,
            reason=reason,
            actor_id=actor_id,
            actor_username=actor_username,
        )
    )


def announce_redaction_index_stale(pk: int) -> None:
    """Say, once the current transaction commits, that this trajectory's redaction index must be
    rebuilt (its title or feedback changed): the trajectories app queues the rebuild (a task:
    with very many redactions it takes seconds). A broker that is down leaves it to the sweep."""
    transaction.on_commit(lambda: _send_robust(redaction_index_stale, trajectory_id=pk))


def announce_public_change(ids: Iterable[int]) -> None:
    """Say, once the current transaction commits, that these trajectories may have entered or
    left `public()` (visibility, review state, redactions, deletion).

    Every service that changes one of those calls it, however it writes (save, a conditional
    `.update()`, a delete): listeners cannot tell such changes apart from model signals, and a
    conditional update sends none. Sent after the commit so that a listener that recomputes
    reads the new state; nothing is sent if the transaction rolls back.
    """
    trajectory_ids = sorted({int(pk) for pk in ids})
    if not trajectory_ids:
        return
    transaction.on_commit(lambda: _send_robust(public_set_changed, trajectory_ids=trajectory_ids))


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
