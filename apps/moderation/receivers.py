"""Reactions to trajectories' signals, connected in ModerationConfig.ready().

Trajectories never import moderation: they announce, moderation listens.
"""

from __future__ import annotations


def queue_scan(sender, *, trajectory_id: int, created: bool = False, **kwargs) -> None:
    """A trajectory was stored (created or re-shared): scan it. The signal is sent once the
    transaction that stored it has committed, so the task is queued at once."""
    from apps.moderation.tasks import scan_trajectory

    scan_trajectory.delay(trajectory_id)


def record_deletion(
    sender,
    *,
    share_id: str,
    was_public: bool = False,
    reason: str = "",
    actor_id: int | None = None,
    actor_username: str = "",
    **kwargs,
) -> None:
    from apps.moderation.audit import trajectory_deleted_record

    trajectory_deleted_record(
        share_id=share_id,
        was_public=was_public,
        reason=reason,
        actor_id=actor_id,
        actor_username=actor_username,
    )


# Exactly what moderating needs: seeing what is to be decided (trajectories, their events,
# images, tombstones, findings, reports, takedown requests, appeals, the queue and the audit
# log) and deciding it. No add, change or delete of any model, nothing of accounts or tokens.
MODERATOR_PERMISSIONS = {
    ("trajectories", "view_trajectory"),
    ("trajectories", "view_event"),
    ("trajectories", "view_image"),
    ("trajectories", "view_tombstone"),
    ("moderation", "view_finding"),
    ("moderation", "view_auditentry"),
    ("moderation", "view_report"),
    ("moderation", "view_takedownrequest"),
    ("moderation", "view_appeal"),
    ("moderation", "view_queueitem"),
    ("moderation", "decide_review"),
}


def ensure_moderators_group(sender, **kwargs) -> None:
    """After migrate: the "moderators" group with exactly MODERATOR_PERMISSIONS.

    Permissions exist only after post_migrate has created them, hence here and not in a migration.
    """
    from django.contrib.auth.models import Group, Permission

    wanted = MODERATOR_PERMISSIONS
    permissions = [
        permission
        for permission in Permission.objects.filter(
            content_type__app_label__in={app for app, _ in wanted}
        ).select_related("content_type")
        if (permission.content_type.app_label, permission.codename) in wanted
    ]
    if len(permissions) < len(wanted):
        return  # not every app is migrated yet; a later post_migrate completes it
    group, _ = Group.objects.get_or_create(name="moderators")
    group.permissions.set(permissions)
