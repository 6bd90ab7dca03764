"""Moderators' redactions: values the scan missed redacted by hand, and images dropped (their
bytes showed a secret), then the rescan that makes every derived text follow, then the approval
(decisions.moderate). And the other side of an image decision: clearing an image that OCR did
not read, which makes it public (apps/trajectories/image_rule.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from apps.moderation.audit import audit_record, reviewer_kind
from apps.moderation.claims import claim_blocking
from apps.moderation.errors import ModerationError
from apps.moderation.models import IMAGE_PATH, AuditAction, Finding, ManualRedaction
from apps.moderation.services.decisions import ALLOWED_FROM, moderate
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Image, ReviewState, Trajectory
from apps.trajectories.services import announce_public_change, trajectory_search_refresh

if TYPE_CHECKING:
    from apps.accounts.models import User


# Shorter values would blank out ordinary words wherever they appear.
MIN_REDACTION_CHARS = 6


def trajectory_redact_approve(
    *,
    trajectory: Trajectory,
    moderator: User,
    values: Sequence[str] = (),
    note: str = "",
    drop_images: Sequence[str] = (),
) -> Trajectory:
    """Redact values the scan missed (each gets a `<REDACTED_n>` placeholder on every public
    surface, kept across rescans) and drop the images given (sha256: `image_drop`), rescan so
    every derived text follows, then approve."""
    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied("only moderators can review trajectories")
    wanted = list(dict.fromkeys(value.strip() for value in values if value.strip()))
    drops = list(dict.fromkeys(sha.strip() for sha in drop_images if sha.strip()))
    if not wanted and not drops:
        raise ModerationError("give the values to redact or the images to drop")
    short = [value for value in wanted if len(value) < MIN_REDACTION_CHARS]
    if short:
        raise ModerationError(
            f"a value to redact must have at least {MIN_REDACTION_CHARS} characters "
            f"({len(short)} shorter)"
        )
    seen = trajectory.review_state
    if seen not in ALLOWED_FROM[ReviewState.APPROVED]:
        # Checked before anything is written, so a refused action leaves no redaction behind.
        return moderate(
            trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.APPROVED
        )
    known = set(
        Image.objects.filter(
            trajectory_links__trajectory_id=trajectory.pk, sha256__in=drops
        ).values_list("sha256", flat=True)
    )
    if len(known) != len(drops):
        raise ModerationError("this trajectory has no such image")
    for sha in drops:
        try:
            image_drop(trajectory=trajectory, moderator=moderator, sha256=sha, note=note)
        except ModerationError:
            # Dropped meanwhile (by another moderator, in another trajectory): what was wanted.
            if not Image.objects.filter(sha256=sha, dropped_at__isnull=False).exists():
                raise
    existing = set(
        ManualRedaction.objects.filter(trajectory=trajectory).values_list("value", flat=True)
    )
    ManualRedaction.objects.bulk_create(
        ManualRedaction(trajectory=trajectory, value=value, moderator=moderator)
        for value in wanted
        if value not in existing
    )
    trajectory_scan(trajectory=trajectory)
    stored = Trajectory.objects.filter(pk=trajectory.pk).values_list("redactions", flat=True)
    redactions = stored.first() or {}
    if any(value not in redactions for value in wanted):
        # The rescan was stale (the trajectory changed meanwhile): never approve without them.
        raise ModerationError(
            "the trajectory changed while it was being redacted; nothing was approved, try again"
        )
    trajectory.review_state = seen  # decide from what the moderator saw, not from the rescan
    return moderate(
        trajectory=trajectory,
        moderator=moderator,
        note=note,
        to=ReviewState.APPROVED,
        action=AuditAction.REDACTED_APPROVED,
        details={"redacted_values": len(wanted), "dropped_images": len(drops)},
    )


def _moderated_image(trajectory: Trajectory, moderator: User, sha256: str, verb: str) -> Image:
    """The image a moderator acts on: theirs to act on (a moderator, no one else's claim on the
    trajectory) and one of the trajectory's own."""
    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied(f"only moderators can {verb} images")
    blocking = claim_blocking(trajectory=trajectory, moderator=moderator)
    if blocking is not None:
        raise ModerationError(blocking.describe())
    image = Image.objects.filter(
        sha256=sha256, trajectory_links__trajectory_id=trajectory.pk
    ).first()
    if image is None:
        raise ModerationError("this trajectory has no such image")
    return image


