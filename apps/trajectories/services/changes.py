"""Changes after a trajectory is stored: what the owner may update, and deletion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.trajectories.models import (
    Polarity,
    ReviewState,
    Tombstone,
    Trajectory,
    TrajectoryImage,
    Visibility,
)
from apps.trajectories.services.cleaning import NUL_REPLACEMENT
from apps.trajectories.services.errors import InvalidShare
from apps.trajectories.services.notify import (
    _on_commit_stored,
    _send_robust,
    announce_public_change,
)
from apps.trajectories.services.search import trajectory_search_refresh
from apps.trajectories.services.storage import _delete_orphan_images, _delete_quietly, _storage
from apps.trajectories.signals import trajectory_deleted

UPDATABLE = ("visibility", "title", "polarity", "feedback_text", "license_agreed", "license")


@transaction.atomic
def trajectory_update(*, trajectory: Trajectory, **fields: Any) -> Trajectory:
    """Change what the owner may change: visibility, title, polarity, feedback text, licence.

    Making a trajectory public needs the site's licence agreed (now or before).
    """
    unknown = set(fields) - set(UPDATABLE)
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidShare(f"'{name}' cannot be changed", name)
    changed: list[str] = []
    agreed = bool(fields.pop("license_agreed", False)) or bool(fields.pop("license", False))
    if agreed and not trajectory.license:
        trajectory.license = settings.TRAJHUB_LICENSE
        changed.append("license")
    if "visibility" in fields:
        visibility = fields["visibility"]
        if visibility not in Visibility.values:
            raise InvalidShare(
                f"visibility must be one of {', '.join(Visibility.values)}", "visibility"
            )
        if visibility == Visibility.PUBLIC and not trajectory.license:
            raise InvalidShare(
                f"a public trajectory must agree to the site's licence "
                f"({settings.TRAJHUB_LICENSE}): send license_agreed=true",
                "license_agreed",
            )
        trajectory.visibility = visibility
        changed.append("visibility")
    if "polarity" in fields:
        polarity = fields["polarity"] or Polarity.NONE
        if polarity not in Polarity.values:
            raise InvalidShare(f"polarity must be one of {', '.join(Polarity.values)}", "polarity")
        trajectory.polarity = polarity
        changed.append("polarity")
    if "title" in fields:
        title = str(fields["title"] or "").replace("\x00", NUL_REPLACEMENT)
        if len(title) > 300:
            raise InvalidShare("title is longer than 300 characters", "title")
        trajectory.title = title
        changed.append("title")
    if "feedback_text" in fields:
        trajectory.feedback_text = str(fields["feedback_text"] or "").replace(
            "\x00", NUL_REPLACEMENT
        )
        changed.append("feedback_text")
    if changed:
        rescan = _needs_rescan(trajectory, {name: getattr(trajectory, name) for name in changed})
        if rescan:
            trajectory.review_state = ReviewState.PENDING
            changed.append("review_state")
        if "title" in changed or "feedback_text" in changed:
            # The index's own entries were gathered from the old text: not read until rebuilt
            # (pages read the full map meanwhile), and found by the sweep should the task be lost.
            trajectory.indexed_at = None
            changed.append("indexed_at")
        trajectory.save(update_fields=[*changed, "updated_at"])
        _note_published(trajectory)
        if "title" in changed:
            trajectory_search_refresh(trajectory=trajectory)
        if "indexed_at" in changed:
            # By a task: with very many redactions the rebuild takes seconds.
            _refresh_redaction_index_later(trajectory.pk)
        if rescan:
            _on_commit_stored(trajectory.pk, created=False)
        if "visibility" in changed or "review_state" in changed:
            announce_public_change([trajectory.pk])
    return trajectory


def _refresh_redaction_index_later(pk: int) -> None:
    from apps.trajectories.tasks import redaction_index_refresh

    # robust: the edit is committed; a broker that is down leaves the index to the sweep.
    transaction.on_commit(lambda: redaction_index_refresh.delay(pk), robust=True)


def _note_published(trajectory: Trajectory) -> None:
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


def _needs_rescan(trajectory: Trajectory, fields: dict[str, Any]) -> bool:
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


@transaction.atomic
def trajectory_delete(
    *, trajectory: Trajectory, reason: str = "owner", actor: Any = None
) -> Tombstone:
    """Delete a trajectory with its events, raw upload and images nobody else uses; keep a tombstone.

    `reason` says who deleted it, for the tombstone and the audit log: "owner", "staff",
    "password" (the anonymous holder), "email" (someone following an email deletion link),
    "account" (its account was deleted). `actor` is the signed-in account that did it, if any.
    """
    share_id = trajectory.share_id
    actor_id = getattr(actor, "pk", None)
    actor_username = actor.get_username() if actor_id is not None else ""
    was_public = trajectory.is_public
    raw_path = trajectory.raw_path
    tombstone, _ = Tombstone.objects.get_or_create(
        share_id=share_id, defaults={"was_public": was_public, "reason": reason[:40]}
    )
    image_ids = list(
        TrajectoryImage.objects.filter(trajectory=trajectory).values_list("image_id", flat=True)
    )
    pk = trajectory.pk
    Trajectory.objects.filter(pk=pk).delete()
    announce_public_change([pk])
    _delete_orphan_images(image_ids)
    if raw_path:
        transaction.on_commit(lambda: _delete_quietly(_storage(), raw_path))
    transaction.on_commit(
        lambda: _send_robust(
            trajectory_deleted,
            share_id=share_id,
            was_public=was_public,
            reason=reason,
            actor_id=actor_id,
            actor_username=actor_username,
        )
    )
    return tombstone
