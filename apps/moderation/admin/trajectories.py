"""The trajectory admin, extended with the moderators' bulk decisions and the findings."""

from __future__ import annotations

from django.contrib import admin

from apps.moderation.admin.actions import DecisionActions
from apps.moderation.models import Finding
from apps.trajectories.admin import TrajectoryAdmin
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


class ModerationTrajectoryAdmin(DecisionActions, TrajectoryAdmin):
    inlines = [FindingInline]


admin.site.unregister(Trajectory)
admin.site.register(Trajectory, ModerationTrajectoryAdmin)
