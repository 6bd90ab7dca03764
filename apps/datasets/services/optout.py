"""Contributors taking their trajectories out of releases, and putting them back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.datasets.models import OptOut
from apps.datasets.services.removals import release_mark_superseded
from apps.trajectories.models import Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User


@transaction.atomic
def trajectory_take_out(*, trajectory: Trajectory, by: User | None) -> bool:
    """Keep a trajectory out of this and every later release until it is put back. True when
    it was in; safe to repeat."""
    _, created = OptOut.objects.get_or_create(trajectory=trajectory, defaults={"by": by})
    if created:
        # A published release holding it is superseded, as if it had been deleted.
        pk = trajectory.pk
        transaction.on_commit(lambda: release_mark_superseded(trajectory_ids=[pk]))
    return created


@transaction.atomic
def trajectory_put_back(*, trajectory: Trajectory) -> bool:
    """Let a trajectory that was taken out go into releases again (from the next one built)."""
    deleted, _ = OptOut.objects.filter(trajectory=trajectory).delete()
    return deleted > 0
