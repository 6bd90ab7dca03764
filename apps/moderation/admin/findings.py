"""What the scan found, for moderators (read only; the scan writes it)."""

from __future__ import annotations

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.models import Finding


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
