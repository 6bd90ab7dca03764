"""Writing the audit log: one function every decision goes through, so each entry names its actor.

Entries are append-only (see AuditEntry). Who acted is told by the caller as an ActorKind; the
account, when there is one, is kept as a foreign key and as a username snapshot, so the entry
still says who it was after that account is deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apps.moderation.models import ActorKind, AuditAction, AuditEntry

if TYPE_CHECKING:
    from apps.accounts.models import User

# trajectory_delete(reason=...) -> who deleted it. The reasons are the deletion service's
# (apps/trajectories/services/edits.py); one not listed here is kept in the entry's reason.
DELETION_ACTORS = {
    "owner": ActorKind.OWNER,
    "staff": ActorKind.STAFF,
    "password": ActorKind.HOLDER,
    "email": ActorKind.EMAIL_LINK,
    "account": ActorKind.ACCOUNT_DELETION,
    "account_deleted": ActorKind.ACCOUNT_DELETION,
}


def reviewer_kind(user: User) -> ActorKind:
    """A member of the "moderators" group acts as a moderator; other staff as staff."""
    if user.groups.filter(name="moderators").exists():
        return ActorKind.MODERATOR
    return ActorKind.STAFF


def audit_record(
    *,
    action: AuditAction | str,
    share_id: str,
    actor_kind: ActorKind | str,
    actor: User | None = None,
    actor_username: str | None = None,
    reason: str = "",
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry. `details` must never hold an original (redacted) value or an email.

    `actor_username` is the snapshot when the account may be gone already (a deletion recorded
    after its account was deleted); by default it is the actor's username."""
    if actor_username is None:
        actor_username = actor.get_username() if actor is not None else ""
    return AuditEntry.objects.create(
        action=action,
        share_id=share_id,
        actor_kind=actor_kind,
        actor=actor if actor is not None and actor.pk else None,
        actor_username=actor_username,
        reason=reason,
        details=details or {},
    )


def trajectory_deleted_record(
    *,
    share_id: str,
    was_public: bool,
    reason: str = "",
    actor_id: int | None = None,
    actor_username: str = "",
) -> AuditEntry:
    """Note a deletion in the audit log (the trajectory and its findings are already gone).

    Who did it comes from the deletion's reason (owner, staff, the holder's password, an email
    link, an account deletion); the account may be gone by now, its username snapshot is kept.
    """
    from apps.accounts.models import User

    actor = User.objects.filter(pk=actor_id).first() if actor_id is not None else None
    kind = DELETION_ACTORS.get(reason, ActorKind.UNKNOWN)
    return audit_record(
        action=AuditAction.DELETED,
        share_id=share_id,
        actor_kind=kind,
        actor=actor,
        actor_username=actor_username,
        reason="" if reason in DELETION_ACTORS else reason,
        details={"was_public": was_public},
    )
