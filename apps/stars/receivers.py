"""Signal receivers of stars (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from apps.trajectories.models import Trajectory


def star_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    # Every removal goes through here (a user taking a star back, an account deleted with its
    # stars), so the count cannot drift; GREATEST-like guard: never below zero.
    Trajectory.objects.filter(pk=instance.trajectory_id, star_count__gt=0).update(
        star_count=F("star_count") - 1
    )
