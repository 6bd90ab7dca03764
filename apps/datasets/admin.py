from django.contrib import admin

from apps.datasets.models import OptOut, Release


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    """Read-only: releases are made by the build service, never edited by hand."""

    list_display = ("version", "status", "num_rows", "created_at", "published_at", "superseded_by")
    list_filter = ("status",)
    readonly_fields = [field.name for field in Release._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(OptOut)
class OptOutAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "by", "created_at")
    raw_id_fields = ("trajectory", "by")
