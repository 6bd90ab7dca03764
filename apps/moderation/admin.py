"""The review queue in Django admin, the moderators' workplace.

A moderator account is a staff account (Django admin admits only `is_staff` users) that is a
member of the "moderators" group (created after `migrate` with exactly the permissions the queue
needs; `manage.py grant_moderator <username>` sets both). Moderation → Review queue lists what
waits for a decision (held by the scan or by reports, reported, takedown requests, appeals),
with filters; an item's page shows the findings in context, highlighted, the reports, requests
and appeals, and the decisions: claim, approve, reject with a reason, redact and approve, hide,
dismiss the reports, uphold a rejection, grant or decline a takedown. The same decisions work in bulk from the list.
Every decision goes through the moderation services (conditional updates, audit entries).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.claims import claim_release, claim_take
from apps.moderation.models import (
    Appeal,
    AuditEntry,
    Claim,
    Finding,
    QueueItem,
    Report,
    TakedownRequest,
    TakedownState,
)
from apps.moderation.reports import appeal_decline, reports_dismiss, takedown_decide
from apps.moderation.selectors import (
    findings_in_context,
    flagged_images,
    images_for_review,
    review_queue,
)
from apps.moderation.services import (
    ModerationError,
    image_drop,
    trajectory_approve,
    trajectory_hide,
    trajectory_redact_approve,
    trajectory_reject,
    trajectory_scan,
)
from apps.trajectories.admin import TrajectoryAdmin, user_label
from apps.trajectories.models import ReviewState, Trajectory
from apps.trajectories.redaction import redactor


class FindingInline(admin.TabularInline):
    model = Finding
    fields = ["position", "path", "kind", "placeholder", "preview"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False
    ordering = ["position", "path", "start"]

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_moderator


class DecisionForm(helpers.ActionForm):
    """The bulk actions' form, beside the action menu: the reason (needed to reject) and the
    values to redact (one per line) for "redact and approve"."""

    reason = forms.CharField(required=False, label="Reason", max_length=2000)
    redact = forms.CharField(
        required=False, label="Also redact (one value per line)", widget=forms.Textarea
    )
    drop_flagged = forms.BooleanField(
        required=False, label="Also drop the images the scan flagged (approve, redact and approve)"
    )


class NoteForm(helpers.ActionForm):
    """The Report list's action form: a note for the audit log (dismissing)."""

    reason = forms.CharField(required=False, label="Note", max_length=2000)


def _reason(request) -> str:
    return (request.POST.get("reason") or "").strip()


SEEN_FIELD = "seen-{pk}"


def row_token(trajectory: Trajectory) -> str:
    """What the list showed of a row: its state, and when it last changed (content: updated_at;
    scan: scanned_at, since a rescan rewrites redactions and findings without touching
    updated_at). The list carries it in a hidden field per row; a bulk decision acts only on
    the rows whose token is still the same."""
    scanned = trajectory.scanned_at.isoformat() if trajectory.scanned_at else ""
    return f"{trajectory.review_state}|{trajectory.updated_at.isoformat()}|{scanned}"


def _seen_rows(request, queryset) -> tuple[list[Trajectory], list[str]]:
    """The selected rows as the moderator saw them (review_state set to what the list showed,
    so the service's conditional update is on that state), and why the others are skipped:
    changed since the list was shown, or not on the list the moderator saw at all (a "select
    all" over rows of other pages)."""
    rows, skipped = [], []
    selected = list(queryset)
    # Ticked rows that left the list meanwhile (the queue lists only what waits): Django's
    # action gets no such row at all, and would say nothing about it.
    ticked = {int(pk) for pk in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME) if pk.isdigit()}
    gone = ticked - {trajectory.pk for trajectory in selected}
    for pk, share_id, state_now in Trajectory.objects.filter(pk__in=gone).values_list(
        "pk", "share_id", "review_state"
    ):
        seen = request.POST.get(SEEN_FIELD.format(pk=pk)) or ""
        skipped.append(
            f"Skipped {share_id[:12]}: changed since you saw the list (it was "
            f"{seen.split('|', 1)[0]}, it is now {state_now}); nothing was done"
        )
    for trajectory in selected:
        seen = request.POST.get(SEEN_FIELD.format(pk=trajectory.pk))
        short = trajectory.share_id[:12]
        if seen is None:
            skipped.append(f"Skipped {short}: not on the list you saw; nothing was done")
            continue
        state = seen.split("|", 1)[0]
        if seen != row_token(trajectory):
            if state != trajectory.review_state:
                why = f"(it was {state}, it is now {trajectory.review_state})"
            else:
                why = "(its content or its scan is newer than the list; look again)"
            skipped.append(
                f"Skipped {short}: changed since you saw the list {why}; nothing was done"
            )
            continue
        trajectory.review_state = state
        rows.append(trajectory)
    return rows, skipped


