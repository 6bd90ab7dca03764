"""Edits of a stored trajectory: what the owner may update, and deletion (by its owner,
staff, the password holder, an email link, an account's erasure)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from apps.trajectories.models import (
    Polarity,
    ReviewState,
    Tombstone,
    Trajectory,
    TrajectoryImage,
    Visibility,
)
from apps.trajectories.services.errors import InvalidShare, license_not_agreed
from apps.trajectories.services.events import NUL_REPLACEMENT
from apps.trajectories.services.notify import (
    announce_deleted,
    announce_public_change,
    announce_redaction_index_stale,
    announce_stored,
)
from apps.trajectories.services.outcomes import trajectory_outcome_set
from apps.trajectories.services.review import needs_rescan, note_published
from apps.trajectories.services.storage import delete_on_commit, delete_orphans

UPDATABLE = (
    "visibility",
    "title",
    "polarity",
    "feedback_text",
    "license_agreed",
    "license",
    "outcome",
)


@transaction.atomic
def trajectory_update(*, trajectory: Trajectory, **fields: Any) -> Trajectory:
    """Change what the owner may change: visibility, title, polarity, feedback text, licence,
    and the outcome where the format records none (services/outcomes.py).

    Making a trajectory public needs the site's licence agreed (now or before).
    """
    unknown = set(fields) - set(UPDATABLE)
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidShare(f"'{name}' cannot be changed", name)
    if "outcome" in fields:
        # First: refused (a format's own outcome wins), nothing else of the change is stored.
        trajectory_outcome_set(trajectory=trajectory, outcome=fields.pop("outcome"))
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
            raise license_not_agreed()
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
        rescan = needs_rescan(trajectory, {name: getattr(trajectory, name) for name in changed})
        if rescan:
            trajectory.review_state = ReviewState.PENDING
            changed.append("review_state")
        if "title" in changed:
            # The new title is unscanned: its search text is built by the scan that follows,
            # from the redacted view (services/search.py); until then no search finds it.
            trajectory.search_text, trajectory.search_vector = "", None
            changed += ["search_text", "search_vector"]
        if "title" in changed or "feedback_text" in changed:
            # The index's own entries were gathered from the old text: not read until rebuilt
            # (pages read the full map meanwhile), and found by the sweep should the task be lost.
            trajectory.indexed_at = None
            changed.append("indexed_at")
        trajectory.save(update_fields=[*changed, "updated_at"])
        note_published(trajectory)
        if "indexed_at" in changed:
            # By a task: with very many redactions the rebuild takes seconds.
            announce_redaction_index_stale(trajectory.pk)
        if rescan or "title" in changed:
            # A rejected or hidden one is scanned too (its state stays): the scan builds the
            # search text.
            announce_stored(trajectory.pk, created=False)
        if "visibility" in changed or "review_state" in changed:
            announce_public_change([trajectory.pk])
    return trajectory


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
    delete_orphans(image_ids)
    if raw_path:
        delete_on_commit(raw_path)
    announce_deleted(
        share_id=share_id,
        was_public=was_public,
        reason=reason,
        actor_id=actor_id,
        actor_username=actor_username,
    )
    return tombstone
