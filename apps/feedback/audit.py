"""Step feedback in the site's one audit log (apps.moderation's AuditEntry, written through
moderation.audit.audit_record, shown with every other entry in Django admin): moderators'
holds, decisions and deletions, readers' reports and their resolution, the owner's rejections
of corrections and the feedback switch.

An entry names the trajectory (share id) and the piece of feedback (its public id, kind and
step); it never copies feedback text, an author's or a reporter's: that text is hostile and may
hold the very secret the scan held it for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apps.moderation.audit import audit_record
from apps.moderation.models import ActorKind, AuditAction

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.feedback.models import StepNote
    from apps.trajectories.models import Trajectory


def feedback_audit(
    action: AuditAction,
    *,
    trajectory: Trajectory,
    note: StepNote | None,
    actor_kind: ActorKind,
    actor: User | None,
    reason: str = "",
    **details: Any,
) -> None:
    """Append one entry about `note` (None: the trajectory's feedback as a whole). `reason` is
    a category the site names (a report's reason), never words someone wrote."""
    if note is not None:
        details = {"feedback": note.public_id, "kind": note.kind, "step": note.step, **details}
    audit_record(
        action=action,
        share_id=trajectory.share_id,
        actor_kind=actor_kind,
        actor=actor,
        reason=reason,
        details=details,
    )


def owner_kind(user: User | None) -> ActorKind:
    """The owner's account, or (no account) the anonymous sharer holding the share's password."""
    return ActorKind.OWNER if user is not None else ActorKind.HOLDER
