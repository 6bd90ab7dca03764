"""Django admin for staff: accounts and their API tokens.

Django's own model permissions decide who sees these (superusers; staff given the `accounts`
permissions). Moderators get none of them: the "moderators" group holds only what the review
queue needs. Lists show no email address; a token is never shown (only its prefix: the secret
exists nowhere but with its holder) and cannot be created or edited here, only revoked.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from apps.accounts.models import ApiToken, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = [
        "username",
        "is_active",
        "is_staff",
        "is_superuser",
        "date_joined",
        "last_login",
    ]
    list_filter = ["is_active", "is_staff", "is_superuser", "groups"]
    search_fields = ["username", "=email"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at"]
    list_select_related = ["user"]
    search_fields = ["=prefix", "user__username"]
    fields = ["prefix", "user", "name", "created_at", "last_used_at"]
    readonly_fields = fields
    actions = ["delete_selected"]

    def has_add_permission(self, request) -> bool:
        return False  # the secret is shown once, where it is made: the tokens page or command

    def has_change_permission(self, request, obj=None) -> bool:
        return False
