"""Readers' reports, with the bulk dismissal of the open ones."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.admin.actions import NoteForm, posted_reason
from apps.moderation.errors import ModerationError
from apps.moderation.models import Report
from apps.moderation.selectors import trajectories_with_open_reports
from apps.moderation.services.reports import reports_dismiss


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    """Readers' reports (the reporter's email stays off the list). "Dismiss" dismisses every
    open report of the selected reports' trajectories (reports_dismiss)."""

    action_form = NoteForm
    actions = ["dismiss"]

    def has_moderate_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_moderator

    @admin.action(
        description="Dismiss the open reports on these trajectories (give a note, optional)",
        permissions=["moderate"],
    )
    def dismiss(self, request, queryset) -> None:
        dismissed, refused = 0, []
        for trajectory in trajectories_with_open_reports(queryset):
            try:
                dismissed += reports_dismiss(
                    trajectory=trajectory, moderator=request.user, note=posted_reason(request)
                )
            except (ModerationError, PermissionDenied) as error:
                refused.append(f"{trajectory.share_id[:12]}: {error}")
        if dismissed:
            self.message_user(request, f"{dismissed} open reports dismissed.", messages.SUCCESS)
        elif not refused:
            self.message_user(request, "None of the selected reports is open.", messages.WARNING)
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)

    list_display = ["created_at", "trajectory_short", "reason", "resolved_at", "resolution"]
    list_filter = ["reason", "resolution"]
    search_fields = ["=trajectory__share_id"]
    list_select_related = ["trajectory"]
    fields = ["created_at", "trajectory_short", "reason", "text", "resolved_at", "resolution"]
    readonly_fields = fields

    @admin.display(description="trajectory")
    def trajectory_short(self, obj) -> str:
        return obj.trajectory.share_id[:12]