def _act(
    modeladmin: admin.ModelAdmin,
    request,
    queryset,
    service: Callable[..., Trajectory],
    done: str,
    *,
    as_seen: bool = True,
    **extra,
) -> None:
    moved, refused = 0, []
    rows: list[Trajectory] = list(queryset)
    if as_seen:
        rows, refused = _seen_rows(request, queryset)
    for trajectory in rows:
        try:
            service(trajectory=trajectory, moderator=request.user, note=_reason(request), **extra)
        except (ModerationError, PermissionDenied) as error:
            refused.append(f"{trajectory.share_id[:12]}: {error}")
        else:
            moved += 1
    if moved:
        modeladmin.message_user(request, f"{moved} trajectories {done}.", messages.SUCCESS)
    for reason in refused:
        modeladmin.message_user(request, reason, messages.WARNING)


class DecisionActions:
    """Approve / reject (with a reason) / redact and approve / hide / claim, in bulk."""

    action_form = DecisionForm
    actions = ["approve", "reject", "redact_approve", "hide", "dismiss_reports", "claim", "rescan"]

    def has_moderate_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_moderator

    @admin.action(
        description="Approve selected trajectories (dropping the flagged images, if ticked)",
        permissions=["moderate"],
    )
    def approve(self, request, queryset) -> None:
        if request.POST.get("drop_flagged"):
            flagged = flagged_images([row.pk for row in queryset])
            _act(
                self,
                request,
                queryset.filter(pk__in=flagged),
                _redact_approve_row,
                "approved with their flagged images dropped",
                values=[],
                drop_flagged=True,
            )
            queryset = queryset.exclude(pk__in=flagged)
        else:
            queryset = self._without_flagged_images(request, queryset)
        _act(self, request, queryset, trajectory_approve, "approved")

    def _without_flagged_images(self, request, queryset):
        """The rows whose images showed no finding. Approving the others would publish an image
        whose OCR found a secret: such a row waits for the box to be ticked or for a decision on
        its own page, where each image is shown; each one skipped is named."""
        flagged = flagged_images([row.pk for row in queryset])
        for row in queryset.filter(pk__in=flagged):
            self.message_user(
                request,
                format_html(
                    "Skipped {}: {} of its images showed a finding and would be published;"
                    ' tick "Also drop the images the scan flagged", or decide on <a href="{}">'
                    "its page</a>, where each image is shown.",
                    row.share_id[:12],
                    len(flagged[row.pk]),
                    reverse("admin:moderation_queueitem_change", args=[row.pk]),
                ),
                messages.WARNING,
            )
        return queryset.exclude(pk__in=flagged)

    @admin.action(description="Reject selected (give a reason)", permissions=["moderate"])
    def reject(self, request, queryset) -> None:
        if not _reason(request):
            self.message_user(
                request, "Give a reason to reject: it is sent to the owner.", messages.ERROR
            )
            return
        _act(self, request, queryset, trajectory_reject, "rejected")

    @admin.action(
        description="Redact the values given (and drop the flagged images, if ticked), then approve",
        permissions=["moderate"],
    )
    def redact_approve(self, request, queryset) -> None:
        values = (request.POST.get("redact") or "").splitlines()
        drop_flagged = bool(request.POST.get("drop_flagged"))
        if not drop_flagged:
            queryset = self._without_flagged_images(request, queryset)
        _act(
            self,
            request,
            queryset,
            _redact_approve_row,
            "redacted and approved",
            values=values,
            drop_flagged=drop_flagged,
        )

    @admin.action(description="Hide selected trajectories", permissions=["moderate"])
    def hide(self, request, queryset) -> None:
        _act(self, request, queryset, trajectory_hide, "hidden")

    @admin.action(
        description="Dismiss the open reports of selected (held by reports: approved again)",
        permissions=["moderate"],
    )
    def dismiss_reports(self, request, queryset) -> None:
        _act(self, request, queryset, _dismiss_row, "had their reports dismissed")

    @admin.action(
        description="Claim selected (no one else decides them for a while)",
        permissions=["moderate"],
    )
    def claim(self, request, queryset) -> None:
        _act(self, request, queryset, _claim, "claimed", as_seen=False)

    @admin.display(description="")
    def seen(self, obj) -> str:
        """A hidden field per row with the row's token (row_token), inside the list's form."""
        return format_html(
            '<input type="hidden" name="{}" value="{}">',
            SEEN_FIELD.format(pk=obj.pk),
            row_token(obj),
        )

    def get_list_display(self, request):
        return [*super().get_list_display(request), "seen"]

    @admin.action(description="Rescan selected with today's rules", permissions=["moderate"])
    def rescan(self, request, queryset) -> None:
        results = [trajectory_scan(trajectory=trajectory) for trajectory in queryset[:500]]
        held = sum(result.review_state == "held" for result in results)
        self.message_user(
            request, f"{len(results)} trajectories rescanned ({held} held).", messages.SUCCESS
        )


