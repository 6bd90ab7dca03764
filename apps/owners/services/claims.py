"""Claiming an anonymous share into an account with its link and deletion password."""

from __future__ import annotations

import re

from django.db import transaction

from apps.accounts.models import User
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_by_password

_SHARE_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])")


class ClaimRefused(Exception):
    """The link and password do not open an anonymous share (or it was claimed meanwhile)."""


def share_id_from_link(link: str) -> str:
    """The share id in what was pasted: a /t/<id>/ link, a /share?share_id= link, or the id."""
    match = _SHARE_ID.search((link or "").strip().lower())
    return match.group(1) if match else ""


@transaction.atomic
def trajectory_claim(*, user: User, link: str, password: str, client: str) -> Trajectory:
    """Make the anonymous share behind `link` the user's, proven by one of its passwords.

    From then on its passwords open nothing (services.passwords checks only ownerless shares),
    and its contact email is forgotten: the account gets its notices now. Wrong passwords count
    in the same per-address limit as the unlock page and the API (RateLimited past it).
    Raises ClaimRefused with the same message for an unknown id and a wrong password.
    """
    share_id = share_id_from_link(link)
    trajectory = trajectory_by_password(
        share_id=share_id, password=password, client=f"claim-user:{user.pk}"
    )
    if trajectory is None:
        raise ClaimRefused("this link and password do not open an anonymous share")
    # Conditional: of two claims at once (two accounts with the password), exactly one wins.
    claimed = Trajectory.objects.filter(pk=trajectory.pk, owner__isnull=True).update(
        owner=user, deletion_password_hashes=[], contact_email=""
    )
    if claimed != 1:
        raise ClaimRefused("this link and password do not open an anonymous share")
    trajectory.refresh_from_db()
    return trajectory
