"""The admin base of every app: read-only pages for moderators, changes only through services."""

from __future__ import annotations

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable by moderators (staff, or the "moderators" group: User.is_moderator), changed only
    through services. Django admin itself still admits only staff accounts."""

    def has_module_permission(self, request) -> bool:
        return _is_moderator(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return _is_moderator(request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def _is_moderator(request) -> bool:
    user = request.user
    return user.is_active and getattr(user, "is_moderator", False)
