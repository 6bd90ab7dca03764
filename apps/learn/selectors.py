"""Reads for synthesis, exports and retrieval. Visibility comes from Trajectory.objects.public(),
and text from the same selectors and redaction the public pages use (never raw event text)."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.learn.models import Example, ExampleState
from apps.trajectories import selectors as trajectory_selectors
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors import EventView


def trajectories_to_synthesize(
    *, limit: int | None = None, trajectory_id: int | None = None
) -> QuerySet[Trajectory]:
    """Approved public trajectories, oldest first (a run with --limit N takes the same N)."""
    qs = Trajectory.objects.public().order_by("id")
    if trajectory_id is not None:
        qs = qs.filter(pk=trajectory_id)
    if limit is not None:
        qs = qs[:limit]
    return qs


def public_events(trajectory: Trajectory) -> list[EventView]:
    """The trajectory's events exactly as an anonymous visitor gets them (redacted)."""
    redact = trajectory_selectors.redactor_for(trajectory, None)
    return [
        trajectory_selectors.event_view(event, redact)
        for event in trajectory_selectors.event_queryset(trajectory).iterator(chunk_size=1000)
    ]


def examples_public() -> QuerySet[Example]:
    """Kept examples whose trajectory is in public() right now: what exports and /retrieve serve."""
    return Example.objects.filter(
        state=ExampleState.KEPT, trajectory__in=Trajectory.objects.public()
    )
