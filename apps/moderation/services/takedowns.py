"""Takedown requests: a request is stored unconfirmed and a signed link is mailed to the
requester; once confirmed it waits in the queue; a moderator grants it (the trajectory is
hidden, or rejected if it was not approved: decisions.moderate) or declines it, and the outcome
is mailed back.

Email addresses never reach logs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from apps.moderation.audit import audit_record, reviewer_kind
from apps.moderation.errors import ModerationError
from apps.moderation.models import ActorKind, AuditAction, TakedownRequest, TakedownState
from apps.moderation.services.decisions import moderate
from apps.moderation.services.limits import (
    TEXT_LIMIT,
    count_submission,
    count_takedown_recipient,
)
from apps.moderation.services.mail import takedown_mail_after_commit
from apps.trajectories.models import ReviewState, Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User


def takedown_request(
    *, trajectory: Trajectory, email: str, text: str, client_ip: str = ""
) -> TakedownRequest:
    """Store a takedown request and mail the requester a signed confirmation link."""
    if not email:
        raise ModerationError("an email address is needed to confirm the request")
    if not text.strip():
        raise ModerationError("say what in the trajectory is yours (which personal data)")
    count_submission(client_ip)
    count_takedown_recipient(email)
    request = TakedownRequest.objects.create(
        trajectory=trajectory, email=email, text=text[:TEXT_LIMIT]
    )
    takedown_mail_after_commit(request.pk, "confirm")
    return request


def takedown_confirm(*, request: TakedownRequest) -> bool:
    """The requester followed the link: the request goes to the queue (once)."""
    with transaction.atomic():
        confirmed = (
            TakedownRequest.objects.filter(pk=request.pk, state=TakedownState.UNCONFIRMED).update(
                state=TakedownState.OPEN, confirmed_at=timezone.now()
            )
            == 1
        )
        if confirmed:
            audit_record(
                action=AuditAction.TAKEDOWN_REQUESTED,
                share_id=request.trajectory.share_id,
                actor_kind=ActorKind.TAKEDOWN,
                reason=request.text[:500],
            )
    return confirmed


def takedown_decide(
    *, request: TakedownRequest, moderator: User, grant: bool, note: str = ""
) -> TakedownRequest:
    """Grant (the trajectory leaves every public surface: hidden if it was approved, else
    rejected; its owner is told) or decline a confirmed request; the outcome is mailed back."""
    if not getattr(moderator, "is_moderator", False):
        raise ModerationError("only moderators can decide takedown requests")
    trajectory = request.trajectory
    with transaction.atomic():
        state = TakedownState.GRANTED if grant else TakedownState.DECLINED
        decided = (
            TakedownRequest.objects.filter(pk=request.pk, state=TakedownState.OPEN).update(
                state=state, decided_at=timezone.now(), decision_note=note
            )
            == 1
        )
        if not decided:
            raise ModerationError("this takedown request is not open (decided already?)")
        if grant and trajectory.review_state not in (ReviewState.HIDDEN, ReviewState.REJECTED):
            # The owner gets the takedown notice below, not a second one for the hiding.
            to = (
                ReviewState.HIDDEN
                if trajectory.review_state == ReviewState.APPROVED
                else ReviewState.REJECTED
            )
            moderate(trajectory=trajectory, moderator=moderator, note=note, to=to, notify=False)
        audit_record(
            action=AuditAction.TAKEDOWN_GRANTED if grant else AuditAction.TAKEDOWN_DECLINED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
        )
        if grant:
            from apps.accounts.notices import notice_send

            notice_send(kind="takedown", trajectory=trajectory, reason=note)
        takedown_mail_after_commit(request.pk, "outcome")
    request.refresh_from_db()
    return request
