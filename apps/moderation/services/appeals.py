"""Appeals: a second look at a rejection, asked through the signed link of the rejection
notice (links.appeal_url); it returns the trajectory to the queue with the contributor's words.
An approval grants the open appeal (decisions); a moderator may uphold the rejection instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.moderation.audit import audit_record, reviewer_kind
from apps.moderation.errors import ModerationError
from apps.moderation.models import ActorKind, Appeal, AuditAction
from apps.moderation.services.decisions import appeals_resolve
from apps.moderation.services.limits import TEXT_LIMIT
from apps.trajectories.models import ReviewState, Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User

# Appeals per trajectory, ever: a second look, not a channel for endless requests.
MAX_APPEALS = 3


def appeal_submit(*, trajectory: Trajectory, text: str) -> Appeal:
    """Ask for a second look at a rejection: back to the queue with these words."""
    text = text.strip()
    if not text:
        raise ModerationError("say why it should be published after all")
    with transaction.atomic():
        locked = Trajectory.objects.select_for_update().filter(pk=trajectory.pk).first()
        if locked is None or locked.review_state != ReviewState.REJECTED:
            raise ModerationError("only a rejected trajectory can be appealed")
        appeals = Appeal.objects.filter(trajectory=trajectory)
        if appeals.filter(resolved_at__isnull=True).exists():
            raise ModerationError("a second look is already asked for; a moderator will answer")
        if appeals.count() >= MAX_APPEALS:
            raise ModerationError("this trajectory has been looked at again already")
        appeal = Appeal.objects.create(trajectory=trajectory, text=text[:TEXT_LIMIT])
        audit_record(
            action=AuditAction.APPEALED,
            share_id=trajectory.share_id,
            actor_kind=ActorKind.OWNER if trajectory.owner_id else ActorKind.HOLDER,
            actor=trajectory.owner,
            reason=text[:500],
        )
    return appeal


def appeal_decline(*, trajectory: Trajectory, moderator: User, note: str) -> None:
    """Uphold the rejection after a second look; the contributor is told why."""
    if not getattr(moderator, "is_moderator", False):
        raise ModerationError("only moderators can answer appeals")
    with transaction.atomic():
        if not appeals_resolve(trajectory=trajectory, resolution="declined"):
            raise ModerationError("no open appeal on this trajectory")
        audit_record(
            action=AuditAction.APPEAL_DECLINED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
        )
        from apps.accounts.notices import notice_send

        notice_send(kind="rejected", trajectory=trajectory, reason=note)
