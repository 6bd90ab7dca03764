"""Contributors taking their trajectories out of releases, and putting them back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.core import signing
from apps.datasets.models import OptOut, Release, ReleaseStatus
from apps.trajectories.models import Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User

LINK_SALT = "trajhub.datasets.optout-link"
EMAIL_PURPOSE = "trajhub.datasets.email"


def email_digest(email: str) -> str:
    """An HMAC of an address: the opt-out link names it without carrying the address."""
    # sha1: the links mailed before issue 21 carry sha1 digests.
    return signing.digest(EMAIL_PURPOSE, signing.canonical_email(email), algorithm="sha1")


def optout_token(*, release: Release, email: str) -> str:
    """The signed part of the link an anonymous contributor gets with the announcement."""
    return signing.link_token(LINK_SALT, {"r": release.pk, "e": email_digest(email)})


def optout_token_read(token: str) -> tuple[Release, str] | None:
    """(announced release, address digest) of a valid token whose release is still open."""
    try:
        data = signing.link_payload(LINK_SALT, token, expect=dict)
    except signing.BadLink:
        return None
    if not isinstance(data.get("e"), str):
        return None
    if not isinstance(data.get("r"), int):
        return None
    release = Release.objects.filter(pk=data["r"], status=ReleaseStatus.ANNOUNCED).first()
    if release is None:
        return None
    return release, data["e"]


@transaction.atomic
def trajectory_take_out(*, trajectory: Trajectory, by: User | None) -> bool:
    """Keep a trajectory out of this and every later release until it is put back. True when
    it was in; safe to repeat."""
    _, created = OptOut.objects.get_or_create(trajectory=trajectory, defaults={"by": by})
    if created:
        # A published release holding it is superseded, as if it had been deleted.
        from apps.datasets.services.changes import release_mark_superseded

        pk = trajectory.pk
        transaction.on_commit(lambda: release_mark_superseded(trajectory_ids=[pk]))
    return created


@transaction.atomic
def trajectory_put_back(*, trajectory: Trajectory) -> bool:
    """Let a trajectory that was taken out go into releases again (from the next one built)."""
    deleted, _ = OptOut.objects.filter(trajectory=trajectory).delete()
    return deleted > 0
