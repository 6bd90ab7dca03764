"""The audit log, read only."""

from __future__ import annotations

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.models import AuditEntry


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