def _redact_approve_row(
    *, trajectory: Trajectory, moderator, note: str, values: list[str], drop_flagged: bool
) -> Trajectory:
    """One row of the bulk "redact and approve": the values given, and the row's own flagged
    images when the box is ticked (each row drops only the images of its own findings)."""
    drops = flagged_images([trajectory.pk]).get(trajectory.pk, []) if drop_flagged else []
    return trajectory_redact_approve(
        trajectory=trajectory, moderator=moderator, values=values, note=note, drop_images=drops
    )


def _dismiss_row(*, trajectory: Trajectory, moderator, note: str = "") -> Trajectory:
    reports_dismiss(trajectory=trajectory, moderator=moderator, note=note)
    return trajectory


def _claim(*, trajectory: Trajectory, moderator, note: str = "") -> Trajectory:
    claim_take(trajectory=trajectory, moderator=moderator)
    return trajectory


class ModerationTrajectoryAdmin(DecisionActions, TrajectoryAdmin):
    inlines = [FindingInline]


# --- The review queue -----------------------------------------------------------------------


class WhyFilter(admin.SimpleListFilter):
    title = "why it is here"
    parameter_name = "why"

    def lookups(self, request, model_admin):
        return [
            ("held", "Held (scan, pre-moderation or reports)"),
            ("reported", "Open reports"),
            ("takedown", "Takedown request"),
            ("appeal", "Appeal of a rejection"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "held":
            return queryset.filter(review_state=ReviewState.HELD)
        if value == "reported":
            return queryset.filter(open_reports__gt=0)
        if value == "takedown":
            return queryset.filter(open_takedowns__gt=0)
        if value == "appeal":
            return queryset.filter(open_appeals__gt=0)
        return queryset


class FindingKindFilter(admin.SimpleListFilter):
    title = "finding kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        kinds = Finding.objects.order_by("kind").values_list("kind", flat=True).distinct()
        return [(kind, kind) for kind in kinds[:100]]

    def queryset(self, request, queryset):
        if self.value():
            found = Finding.objects.filter(trajectory=OuterRef("pk"), kind=self.value())
            return queryset.filter(Exists(found))
        return queryset


class ReportsFilter(admin.SimpleListFilter):
    title = "reports"
    parameter_name = "reports"

    def lookups(self, request, model_admin):
        return [("yes", "Reported"), ("no", "Not reported")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(open_reports__gt=0)
        if self.value() == "no":
            return queryset.filter(open_reports=0)
        return queryset


class AgentFilter(admin.SimpleListFilter):
    title = "agent"
    parameter_name = "agent"

    def lookups(self, request, model_admin):
        agents = (
            Trajectory.objects.exclude(agent="")
            .order_by("agent")
            .values_list("agent", flat=True)
            .distinct()
        )
        return [(agent, agent) for agent in agents[:50]]

    def queryset(self, request, queryset):
        return queryset.filter(agent=self.value()) if self.value() else queryset


AGES = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "1w": timedelta(weeks=1)}


class AgeFilter(admin.SimpleListFilter):
    title = "age"
    parameter_name = "age"

    def lookups(self, request, model_admin):
        return [
            ("1h", "Shared in the last hour"),
            ("1d", "In the last day"),
            ("1w", "In the last week"),
            ("older", "Older than a week"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value in AGES:
            return queryset.filter(created_at__gte=timezone.now() - AGES[value])
        if value == "older":
            return queryset.filter(created_at__lt=timezone.now() - AGES["1w"])
        return queryset


DECISIONS = {
    "claim",
    "release",
    "approve",
    "reject",
    "redact_approve",
    "drop_images",
    "hide",
    "uphold",
    "dismiss_reports",
    "grant_takedown",
    "decline_takedown",
}


@admin.register(QueueItem)
class QueueItemAdmin(DecisionActions, ReadOnlyAdmin):
    list_display = [
        "short_id",
        "title_shown",
        "why",
        "findings",
        "owner_shown",
        "review_state",
        "claim_shown",
        "created_at",
    ]
    list_display_links = ["short_id"]
    list_filter = [
        WhyFilter,
        "review_state",
        FindingKindFilter,
        ReportsFilter,
        AgentFilter,
        AgeFilter,
    ]
    search_fields = ["=share_id", "^share_id"]
    list_per_page = 50
    ordering = ["created_at", "id"]
    show_full_result_count = False

    def get_queryset(self, request):
        return review_queue()

    @admin.display(description="id")
    def short_id(self, obj) -> str:
        return obj.share_id[:12]

    @admin.display(description="title")
    def title_shown(self, obj) -> str:
        return TrajectoryAdmin.redacted_title(self, obj)

    @admin.display(description="owner")
    def owner_shown(self, obj) -> str:
        return user_label(obj.owner)

    @admin.display(description="why")
    def why(self, obj) -> str:
        reasons = []
        if obj.review_state == ReviewState.HELD:
            reasons.append("held")
        if obj.open_reports:
            reasons.append(f"{obj.open_reports} report{'s' if obj.open_reports != 1 else ''}")
        if obj.open_takedowns:
            reasons.append("takedown request")
        if obj.open_appeals:
            reasons.append("appeal")
        return ", ".join(reasons)

    @admin.display(description="findings")
    def findings(self, obj) -> str:
        if not obj.num_findings:
            return "none"
        return f"{obj.num_findings} ({obj.num_secrets} secret{'s' if obj.num_secrets != 1 else ''})"

    @admin.display(description="claimed by")
    def claim_shown(self, obj) -> str:
        if not obj.claimed_by:
            return "—"
        return f"{obj.claimed_by} until {timezone.localtime(obj.claimed_until):%H:%M}"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The item's own page: everything needed to decide, and the decisions."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        item = Trajectory.objects.select_related("owner").filter(pk=object_id).first()
        if item is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if request.method == "POST":
            return self._decide(request, item)
        redact = redactor(item.redactions)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Review {item.share_id[:12]}",
            "item": item,
            "item_title": redact(item.title),
            "feedback": redact(item.feedback_text),
            "owner": user_label(item.owner),
            "findings": findings_in_context(item),
            "images": images_for_review(item),
            "finding_count": Finding.objects.filter(trajectory=item).count(),
            "reports": Report.objects.filter(trajectory=item, resolved_at__isnull=True),
            "takedowns": TakedownRequest.objects.filter(trajectory=item, state=TakedownState.OPEN),
            "appeals": Appeal.objects.filter(trajectory=item, resolved_at__isnull=True),
            "claim": Claim.objects.select_related("moderator")
            .filter(trajectory=item, expires_at__gt=timezone.now())
            .first(),
            "history": AuditEntry.objects.filter(share_id=item.share_id)[:30],
            "can_decide": self.has_moderate_permission(request),
        }
        return TemplateResponse(request, "admin/moderation/queueitem/review.html", context)

    def _decide(self, request, item: Trajectory):
        if not self.has_moderate_permission(request):
            raise PermissionDenied
        decision = request.POST.get("decision", "")
        if decision not in DECISIONS:
            self.message_user(request, "Choose a decision.", messages.ERROR)
            return HttpResponseRedirect(request.path)
        # Decide from the state this moderator's page showed: if it changed meanwhile, the
        # conditional update refuses and says what happened.
        seen = request.POST.get("seen_state", "")
        if seen in ReviewState.values:
            item.review_state = seen
        note = _reason(request)
        user = request.user
        try:
            if decision == "claim":
                claim_take(trajectory=item, moderator=user)
                done = "Claimed: no one else can decide it until your claim expires."
            elif decision == "release":
                claim_release(trajectory=item, moderator=user)
                done = "Claim released."
            elif decision == "approve":
                trajectory_approve(trajectory=item, moderator=user, note=note)
                done = "Approved."
            elif decision == "reject":
                if not note:
                    raise ModerationError("give a reason to reject: it is sent to the owner")
                trajectory_reject(trajectory=item, moderator=user, note=note)
                done = "Rejected; the owner is told why and can ask for a second look."
            elif decision == "redact_approve":
                values = (request.POST.get("redact") or "").splitlines()
                drops = request.POST.getlist("drop")
                if not any(value.strip() for value in values) and not drops:
                    raise ModerationError(
                        "give the values to redact, one per line, or tick the images to drop"
                    )
                trajectory_redact_approve(
                    trajectory=item, moderator=user, values=values, note=note, drop_images=drops
                )
                done = (
                    "Redacted and approved."
                    if not drops
                    else (
                        f"Redacted and approved; {len(drops)} image{'s' if len(drops) != 1 else ''} "
                        "replaced by a placeholder."
                    )
                )
            elif decision == "drop_images":
                drops = request.POST.getlist("drop")
                if not drops:
                    raise ModerationError("tick the images to drop")
                for sha in drops:
                    image_drop(trajectory=item, moderator=user, sha256=sha, note=note)
                done = (
                    f"{len(drops)} image{'s' if len(drops) != 1 else ''} dropped: everyone but the "
                    "owner and moderators sees a placeholder. Approve when the rest is fine."
                )
            elif decision == "hide":
                trajectory_hide(trajectory=item, moderator=user, note=note)
                done = "Hidden; the owner is told why."
            elif decision == "dismiss_reports":
                count = reports_dismiss(trajectory=item, moderator=user, note=note)
                done = (
                    f"{count} report{'s' if count != 1 else ''} dismissed; the reporters with an "
                    "account are told. It is public (again, if the reports held it)."
                )
            elif decision == "uphold":
                appeal_decline(trajectory=item, moderator=user, note=note)
                done = "Rejection upheld; the contributor is told why."
            else:
                request_id = request.POST.get("takedown", "")
                takedown = (
                    TakedownRequest.objects.select_related("trajectory")
                    .filter(pk=int(request_id) if request_id.isdigit() else 0, trajectory=item)
                    .first()
                )
                if takedown is None:
                    raise ModerationError("no such takedown request on this trajectory")
                grant = decision == "grant_takedown"
                takedown_decide(request=takedown, moderator=user, grant=grant, note=note)
                done = (
                    "Takedown granted: hidden, both sides told."
                    if grant
                    else "Takedown declined; the requester is told."
                )
        except (ModerationError, PermissionDenied) as error:
            self.message_user(request, f"Nothing was done: {error}", messages.WARNING)
            return HttpResponseRedirect(request.path)
        self.message_user(request, done, messages.SUCCESS)
        if decision in ("claim", "release", "drop_images"):
            return HttpResponseRedirect(request.path)
        return HttpResponseRedirect(reverse("admin:moderation_queueitem_changelist"))


admin.site.unregister(Trajectory)
admin.site.register(Trajectory, ModerationTrajectoryAdmin)


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
        ids = queryset.filter(resolved_at__isnull=True).values("trajectory_id")
        dismissed, refused = 0, []
        for trajectory in Trajectory.objects.filter(pk__in=ids):
            try:
                dismissed += reports_dismiss(
                    trajectory=trajectory, moderator=request.user, note=_reason(request)
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