def image_drop(*, trajectory: Trajectory, moderator: User, sha256: str, note: str = "") -> Image:
    """Drop an image of `trajectory` (it shows a secret): from now on everyone but the owner and
    moderators gets a placeholder for it, on the page, the image endpoints, the API, every
    export and in releases, and its OCR findings no longer hold the trajectory.

    The drop is on the image, not on the link: images are content-addressed, so the same bytes
    (and the same secret) are dropped in every trajectory that refers to them. Each of those
    lists it in `dropped_images` (what the surfaces read), written here under the row lock so a
    scan finishing at the same moment cannot write an older list over it. Dropping twice is
    refused (nothing to do), so the audit log has one entry per image.
    """
    image = _moderated_image(trajectory, moderator, sha256, "drop")
    with transaction.atomic():
        now = timezone.now()
        if Image.objects.filter(pk=image.pk, dropped_at__isnull=True).update(dropped_at=now) != 1:
            raise ModerationError("that image was dropped already")
        linked = list(
            Trajectory.objects.select_for_update()
            .filter(image_links__image_id=image.pk)
            .order_by("pk")
            .values_list("pk", "dropped_images", "flagged_images")
        )
        for pk, dropped, flagged in linked:
            Trajectory.objects.filter(pk=pk).update(
                dropped_images=sorted({*(dropped or []), image.sha256}),
                flagged_images=sorted(set(flagged or []) - {image.sha256}),
            )
        # Its findings pointed at something no one else can see any more; a rescan skips it.
        Finding.objects.filter(
            trajectory_id__in=[pk for pk, *_ in linked], path=f"{IMAGE_PATH}{image.sha256}"
        ).delete()
        audit_record(
            action=AuditAction.IMAGE_DROPPED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={
                "image": image.sha256,
                "also_in_trajectories": len(linked) - 1,
                "state": trajectory.review_state,
            },
        )
        announce_public_change([pk for pk, *_ in linked])
        _notify_image_dropped([pk for pk, *_ in linked], note)
    for pk, *_ in linked:
        # Search snippets show the search text: the reference goes from there too.
        trajectory_search_refresh(trajectory=Trajectory.objects.get(pk=pk))
    image.dropped_at = now
    trajectory.dropped_images = sorted({*(trajectory.dropped_images or []), image.sha256})
    trajectory.flagged_images = sorted(set(trajectory.flagged_images or []) - {image.sha256})
    return image


def _notify_image_dropped(trajectory_ids: list[int], note: str) -> None:
    """Each trajectory that shows the dropped bytes is told, to its owner (or the anonymous
    sharer's contact email): the image is gone for everyone else, and a key in it should be
    revoked. Each notice names only its own trajectory."""
    from apps.accounts.notices import notice_send

    for trajectory in (
        Trajectory.objects.filter(pk__in=trajectory_ids).select_related("owner").order_by("pk")
    ):
        notice_send(kind="image_dropped", trajectory=trajectory, reason=note)


def image_clear(*, trajectory: Trajectory, moderator: User, sha256: str, note: str = "") -> Image:
    """A moderator looked at an image of `trajectory` that OCR did not read (off or missing) and
    found nothing to hide: it is public from now on, on the site and in releases, wherever the
    trajectory is. Content-addressed like a drop: the same bytes are cleared in every trajectory
    that refers to them, each of which stops listing it in `unchecked_images` (under the row
    lock, as image_drop does). A dropped image cannot be cleared; clearing twice is refused."""
    image = _moderated_image(trajectory, moderator, sha256, "clear")
    if image.dropped_at is not None:
        raise ModerationError("that image was dropped: it stays a placeholder")
    with transaction.atomic():
        now = timezone.now()
        if Image.objects.filter(pk=image.pk, cleared_at__isnull=True).update(cleared_at=now) != 1:
            raise ModerationError("that image was cleared already")
        linked = list(
            Trajectory.objects.select_for_update()
            .filter(image_links__image_id=image.pk)
            .order_by("pk")
            .values_list("pk", "unchecked_images", "flagged_images")
        )
        for pk, unchecked, flagged in linked:
            Trajectory.objects.filter(pk=pk).update(
                unchecked_images=sorted(set(unchecked or []) - {image.sha256}),
                flagged_images=sorted(set(flagged or []) - {image.sha256}),
            )
        audit_record(
            action=AuditAction.IMAGE_CLEARED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={
                "image": image.sha256,
                "ocr_read": bool(image.ocr_version),
                "also_in_trajectories": len(linked) - 1,
            },
        )
        announce_public_change([pk for pk, *_ in linked])
    for pk, *_ in linked:
        # The search text withheld the reference; it may show now.
        trajectory_search_refresh(trajectory=Trajectory.objects.get(pk=pk))
    image.cleared_at = now
    trajectory.unchecked_images = sorted(set(trajectory.unchecked_images or []) - {image.sha256})
    trajectory.flagged_images = sorted(set(trajectory.flagged_images or []) - {image.sha256})
    return image
