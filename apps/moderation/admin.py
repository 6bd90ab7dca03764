"""The review queue in Django admin.

A moderator account is a staff account (Django admin admits only `is_staff` users) that is a
member of the "moderators" group (created after `migrate` with the view permissions the queue
needs; `manage.py grant_moderator <username>` sets both). The queue is the trajectory list filtered
by "review queue: public, held for review"; its actions approve, reject or hide through the
moderation services, each leaving an audit entry.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied

from apps.moderation.models import AuditEntry, Finding
from apps.moderation.services import (
    ModerationError,
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.trajectories.admin import ReadOnlyAdmin, TrajectoryAdmin
from apps.trajectories.models import Trajectory


class FindingInline(admin.TabularInline):
    model = Finding
    fields = ["position", "path", "kind", "placeholder", "preview"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False
    ordering = ["position", "path", "start"]

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_moderator


def _act(
    modeladmin: admin.ModelAdmin,
    request,
    queryset,
    service: Callable[..., Trajectory],
    done: str,
) -> None:
    moved, refused = 0, []
    for trajectory in queryset:
        try:
            service(trajectory=trajectory, moderator=request.user, note="admin action")
        except (ModerationError, PermissionDenied) as error:
            refused.append(f"{trajectory.share_id[:12]}: {error}")
        else:
            moved += 1
    if moved:
        modeladmin.message_user(request, f"{moved} trajectories {done}.", messages.SUCCESS)
    for reason in refused:
        modeladmin.message_user(request, reason, messages.WARNING)


class ModerationTrajectoryAdmin(TrajectoryAdmin):
    inlines = [FindingInline]
    actions = ["approve", "reject", "hide"]

    def has_moderate_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_moderator

    @admin.action(description="Approve selected trajectories", permissions=["moderate"])
    def approve(self, request, queryset) -> None:
        _act(self, request, queryset, trajectory_approve, "approved")

    @admin.action(description="Reject selected trajectories", permissions=["moderate"])
    def reject(self, request, queryset) -> None:
        _act(self, request, queryset, trajectory_reject, "rejected")

    @admin.action(description="Hide selected trajectories", permissions=["moderate"])
    def hide(self, request, queryset) -> None:
        _act(self, request, queryset, trajectory_hide, "hidden")


admin.site.unregister(Trajectory)
admin.site.register(Trajectory, ModerationTrajectoryAdmin)


@admin.register(Finding)
class FindingAdmin(ReadOnlyAdmin):
    list_display = ["trajectory_short", "position", "path", "kind", "placeholder", "preview"]
    list_filter = ["category", "kind"]
    search_fields = ["=trajectory__share_id"]
    list_select_related = ["trajectory"]
    fields = [
        "trajectory_short",
        "position",
        "path",
        "start",
        "end",
        "kind",
        "category",
        "placeholder",
        "preview",
        "created_at",
    ]
    readonly_fields = fields

    @admin.display(description="trajectory")
    def trajectory_short(self, obj: Finding) -> str:
        return obj.trajectory.share_id[:12]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit log: shown to moderators, changed by no one (ReadOnlyAdmin refuses add, change
    and delete; the model and, on PostgreSQL, a trigger refuse them too)."""

    list_display = ["created_at", "action", "share_id", "by", "reason"]
    list_filter = ["action", "actor_kind"]
    search_fields = ["=share_id", "=actor_username"]
    date_hierarchy = "created_at"
    fields = ["created_at", "action", "share_id", "by", "reason", "details"]
    readonly_fields = fields

    @admin.display(description="by", ordering="actor_kind")
    def by(self, obj: AuditEntry) -> str:
        # An old username may be an email address: never shown in a list.
        label = obj.actor_label
        return label.split(" (")[0] + " (user)" if "@" in obj.actor_username else label
