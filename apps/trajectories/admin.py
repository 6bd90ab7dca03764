"""Django admin for trajectories: read-only views for moderators and staff.

Nothing is edited through these forms: review decisions are admin actions added by
apps.moderation.admin (which extends TrajectoryAdmin: trajectories never import moderation), and
deletion goes through the deletion service so that a tombstone is left and files are cleaned up.
No list shows an email address: titles are shown redacted, contact emails never.
"""

from __future__ import annotations

import re

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from apps.core.admin import ReadOnlyAdmin
from apps.trajectories.event_rows import EVENT_FIELDS
from apps.trajectories.models import (
    Event,
    Image,
    ReviewState,
    Tombstone,
    Trajectory,
    Visibility,
)
from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.redactions import own_redactions


class ReviewQueueFilter(admin.SimpleListFilter):
    """The moderators' queue: public trajectories waiting for a decision come first."""

    title = "review queue"
    parameter_name = "queue"

    def lookups(self, request, model_admin):
        return [
            ("waiting", "Public, held for review"),
            ("held", "Held (any visibility)"),
            ("unscanned", "Not scanned yet"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "waiting":
            return queryset.filter(visibility=Visibility.PUBLIC, review_state=ReviewState.HELD)
        if value == "held":
            return queryset.filter(review_state=ReviewState.HELD)
        if value == "unscanned":
            return queryset.filter(review_state=ReviewState.PENDING)
        return queryset


# Titles are shown through the trajectory's redactions; one not scanned yet has none, so any
# address left is masked here as well.
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def _list_safe(text: str, redactions: dict[str, str]) -> str:
    return _EMAIL.sub("<email>", redactor(redactions)(text))


def _short(share_id: str) -> str:
    return share_id[:12]


def user_label(user, none: str = "anonymous") -> str:
    """A username for lists; a username may itself be an email address, never shown in a list."""
    if user is None:
        return none
    return f"user #{user.pk}" if "@" in user.username else user.username


@admin.register(Trajectory)
class TrajectoryAdmin(ReadOnlyAdmin):
    list_display = [
        "short_id",
        "redacted_title",
        "owner_label",
        "visibility",
        "review_state",
        "source_format",
        "num_events",
        "created_at",
    ]
    list_filter = [ReviewQueueFilter, "review_state", "visibility", "source_format", "polarity"]
    search_fields = ["=share_id", "^share_id", "title"]
    list_select_related = ["owner"]
    list_per_page = 50
    ordering = ["-created_at", "-id"]
    date_hierarchy = "created_at"
    fields = [
        "share_id",
        "site_link",
        "events_link",
        "owner_label",
        "redacted_title",
        "visibility",
        "review_state",
        "license",
        "source_format",
        "agent",
        "model_name",
        "agent_version",
        "polarity",
        "redacted_feedback",
        "num_events",
        "num_bytes",
        "total_tokens",
        "total_cost",
        "created_at",
        "updated_at",
        "published_at",
    ]
    readonly_fields = fields

    @admin.display(description=mark_safe('<input type="checkbox" id="action-toggle">'))
    def action_checkbox(self, obj: Trajectory) -> str:
        # Django labels the checkbox with str(obj), the title: use the id, never user text.
        attrs = {
            "class": "action-select",
            "aria-label": f"Select trajectory {_short(obj.share_id)} for an action",
        }
        checkbox = forms.CheckboxInput(attrs, lambda value: False)
        return checkbox.render(helpers.ACTION_CHECKBOX_NAME, str(obj.pk))

    @admin.display(description="id", ordering="share_id")
    def short_id(self, obj: Trajectory) -> str:
        return _short(obj.share_id)

    @admin.display(description="title", ordering="title")
    def redacted_title(self, obj: Trajectory) -> str:
        # The row's own entries of its redaction index (the whole map where not current):
        # a list row of a trajectory with very many redactions no longer indexes all of them.
        return Truncator(_list_safe(obj.title, own_redactions(obj))).chars(80)

    @admin.display(description="feedback text")
    def redacted_feedback(self, obj: Trajectory) -> str:
        return _list_safe(obj.feedback_text, own_redactions(obj))

    @admin.display(description="owner", ordering="owner__username")
    def owner_label(self, obj: Trajectory) -> str:
        return user_label(obj.owner)

    @admin.display(description="on the site")
    def site_link(self, obj: Trajectory) -> str:
        # Moderators may see every trajectory there, with the originals.
        return format_html('<a href="{}">{}</a>', obj.get_absolute_url(), obj.get_absolute_url())

    @admin.display(description="events")
    def events_link(self, obj: Trajectory) -> str:
        url = reverse("admin:trajectories_event_changelist")
        return format_html('<a href="{}?q={}">{} events</a>', url, obj.share_id, obj.num_events)

    def has_delete_permission(self, request, obj=None) -> bool:
        # Staff with the delete permission (not moderators): through the deletion service.
        return request.user.has_perm("trajectories.delete_trajectory")

    def get_deleted_objects(self, objs, request):
        # Django would list every event on the confirmation page (50,000 for a long one).
        objs = list(objs)
        allowed = self.has_delete_permission(request)
        summary = [
            f"Trajectory {_short(obj.share_id)} and its {obj.num_events} events" for obj in objs
        ]
        return summary, {"trajectories": len(objs)}, set() if allowed else {"trajectory"}, []

    def delete_model(self, request, obj: Trajectory) -> None:
        from apps.trajectories.services import trajectory_delete

        trajectory_delete(trajectory=obj, reason="staff", actor=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for trajectory in queryset:
            self.delete_model(request, trajectory)


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    # No text column: event text may hold personal data; it is shown on the event's own page.
    list_display = ["trajectory_id_short", "position", "source", "kind", "type", "timestamp"]
    list_filter = ["kind", "source"]
    search_fields = ["=trajectory__share_id"]
    list_select_related = ["trajectory"]
    show_full_result_count = False  # counting every event of the site is slow and not needed
    ordering = ["trajectory_id", "position"]
    fields = ["trajectory_id_short", *EVENT_FIELDS]
    readonly_fields = fields

    @admin.display(description="trajectory")
    def trajectory_id_short(self, obj: Event) -> str:
        return _short(obj.trajectory.share_id)


@admin.register(Image)
class ImageAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "content_type", "size", "created_at"]
    search_fields = ["=sha256"]
    fields = list_display
    readonly_fields = list_display


@admin.register(Tombstone)
class TombstoneAdmin(ReadOnlyAdmin):
    list_display = ["share_id", "deleted_at", "was_public", "reason"]
    list_filter = ["was_public", "reason"]
    search_fields = ["=share_id"]
    fields = list_display
    readonly_fields = list_display
