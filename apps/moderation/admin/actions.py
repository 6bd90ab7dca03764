"""The bulk decisions of the review queue and the trajectory list: approve, reject (with a
reason), redact and approve, hide, dismiss the reports, claim, rescan. Each acts only on the rows
as the moderator saw them (row_token), through the services.
"""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.html import format_html

from apps.moderation.claims import claim_take
from apps.moderation.errors import ModerationError
from apps.moderation.selectors import flagged_images, review_states
from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.redact import trajectory_redact_approve
from apps.moderation.services.reports import reports_dismiss
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory


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


def posted_reason(request) -> str:
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
    for pk, share_id, state_now in review_states(gone):
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
            service(
                trajectory=trajectory, moderator=request.user, note=posted_reason(request), **extra
            )
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
        if not posted_reason(request):
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
