"""Moderation reads."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import QuerySet
from django.utils import timezone

from apps.trajectories.models import ReviewState, Trajectory


def trajectories_pending_scan(
    *, older_than_seconds: float = 60, limit: int | None = None
) -> QuerySet[Trajectory]:
    """Pending trajectories whose last change is at least `older_than_seconds` old, oldest first.

    The age leaves the on-commit scan time to run first; the sweep only catches lost ones.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    queryset = Trajectory.objects.filter(
        review_state=ReviewState.PENDING, updated_at__lte=cutoff
    ).order_by("updated_at", "id")
    return queryset[:limit] if limit is not None else queryset
