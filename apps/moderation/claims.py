"""Claims: a moderator takes a queue item so that two do not work on the same one.

A claim expires after TRAJHUB_CLAIM_SECONDS (a moderator who walks away does not lock an item
for ever) and is released by the claimant's decision. Taking one is a conditional write: the
unique row per trajectory decides which of two moderators gets it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.moderation.errors import ModerationError
from apps.moderation.models import Claim

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.trajectories.models import Trajectory


def claim_take(*, trajectory: Trajectory, moderator: User) -> Claim:
    """Claim (or renew one's own claim on) a trajectory; refused while another's claim runs."""
    now = timezone.now()
    expires = now + timedelta(seconds=settings.TRAJHUB_CLAIM_SECONDS)
    taken = Claim.objects.filter(
        Q(moderator=moderator) | Q(expires_at__lte=now), trajectory=trajectory
    ).update(moderator=moderator, claimed_at=now, expires_at=expires)
    if not taken:
        try:
            with transaction.atomic():
                Claim.objects.create(
                    trajectory=trajectory, moderator=moderator, claimed_at=now, expires_at=expires
                )
        except IntegrityError:
            current = Claim.objects.select_related("moderator").get(trajectory=trajectory)
            raise ModerationError(current.describe()) from None
    return Claim.objects.select_related("moderator").get(trajectory=trajectory)


def claim_release(*, trajectory: Trajectory, moderator: User) -> bool:
    """Give up one's claim (a decision does it). Another's claim is left alone."""
    deleted, _ = Claim.objects.filter(trajectory=trajectory, moderator=moderator).delete()
    return bool(deleted)


def claim_blocking(*, trajectory: Trajectory, moderator: User) -> Claim | None:
    """Another moderator's running claim on this trajectory, if any."""
    return (
        Claim.objects.select_related("moderator")
        .filter(trajectory=trajectory, expires_at__gt=timezone.now())
        .exclude(moderator=moderator)
        .first()
    )
