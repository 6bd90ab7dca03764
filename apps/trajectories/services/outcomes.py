"""The stored outcome of a trajectory (outcome.stored_verdict): the columns ingest and re-import
write from the format's result, and the owner's "it worked" / "it did not" where the format
records none."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.trajectories.models import Trajectory
from apps.trajectories.outcome import (
    RESOLVED,
    SOURCE_LABELS,
    UNRESOLVED,
    format_verdict,
    stored_verdict,
)
from apps.trajectories.services.errors import InvalidShare

# What the owner may say: "resolved" (it worked), "unresolved" (it did not), "" (take it back).
OWNER_CHOICES = (RESOLVED, UNRESOLVED, "")


def outcome_columns(*, metadata: Any, source_format: str, owner_outcome: str) -> dict[str, Any]:
    """Trajectory's outcome, outcome_score and outcome_source for this metadata."""
    return stored_verdict(metadata, source_format, owner_outcome).columns()


@transaction.atomic
def trajectory_outcome_set(*, trajectory: Trajectory, outcome: str | None) -> Trajectory:
    """The owner's word on how the run went ("resolved", "unresolved"; "" or None clears it).

    Refused where the format records an outcome of its own (an evaluation report, a score, a
    verifier's reward): that one is what the run came to, and it wins."""
    outcome = outcome or ""
    if outcome not in OWNER_CHOICES:
        raise InvalidShare("outcome must be resolved, unresolved or empty (to clear it)", "outcome")
    row = (
        Trajectory.objects.select_for_update()
        .only("pk", "metadata", "source_format", "owner_outcome")
        .get(pk=trajectory.pk)
    )
    own = format_verdict(row.metadata, row.source_format)
    if own.known:
        raise InvalidShare(
            f"this trajectory's outcome comes from its {SOURCE_LABELS[own.source]} "
            f"({own.outcome}); it cannot be set by hand",
            "outcome",
        )
    columns = outcome_columns(
        metadata=row.metadata, source_format=row.source_format, owner_outcome=outcome
    )
    Trajectory.objects.filter(pk=row.pk).update(owner_outcome=outcome, **columns)
    trajectory.owner_outcome = outcome
    for name, value in columns.items():
        setattr(trajectory, name, value)
    return trajectory
