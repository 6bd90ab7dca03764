"""Reads of stars: whether a user starred a trajectory, and the week's most starred."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone

from apps.accounts.models import User
from apps.stars.models import Star
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.site import LIST_FIELDS


def starred(user: User | None, trajectory: Trajectory) -> bool:
    if user is None or not user.is_authenticated:
        return False
    return Star.objects.filter(user=user, trajectory=trajectory).exists()


def most_starred_this_week(*, limit: int = 6) -> list[Trajectory]:
    """The public trajectories starred most in the last seven days (ties: the newer first),
    each with `week_stars`. Only public() ones: a star on a share made private since counts
    for no list."""
    since = timezone.now() - timedelta(days=7)
    return list(
        Trajectory.objects.listed()
        .only(*LIST_FIELDS)
        .annotate(week_stars=Count("stars", filter=Q(stars__created_at__gte=since)))
        .filter(week_stars__gt=0)
        .order_by("-week_stars", "-created_at", "-id")[:limit]
    )
