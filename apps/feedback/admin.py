"""The review queue of step feedback in Django admin: corrections and comments held by the scan,
by a setting (new accounts) or by readers' reports, each with its trajectory and step in
context; moderators show, reject, hold or delete them (moderating.py), each decision written to
the site's audit log."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.utils.html import format_html, format_html_join

from apps.core.admin import ReadOnlyAdmin
from apps.feedback.models import NoteState, StepNote, StepNoteReview
from apps.feedback.moderating import note_decide, note_hold, note_remove
from apps.trajectories.models import Event

CONTEXT_CHARS = 2000


@admin.register(StepNoteReview)
class StepNoteReviewAdmin(ReadOnlyAdmin):
    """Held corrections and comments, and those with open reports."""

    actions = ["show", "reject", "hold", "remove"]
    list_display = [
        "created_at",
        "kind",
        "step_link",
        "trajectory_title",
        "state",
        "hold_reason",
        "open_reports",
    ]
    list_filter = ["state", "kind"]
    search_fields = ["=trajectory__share_id", "=public_id"]
    list_select_related = ["trajectory", "author"]
    fields = [
        "trajectory_context",
        "kind",
        "mode",
        "author",
        "state",
        "hold_reason",
        "findings_list",
        "text",
        "original",
        "step_context",
        "reports_list",
    ]
    readonly_fields = fields

    def get_queryset(self, request) -> QuerySet[StepNote]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                open_report_count=Count("reports", filter=Q(reports__resolved_at__isnull=True))
            )
            .filter(Q(state=NoteState.HELD) | Q(open_report_count__gt=0))
        )

    def has_moderate_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_moderator

    @admin.action(
        description="Show the selected feedback (findings stay redacted)", permissions=["moderate"]
    )
    def show(self, request, queryset) -> None:
        self._decide(request, queryset, approve=True)

    @admin.action(
        description="Reject the selected feedback (nobody else reads it)", permissions=["moderate"]
    )
    def reject(self, request, queryset) -> None:
        self._decide(request, queryset, approve=False)

    @admin.action(
        description="Hold the selected feedback (only its author and moderators read it)",
        permissions=["moderate"],
    )
    def hold(self, request, queryset) -> None:
        done = sum(
            note_hold(note=note, moderator=request.user)
            for note in queryset.select_related("trajectory")
        )
        self.message_user(request, f"{done} piece(s) of feedback held.", messages.SUCCESS)

    @admin.action(
        description="Delete the selected feedback for good (its reports too)",
        permissions=["moderate"],
    )
    def remove(self, request, queryset) -> None:
        done = sum(
            note_remove(note=note, moderator=request.user)
            for note in queryset.select_related("trajectory")
        )
        self.message_user(request, f"{done} piece(s) of feedback deleted.", messages.SUCCESS)

    def _decide(self, request, queryset, *, approve: bool) -> None:
        done = sum(
            note_decide(note=note, moderator=request.user, approve=approve)
            for note in queryset.select_related("trajectory", "author")
        )
        verb = "shown" if approve else "rejected"
        self.message_user(request, f"{done} piece(s) of feedback {verb}.", messages.SUCCESS)

    @admin.display(description="step")
    def step_link(self, obj) -> str:
        return format_html(
            '<a href="/t/{}/steps/{}/feedback">step {}</a>',
            obj.trajectory.share_id,
            obj.step,
            obj.step,
        )

    @admin.display(description="trajectory")
    def trajectory_title(self, obj) -> str:
        return (obj.trajectory.title or obj.trajectory.share_id[:12])[:80]

    @admin.display(description="open reports")
    def open_reports(self, obj) -> int:
        return getattr(obj, "open_report_count", 0)

    @admin.display(description="trajectory")
    def trajectory_context(self, obj) -> str:
        trajectory = obj.trajectory
        return format_html(
            '<a href="/t/{}/#step-{}">{}</a> ({}, {}; <a href="/admin/moderation/queueitem/{}/change/">'
            "its review</a>)",
            trajectory.share_id,
            obj.step,
            trajectory.title or trajectory.share_id[:12],
            trajectory.get_visibility_display(),
            trajectory.get_review_state_display(),
            trajectory.pk,
        )

    @admin.display(description="the step and its neighbours")
    def step_context(self, obj) -> str:
        events = Event.objects.filter(
            trajectory_id=obj.trajectory_id, position__range=(obj.position - 1, obj.position + 1)
        ).order_by("position")
        return format_html_join(
            "",
            '<div class="{}"><strong>#{} {} {}</strong><pre>{}</pre></div>',
            (
                (
                    "fb-context-step" if event.position == obj.position else "fb-context",
                    event.position + 1,
                    event.source,
                    event.type,
                    (event.text or "")[:CONTEXT_CHARS],
                )
                for event in events
            ),
        )

    @admin.display(description="scan findings")
    def findings_list(self, obj) -> str:
        return (
            ", ".join(
                f"{found['kind']} at {found['start']}–{found['end']}" for found in obj.findings
            )
            or "none"
        )

    @admin.display(description="reports")
    def reports_list(self, obj) -> str:
        return (
            format_html_join(
                "",
                "<p>{}: {} {}</p>",
                (
                    (
                        report.created_at.strftime("%Y-%m-%d %H:%M"),
                        report.get_reason_display(),
                        report.text,
                    )
                    for report in obj.reports.filter(resolved_at__isnull=True)
                ),
            )
            or "none"
        )
