"""Appeals of rejections, read only (answered on the queue item's page)."""

from __future__ import annotations

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.models import Appeal


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "trajectory_short", "resolved_at", "resolution"]
    search_fields = ["=trajectory__share_id"]
    list_select_related = ["trajectory"]
    fields = ["created_at", "trajectory_short", "text", "resolved_at", "resolution"]
    readonly_fields = fields

    @admin.display(description="trajectory")
    def trajectory_short(self, obj) -> str:
        return obj.trajectory.share_id[:12]
