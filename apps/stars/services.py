"""Giving and taking back a star. Only on a trajectory the user may see (`visible_to`): a star
on someone else's private share would confirm that it exists."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F

from apps.accounts.models import User
from apps.core.ratelimit import RateLimited, hit
from apps.stars.models import Star
from apps.trajectories.models import Trajectory

# Stars given or taken back per account and hour: a person clicks a few; a script, thousands.
LIMIT_PER_HOUR = 300


@dataclass(frozen=True)
class StarState:
    starred: bool
    stars: int


def star_set(*, user: User, trajectory: Trajectory, starred: bool) -> StarState:
    """Star (or unstar) `trajectory` for `user`; doing it twice changes nothing."""
    verdict = hit("star", str(user.pk), LIMIT_PER_HOUR, 3600)
    if not verdict.allowed:
        raise RateLimited(
            "too many stars given or taken back in an hour", retry_after=verdict.retry_after
        )
    with transaction.atomic():
        if starred:
            try:
                with transaction.atomic():
                    Star.objects.create(user=user, trajectory=trajectory)
            except IntegrityError:
                pass  # already starred
            else:
                Trajectory.objects.filter(pk=trajectory.pk).update(star_count=F("star_count") + 1)
        else:
            # The post_delete receiver takes one off the count for each star removed.
            for star in Star.objects.filter(user=user, trajectory=trajectory):
                star.delete()
    count = Trajectory.objects.filter(pk=trajectory.pk).values_list("star_count", flat=True)
    return StarState(starred=starred, stars=count.first() or 0)
