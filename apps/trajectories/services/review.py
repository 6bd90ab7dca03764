"""What a change of a stored trajectory does to its review: whether it goes back through the
scan before anyone else sees it, and the first time it is in public() (ingest and the owner's
edits both ask)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.trajectories.models import ReviewState, Trajectory, Visibility


def note_published(trajectory: Trajectory) -> None:
    """Record the first time a trajectory is in public() (made public after its approval; the
    scan and moderators record it when they approve a public one): from then on its events
    prove nothing about who shares them (services/dedup.py)."""
    if trajectory.published_at is None and trajectory.is_public:
        now = timezone.now()
        if (
            Trajectory.objects.filter(pk=trajectory.pk, published_at__isnull=True).update(
                published_at=now
            )
            == 1
        ):
            trajectory.published_at = now


def needs_rescan(trajectory: Trajectory, fields: dict[str, Any]) -> bool:
    """Whether a change must go back through the scan before anyone else sees it.

    New text (title, feedback) has not been scanned; a trajectory made public under
    pre-moderation must be held. Rejected and hidden ones stay as the moderator left them.
    """
    if trajectory.review_state in (ReviewState.REJECTED, ReviewState.HIDDEN, ReviewState.PENDING):
        return False
    stored: Mapping[str, Any] = (
        Trajectory.objects.filter(pk=trajectory.pk)
        .values("title", "feedback_text", "visibility")
        .first()
        or {}
    )
    for name in ("title", "feedback_text"):
        if name in fields and fields[name] != stored.get(name):
            return True
    made_public = (
        fields.get("visibility") == Visibility.PUBLIC
        and stored.get("visibility") != Visibility.PUBLIC
    )
    return made_public and bool(settings.TRAJHUB_PREMODERATION)
