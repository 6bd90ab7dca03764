"""Readers' reports: a report on a public trajectory is stored; enough of them from distinct
accounts or client addresses within a window (TRAJHUB_REPORT_HOLD_COUNT,
TRAJHUB_REPORT_WINDOW_SECONDS) hold it for a moderator (decisions.reports_hold) and tell its
owner. A moderator may dismiss the open reports (reports_dismiss): a trajectory they held is
approved again, and the dismissed reporters never count again toward holding it. Reporters with
an account are told the outcome of every decision on their report (decisions.reports_resolve).

Email addresses never reach logs; client addresses are kept only as HMACs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.moderation.audit import audit_record, reviewer_kind
from apps.moderation.errors import ModerationError
from apps.moderation.models import ActorKind, AuditAction, AuditEntry, Report, ReportReason
from apps.moderation.services.decisions import (
    DISMISSED,
    OVERRULED,
    reports_hold,
    reports_resolve,
    trajectory_approve,
)
from apps.moderation.services.limits import TEXT_LIMIT, address_key, count_submission
from apps.trajectories.models import ReviewState, Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User


def report_submit(
    *,
    trajectory: Trajectory,
    reason: str,
    text: str = "",
    email: str = "",
    user: User | None = None,
    client_ip: str = "",
) -> Report:
    """Store a reader's report on a public trajectory; hold it once enough distinct readers
    reported it within the window. A reader reporting the same trajectory again while their
    report is open adds nothing."""
    if reason not in ReportReason.values:
        raise ModerationError(f"reason must be one of {', '.join(ReportReason.values)}")
    count_submission(client_ip)
    reporter_key = f"user:{user.pk}" if user is not None else f"addr:{address_key(client_ip)}"
    with transaction.atomic():
        existing = Report.objects.filter(
            trajectory=trajectory, reporter_key=reporter_key, resolved_at__isnull=True
        ).first()
        if existing is not None:
            return existing
        report = Report.objects.create(
            trajectory=trajectory,
            reason=reason,
            text=text[:TEXT_LIMIT],
            email=email,
            reporter=user,
            reporter_key=reporter_key,
            address_key=address_key(client_ip),
        )
        audit_record(
            action=AuditAction.REPORTED,
            share_id=trajectory.share_id,
            actor_kind=ActorKind.REPORT,
            actor=user,
            reason=ReportReason(reason).label,
        )
        _hold_if_reported_enough(trajectory)
    return report


def _hold_if_reported_enough(trajectory: Trajectory) -> bool:
    since = timezone.now() - timedelta(seconds=settings.TRAJHUB_REPORT_WINDOW_SECONDS)
    open_reports = Report.objects.filter(
        trajectory=trajectory, resolved_at__isnull=True, created_at__gte=since
    )
    # A reporter a moderator overruled (approved the trajectory after their report) never counts
    # again toward holding it: else the same few readers hold it again at once, every time.
    # Nor does one whose report a moderator dismissed.
    overruled = Report.objects.filter(trajectory=trajectory, resolution__in=OVERRULED).values(
        "reporter_key"
    )
    open_reports = open_reports.exclude(reporter_key__in=overruled)
    # Reporters behind one client address count as one (older rows without it, by their key).
    reporters = (
        open_reports.exclude(address_key="").values("address_key").distinct().count()
        + open_reports.filter(address_key="").values("reporter_key").distinct().count()
    )
    if reporters < settings.TRAJHUB_REPORT_HOLD_COUNT:
        return False
    return reports_hold(trajectory=trajectory, open_reports=open_reports, reporters=reporters)


# State changes in the audit log: the latest tells who put a held trajectory in `held`.
_STATE_CHANGES = (
    AuditAction.SCAN_APPROVED,
    AuditAction.SCAN_HELD,
    AuditAction.APPROVED,
    AuditAction.REDACTED_APPROVED,
    AuditAction.REJECTED,
    AuditAction.HIDDEN,
    AuditAction.REPORTS_HELD,
)


def _held_by_reports(trajectory: Trajectory) -> bool:
    if trajectory.review_state != ReviewState.HELD:
        return False
    last = (
        AuditEntry.objects.filter(share_id=trajectory.share_id, action__in=_STATE_CHANGES)
        .order_by("-created_at", "-id")
        .first()
    )
    return last is not None and last.action == AuditAction.REPORTS_HELD


def reports_dismiss(*, trajectory: Trajectory, moderator: User, note: str = "") -> int:
    """A moderator found nothing in the readers' reports: the open ones are resolved as
    dismissed (their reporters never count again toward holding it), and a trajectory that the
    reports held is approved again (public, its owner told). Returns the reports dismissed."""
    if not getattr(moderator, "is_moderator", False):
        raise ModerationError("only moderators can dismiss reports")
    with transaction.atomic():
        locked = Trajectory.objects.select_for_update().filter(pk=trajectory.pk).first()
        if locked is None:
            raise ModerationError("the trajectory no longer exists")
        held = _held_by_reports(locked)
        open_count = Report.objects.filter(trajectory=locked, resolved_at__isnull=True).count()
        if not open_count:
            raise ModerationError("no open reports on this trajectory")
        dismissed = reports_resolve(trajectory=locked, resolution=DISMISSED)
        audit_record(
            action=AuditAction.REPORTS_DISMISSED,
            share_id=locked.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={"reports": dismissed, "state": locked.review_state},
        )
        if held:
            # Back to where the reports took it from, through the approval (audit, owner told).
            trajectory_approve(trajectory=locked, moderator=moderator, note=note)
    trajectory.refresh_from_db(fields=["review_state", "published_at"])
    return dismissed
