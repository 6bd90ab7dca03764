"""The dashboard's writes: one or many of the owner's trajectories made public or private, or
deleted. Each goes through the trajectory services (trajectory_update rescans changed text,
trajectory_delete leaves the tombstone), so the dashboard adds no rule of its own."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from apps.accounts.models import User
from apps.trajectories.models import Trajectory, Visibility
from apps.trajectories.services import InvalidShare, trajectory_delete, trajectory_update

BULK_ACTIONS = {
    "make_public": "Make public",
    "make_private": "Make private",
    "delete": "Delete",
}


@dataclass(frozen=True)
class BulkResult:
    action: str
    count: int


@transaction.atomic
def trajectories_bulk_change(
    *,
    user: User,
    trajectories: Iterable[Trajectory],
    action: str,
    license_agreed: bool = False,
) -> BulkResult:
    """Apply `action` to each of the user's `trajectories`, all or none.

    Making public needs the site's licence agreed (now, or when each was made public before):
    one trajectory that lacks it stops the whole change with InvalidShare, nothing changed.
    """
    if action not in BULK_ACTIONS:
        raise InvalidShare(f"unknown action '{action}'", "action")
    count = 0
    for trajectory in trajectories:
        if trajectory.owner_id != user.pk:
            # The selector already keeps others' out; this keeps a careless caller honest.
            raise InvalidShare("not your trajectory", "ids")
        if action == "delete":
            trajectory_delete(trajectory=trajectory, reason="owner", actor=user)
        elif action == "make_public":
            trajectory_update(
                trajectory=trajectory, visibility=Visibility.PUBLIC, license_agreed=license_agreed
            )
        else:
            trajectory_update(trajectory=trajectory, visibility=Visibility.PRIVATE)
        count += 1
    return BulkResult(action=action, count=count)
