"""Takedown requests, read only (decided on the queue item's page)."""

from __future__ import annotations

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.models import TakedownRequest


@admin.register(TakedownRequest)
class TakedownRequestAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "trajectory_short", "state", "confirmed_at", "decided_at"]
    list_filter = ["state"]
    search_fields = ["=trajectory__share_id"]
    list_select_related = ["trajectory"]
    fields = [
        "created_at",
        "trajectory_short",
        "state",
        "text",
        "confirmed_at",
        "decided_at",
        "decision_note",
    ]
    readonly_fields = fields

    @admin.display(description="trajectory")
    def trajectory_short(self, obj) -> str:
        return obj.trajectory.share_id[:12]
