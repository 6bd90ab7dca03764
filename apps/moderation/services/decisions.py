"""The review state machine: every change of a trajectory's `review_state`, and what a
decision answers (the open reports and appeals).

- The scan's decisions: a pending trajectory approved or held (scan_decide), an approved one
  held again when a rescan finds a new secret (hold_after_rescan).
- The readers' reports: an approved trajectory held once enough readers reported it
  (reports_hold); a decision resolves the open reports (reports_resolve) and tells the
  reporters with an account, an approval resolves the open appeal (appeals_resolve).
- The moderators' decisions: approve, reject, hide (moderate, and the takedowns' grant).

Every change is a conditional update (`filter(pk=..., review_state=OLD).update(...) == 1`) and
leaves an AuditEntry. Reports, takedowns, appeals and the scan call this module; it calls none
of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, F, QuerySet, Value, When
from django.utils import timezone

from apps.moderation.audit import audit_record, reviewer_kind
from apps.moderation.claims import claim_blocking, claim_release
from apps.moderation.errors import ModerationError
from apps.moderation.models import ActorKind, Appeal, AuditAction, AuditEntry, Report, ReportReason
from apps.moderation.services.links import appeal_url
from apps.trajectories.models import ReviewState, Trajectory, Visibility
from apps.trajectories.services import announce_public_change

if TYPE_CHECKING:
    from datetime import datetime

    from apps.accounts.models import User


# --- The scan's decisions -----------------------------------------------------------------------


def scan_decision(counts: dict[str, int], distinct: int, in_images: bool = False) -> str:
    if settings.TRAJHUB_PREMODERATION:
        return ReviewState.HELD
    # A value in an image cannot be replaced by a placeholder: a moderator decides.
    if in_images:
        return ReviewState.HELD
    # Past this many distinct values (20,000 outputs with 15 emails each, say) redaction is no
    # longer a small edit of the text: a moderator looks before anyone else does.
    if distinct > settings.TRAJHUB_SCAN_MAX_DISTINCT:
        return ReviewState.HELD
    auto = set(settings.TRAJHUB_AUTO_REDACT_KINDS)
    if any(kind not in auto for kind in counts):
        return ReviewState.HELD
    return ReviewState.APPROVED


def published_at(now: datetime) -> Case:
    """Set published_at the first time a trajectory becomes public (approved while public)."""
    return Case(
        When(published_at__isnull=True, visibility=Visibility.PUBLIC, then=Value(now)),
        default=F("published_at"),
    )


def scan_decide(
    *,
    current: Trajectory,
    fields: dict[str, Any],
    counts: dict[str, int],
    distinct: int,
    in_images: bool,
) -> str | None:
    """The scan's decision on a pending trajectory, written with the scan's own `fields`
    (redactions, dropped images, scan version) in one conditional update from `pending`:
    approved (published if public) or held (a public one's owner is told why). Returns the new
    state, or None if the trajectory was no longer pending."""
    decision = scan_decision(counts, distinct, in_images)
    now = timezone.now()
    update: dict[str, Any] = {**fields, "review_state": decision, "scanned_at": now}
    if decision == ReviewState.APPROVED:
        update["published_at"] = published_at(now)
    changed = (
        Trajectory.objects.filter(pk=current.pk, review_state=ReviewState.PENDING).update(**update)
        == 1
    )
    if not changed:
        return None
    audit_record(
        actor_kind=ActorKind.SCAN,
        action=AuditAction.SCAN_APPROVED
        if decision == ReviewState.APPROVED
        else AuditAction.SCAN_HELD,
        share_id=current.share_id,
        details={
            "from": ReviewState.PENDING,
            "to": decision,
            "findings": counts,
            "distinct_values": distinct,
            "premoderation": bool(settings.TRAJHUB_PREMODERATION),
        },
    )
    if decision == ReviewState.HELD and current.visibility == Visibility.PUBLIC:
        _notify_held(current, counts)
    return decision


def hold_after_rescan(current: Trajectory, counts: dict[str, int]) -> bool:
    """A rescan found a secret the scan that approved it had not: approved -> held (a public
    one's owner is told). False when it was no longer approved."""
    moved = (
        Trajectory.objects.filter(pk=current.pk, review_state=ReviewState.APPROVED).update(
            review_state=ReviewState.HELD
        )
        == 1
    )
    if moved:
        audit_record(
            actor_kind=ActorKind.SCAN,
            action=AuditAction.SCAN_HELD,
            share_id=current.share_id,
            details={
                "from": ReviewState.APPROVED,
                "to": ReviewState.HELD,
                "findings": counts,
                "rescan": True,
            },
        )
        if current.visibility == Visibility.PUBLIC:
            _notify_held(current, counts)
    return moved


def _notify_held(trajectory: Trajectory, counts: dict[str, int]) -> None:
    """Tell the owner why the scan held it: the kinds found and how often, never a value."""
    from apps.accounts.notices import notice_send

    if counts:
        found = ", ".join(f"{count} × {kind}" for kind, count in sorted(counts.items()))
        why = f"The automatic check found: {found}."
    else:
        why = "Every public trajectory is looked at by a moderator before it is published."
    notice_send(kind="held", trajectory=trajectory, reason=why)


# --- Readers' reports and appeals ------------------------------------------------------------


def reports_hold(*, trajectory: Trajectory, open_reports: QuerySet[Report], reporters: int) -> bool:
    """Enough distinct readers reported it: an approved trajectory is held for a moderator (a
    conditional update from `approved`) and its owner told. False when it was not approved."""
    held = (
        Trajectory.objects.filter(pk=trajectory.pk, review_state=ReviewState.APPROVED).update(
            review_state=ReviewState.HELD
        )
        == 1
    )
    if not held:
        return False  # already waiting for a moderator, or a moderator decided otherwise
    reasons = sorted(set(open_reports.values_list("reason", flat=True)))
    why = ", ".join(ReportReason(reason).label.lower() for reason in reasons)
    announce_public_change([trajectory.pk])
    audit_record(
        action=AuditAction.REPORTS_HELD,
        share_id=trajectory.share_id,
        actor_kind=ActorKind.REPORT,
        reason=why,
        details={"from": ReviewState.APPROVED, "to": ReviewState.HELD, "reporters": reporters},
    )
    from apps.accounts.notices import notice_send

    notice_send(
        kind="reported",
        trajectory=trajectory,
        reason=f"{reporters} readers reported it ({why}). It is hidden until a moderator decides.",
    )
    return True


# The resolution of reports a moderator dismissed (the others are the state decided).
DISMISSED = "dismissed"
# Resolutions whose reporters never count again toward holding that trajectory.
OVERRULED = (ReviewState.APPROVED, DISMISSED)

# What a reporter with an account is told, by resolution. Never the trajectory's text, nor the
# moderator's note (written for the owner).
OUTCOMES = {
    DISMISSED: (
        "Your report was dismissed: the moderator found nothing to remove, and the trajectory "
        "stays published."
    ),
    ReviewState.APPROVED: (
        "The moderator reviewed it and it stays published (anything a moderator redacted is "
        "replaced by a placeholder)."
    ),
    ReviewState.HIDDEN: "The trajectory was hidden: it is no longer public.",
    ReviewState.REJECTED: "The trajectory was rejected: it is no longer public.",
}


def reports_resolve(*, trajectory: Trajectory, resolution: str) -> int:
    """A moderator decided: the open reports are answered (new ones count from now), and the
    reporters with an account are told the outcome."""
    resolution = resolution[:20]
    open_reports = Report.objects.filter(trajectory=trajectory, resolved_at__isnull=True)
    reporter_ids = set(
        open_reports.filter(reporter__isnull=False).values_list("reporter_id", flat=True)
    )
    resolved = open_reports.update(resolved_at=timezone.now(), resolution=resolution)
    if reporter_ids and resolution in OUTCOMES:
        _tell_reporters(trajectory, sorted(reporter_ids), OUTCOMES[resolution])
    return resolved


def _tell_reporters(trajectory: Trajectory, reporter_ids: list[int], outcome: str) -> None:
    from apps.accounts.models import User
    from apps.accounts.notices import notice_send

    for reporter in User.objects.filter(pk__in=reporter_ids, is_active=True):
        notice_send(kind="report_outcome", trajectory=trajectory, user=reporter, reason=outcome)


def appeals_resolve(*, trajectory: Trajectory, resolution: str) -> int:
    """Answer the open appeal ("granted" by an approval, "declined" when upheld)."""
    return Appeal.objects.filter(trajectory=trajectory, resolved_at__isnull=True).update(
        resolved_at=timezone.now(), resolution=resolution[:20]
    )


# --- Moderator actions --------------------------------------------------------------------------

ALLOWED_FROM = {
    ReviewState.APPROVED: (ReviewState.HELD, ReviewState.HIDDEN, ReviewState.REJECTED),
    ReviewState.REJECTED: (
        ReviewState.PENDING,
        ReviewState.HELD,
        ReviewState.APPROVED,
        ReviewState.HIDDEN,
    ),
    ReviewState.HIDDEN: (ReviewState.APPROVED,),
}
_AUDIT_ACTION = {
    ReviewState.APPROVED: AuditAction.APPROVED,
    ReviewState.REJECTED: AuditAction.REJECTED,
    ReviewState.HIDDEN: AuditAction.HIDDEN,
}


def moderate(
    *,
    trajectory: Trajectory,
    moderator: User,
    note: str,
    to: ReviewState,
    action: AuditAction | None = None,
    details: dict[str, Any] | None = None,
    notify: bool = True,
) -> Trajectory:
    """Move a trajectory from the state the moderator saw (the instance's) to `to`.

    Conditional on that state: of two moderators deciding at once, exactly one moves it; the
    other is told what happened meanwhile instead of overwriting it. An item another moderator
    has claimed (and whose claim has not expired) is theirs to decide.
    """
    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied("only moderators can review trajectories")
    allowed = ALLOWED_FROM[to]
    seen = trajectory.review_state
    if seen not in allowed:
        if seen == ReviewState.PENDING and to == ReviewState.APPROVED:
            raise ModerationError("not scanned yet: it can be approved after the scan")
        raise ModerationError(
            f"a {seen} trajectory cannot be {to}; allowed from: {', '.join(allowed)}"
        )
    blocking = claim_blocking(trajectory=trajectory, moderator=moderator)
    if blocking is not None:
        raise ModerationError(blocking.describe())
    with transaction.atomic():
        update: dict[str, Any] = {"review_state": to}
        if to == ReviewState.APPROVED:
            update["published_at"] = published_at(timezone.now())
        moved = Trajectory.objects.filter(pk=trajectory.pk, review_state=seen).update(**update)
        if moved != 1:
            raise ModerationError(_changed_meanwhile(trajectory, seen))
        announce_public_change([trajectory.pk])
        audit_record(
            action=action or _AUDIT_ACTION[to],
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={"from": seen, "to": to, **(details or {})},
        )
        claim_release(trajectory=trajectory, moderator=moderator)
        _answer_requests(trajectory, to)
        if notify:
            _notify_decision(trajectory, to, note, seen)
    trajectory.refresh_from_db(fields=["review_state", "published_at"])
    return trajectory


def _answer_requests(trajectory: Trajectory, to: str) -> None:
    """A decision answers the open reports, and an approval the open appeal."""
    reports_resolve(trajectory=trajectory, resolution=to)
    if to == ReviewState.APPROVED:
        appeals_resolve(trajectory=trajectory, resolution="granted")


def _notify_decision(trajectory: Trajectory, to: str, note: str, seen: str) -> None:
    """The owner (or the anonymous sharer's contact email) learns why; a rejection's notice
    carries the signed link of the appeal form. An approval of what the scan held answers the
    "waiting for a moderator" notice: that one is marked read, and this one says it is public."""
    from apps.accounts.notices import notice_send, notices_answered

    if to == ReviewState.APPROVED and seen == ReviewState.HELD:
        notices_answered(trajectory=trajectory, kind="held")
        notice_send(kind="approved", trajectory=trajectory, reason=note)
        return

    if to == ReviewState.REJECTED:
        notice_send(
            kind="rejected", trajectory=trajectory, reason=note, link=appeal_url(trajectory)
        )
    elif to == ReviewState.HIDDEN:
        notice_send(kind="hidden", trajectory=trajectory, reason=note)


def _changed_meanwhile(trajectory: Trajectory, seen: str) -> str:
    """What the losing moderator of a race is told: the state now and who set it."""
    now = Trajectory.objects.filter(pk=trajectory.pk).values_list("review_state", flat=True)
    state = now.first()
    if state is None:
        return "the trajectory no longer exists"
    last = AuditEntry.objects.filter(share_id=trajectory.share_id).first()
    by = f" by {last.actor_label}" if last is not None else ""
    return (
        f"changed by someone else meanwhile: it was {seen} when you looked, "
        f"it is now {state}{by}; nothing was done"
    )


def trajectory_approve(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Approve a held (or hidden, or rejected) trajectory: public if its owner made it public.

    A pending one must be scanned first, so that it is never shown without its redactions.
    """
    return moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.APPROVED)


def trajectory_reject(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Reject a trajectory: it is never public; a re-share of it stays rejected."""
    return moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.REJECTED)


def trajectory_hide(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Hide an approved trajectory from every public surface (e.g. after a report)."""
    return moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.HIDDEN)
