"""The review queue (Moderation → Review queue) and an item's own page: everything needed to
decide, and the decisions (claim, approve, reject with a reason, redact and approve, drop
images, hide, dismiss the reports, uphold a rejection, grant or decline a takedown).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from apps.core.admin import ReadOnlyAdmin
from apps.moderation.admin.actions import DecisionActions, posted_reason
from apps.moderation.admin.filters import (
    AgeFilter,
    AgentFilter,
    FindingKindFilter,
    ReportsFilter,
    WhyFilter,
)
from apps.moderation.claims import claim_release, claim_take
from apps.moderation.errors import ModerationError
from apps.moderation.models import QueueItem
from apps.moderation.selectors import (
    review_details,
    review_item,
    review_queue,
    takedown_on,
)
from apps.moderation.services.appeals import appeal_decline
from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.redact import image_clear, image_drop, trajectory_redact_approve
from apps.moderation.services.reports import reports_dismiss
from apps.moderation.services.takedowns import takedown_decide
from apps.trajectories.admin import TrajectoryAdmin, user_label
from apps.trajectories.image_rule import image_rule, publish_unread
from apps.trajectories.models import ReviewState, Trajectory
from apps.trajectories.redaction import redactor

DECISIONS = {
    "claim",
    "release",
    "approve",
    "reject",
    "redact_approve",
    "drop_images",
    "clear_images",
    "hide",
    "uphold",
    "dismiss_reports",
    "grant_takedown",
    "decline_takedown",
}


@admin.register(QueueItem)
class QueueItemAdmin(DecisionActions, ReadOnlyAdmin):
    # Seven narrow columns: at 1366 px, beside the admin's menu and the filters, the list has
    # about 700 px, and with a column for the state and a full date its last ones were cut off.
    # The state is part of "why" (held, rejected, hidden) and the date is the time waited.
    list_display = [
        "short_id",
        "title_shown",
        "why",
        "findings",
        "owner_shown",
        "claim_shown",
        "waiting",
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

    class Media:
        css = {"all": ["css/moderation-admin.css"]}

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

    @admin.display(description="why", ordering="review_state")
    def why(self, obj) -> str:
        reasons = []
        if obj.review_state != ReviewState.APPROVED:
            reasons.append(str(obj.review_state))  # held, rejected, hidden (what it is now)
        if obj.open_reports:
            reasons.append(f"{obj.open_reports} report{'s' if obj.open_reports != 1 else ''}")
        if obj.open_takedowns:
            reasons.append("takedown request")
        if obj.open_appeals:
            reasons.append("appeal")
        if obj.unchecked_images and not publish_unread():
            count = len(obj.unchecked_images)
            reasons.append(f"{count} image{'s' if count != 1 else ''} to check")
        if obj.flagged_images:
            count = len(obj.flagged_images)
            reasons.append(f"{count} image{'s' if count != 1 else ''} with findings")
        return ", ".join(reasons)

    @admin.display(description="findings")
    def findings(self, obj) -> str:
        # Values, not occurrences: one key pasted nine times is one finding, found 9 times.
        if not obj.num_findings:
            return "none"
        shown = (
            f"{obj.num_findings} ({obj.num_secrets} secret{'s' if obj.num_secrets != 1 else ''})"
        )
        if obj.num_found > obj.num_findings:
            shown += f", found {obj.num_found} times"
        return shown

    @admin.display(description="claimed by")
    def claim_shown(self, obj) -> str:
        if not obj.claimed_by:
            return "—"
        return f"{obj.claimed_by} until {timezone.localtime(obj.claimed_until):%H:%M}"

    @admin.display(description="waiting", ordering="created_at")
    def waiting(self, obj) -> str:
        """How long since it was shared, short ("3 h", "2 d"), with the date on hover."""
        return format_html(
            '<time datetime="{}" title="{}">{}</time>',
            obj.created_at.isoformat(),
            f"{timezone.localtime(obj.created_at):%Y-%m-%d %H:%M}",
            _age(timezone.now() - obj.created_at),
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The item's own page: everything needed to decide, and the decisions."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        item = review_item(object_id)
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
            **review_details(item),
            "image_rule": image_rule(),
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
        try:
            done = _apply(request, item, decision)
        except (ModerationError, PermissionDenied) as error:
            self.message_user(request, f"Nothing was done: {error}", messages.WARNING)
            return HttpResponseRedirect(request.path)
        self.message_user(request, done, messages.SUCCESS)
        if decision in ("claim", "release", "drop_images", "clear_images"):
            return HttpResponseRedirect(request.path)
        return HttpResponseRedirect(reverse("admin:moderation_queueitem_changelist"))


def _age(delta: timedelta) -> str:
    minutes = max(0, int(delta.total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // (24 * 60)} d"


def _apply(request, item: Trajectory, decision: str) -> str:
    """Take one decision of the item's page through its service; what the moderator is told."""
    note = posted_reason(request)
    user = request.user
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
    elif decision in ("drop_images", "clear_images"):
        done = _images_decision(request, item, decision, note)
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
        takedown = takedown_on(item, request_id)
        if takedown is None:
            raise ModerationError("no such takedown request on this trajectory")
        grant = decision == "grant_takedown"
        takedown_decide(request=takedown, moderator=user, grant=grant, note=note)
        done = (
            "Takedown granted: hidden, both sides told."
            if grant
            else "Takedown declined; the requester is told."
        )
    return done


def _images_decision(request, item: Trajectory, decision: str, note: str) -> str:
    """Drop the ticked images (they show a secret) or clear them (a moderator looked: nothing
    to hide, so they are public though OCR did not read them)."""
    user = request.user
    if decision == "drop_images":
        drops = request.POST.getlist("drop")
        if not drops:
            raise ModerationError("tick the images to drop")
        for sha in drops:
            image_drop(trajectory=item, moderator=user, sha256=sha, note=note)
        return (
            f"{len(drops)} image{'s' if len(drops) != 1 else ''} dropped: everyone but the "
            "owner and moderators sees a placeholder. Approve when the rest is fine."
        )
    clears = request.POST.getlist("clear")
    if not clears:
        raise ModerationError("tick the images to clear")
    for sha in clears:
        image_clear(trajectory=item, moderator=user, sha256=sha, note=note)
    return (
        f"{len(clears)} image{'s' if len(clears) != 1 else ''} cleared: public on the site "
        "and in releases wherever they appear."
    )
