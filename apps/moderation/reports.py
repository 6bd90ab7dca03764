"""Readers' reports, takedown requests and appeals: the ways people outside moderation put a
trajectory in the review queue.

- A report on a public trajectory is stored; enough of them from distinct accounts or client
  addresses within a window (TRAJHUB_REPORT_HOLD_COUNT, TRAJHUB_REPORT_WINDOW_SECONDS) hold it
  for a moderator (a conditional update from `approved`) and tell its owner. A moderator may
  dismiss the open reports (reports_dismiss): a trajectory they held is approved again, and the
  dismissed reporters never count again toward holding it. Reporters with an account are told
  the outcome of every decision on their report (notice "report_outcome").
- A takedown request is stored unconfirmed and a signed link is mailed to the requester; once
  confirmed it waits in the queue; a moderator grants it (the trajectory is hidden, or rejected
  if it was not approved) or declines it, and the outcome is mailed back.
- An appeal asks for a second look at a rejection, through the signed link of the rejection
  notice; it returns the trajectory to the queue with the contributor's words.

Email addresses never reach logs; client addresses are kept only as HMACs.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from apps.core import ratelimit, signing
from apps.core.ratelimit import RateLimited
from apps.moderation.audit import audit_record
from apps.moderation.errors import ModerationError
from apps.moderation.models import (
    ActorKind,
    Appeal,
    AuditAction,
    AuditEntry,
    Report,
    ReportReason,
    TakedownRequest,
    TakedownState,
)
from apps.trajectories.models import ReviewState, Trajectory
from apps.trajectories.services import announce_public_change

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)

TAKEDOWN_SALT = "trajhub.moderation.takedown"
APPEAL_SALT = "trajhub.moderation.appeal"
REPORTER_PURPOSE = "trajhub.moderation.reporter"
# Appeals per trajectory, ever: a second look, not a channel for endless requests.
MAX_APPEALS = 3
TEXT_LIMIT = 5000


def _address_key(client_ip: str) -> str:
    # sha1: the reports stored before issue 21 hold sha1 digests (Report.address_key).
    return signing.digest(REPORTER_PURPOSE, client_ip or "-", algorithm="sha1")


def _count(scope: str, key: str, *, limit: int, seconds: int, message: str) -> None:
    """One more against `key` in its window; RateLimited past `limit`."""
    verdict = ratelimit.hit(scope, key, limit, seconds)
    if not verdict.allowed:
        raise RateLimited(message, retry_after=verdict.retry_after)


def _count_submission(client_ip: str) -> None:
    """One more report or request from this address this hour; refused past the limit."""
    _count(
        "moderation.reports",
        client_ip or "-",
        limit=settings.TRAJHUB_REPORTS_PER_HOUR,
        seconds=3600,
        message="too many reports from your network in the last hour; try again later",
    )


# Confirmation mails to one address per day, whatever client asks: the form must not be a way
# to flood someone's mailbox from many addresses.
TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY = 3


def _count_takedown_recipient(email: str) -> None:
    _count(
        "moderation.takedown-recipient",
        signing.canonical_email(email),
        limit=TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY,
        seconds=24 * 3600,
        message=(
            "too many takedown confirmation emails to this address today "
            f"(at most {TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY} a day); check its inbox for the "
            "links already sent, or try again tomorrow"
        ),
    )


# --- Reports ------------------------------------------------------------------------------------


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
    _count_submission(client_ip)
    reporter_key = f"user:{user.pk}" if user is not None else f"addr:{_address_key(client_ip)}"
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
            address_key=_address_key(client_ip),
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
    from apps.moderation.services import trajectory_approve

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
            actor_kind=_reviewer(moderator),
            reason=note,
            details={"reports": dismissed, "state": locked.review_state},
        )
        if held:
            # Back to where the reports took it from, through the approval (audit, owner told).
            trajectory_approve(trajectory=locked, moderator=moderator, note=note)
    trajectory.refresh_from_db(fields=["review_state", "published_at"])
    return dismissed


# --- Takedown requests --------------------------------------------------------------------------


def takedown_request(
    *, trajectory: Trajectory, email: str, text: str, client_ip: str = ""
) -> TakedownRequest:
    """Store a takedown request and mail the requester a signed confirmation link."""
    if not email:
        raise ModerationError("an email address is needed to confirm the request")
    if not text.strip():
        raise ModerationError("say what in the trajectory is yours (which personal data)")
    _count_submission(client_ip)
    _count_takedown_recipient(email)
    request = TakedownRequest.objects.create(
        trajectory=trajectory, email=email, text=text[:TEXT_LIMIT]
    )
    _mail_after_commit(request.pk, "confirm")
    return request


def takedown_token(request: TakedownRequest) -> str:
    return signing.link_token(TAKEDOWN_SALT, request.pk)


def takedown_confirm_url(request: TakedownRequest) -> str:
    return settings.SITE_URL + reverse("takedown-confirm", args=[takedown_token(request)])


def takedown_from_token(token: str) -> TakedownRequest | None:
    """The request a confirmation link names, while the link is valid."""
    try:
        pk = signing.link_payload(
            TAKEDOWN_SALT, token, max_age=settings.TRAJHUB_TAKEDOWN_LINK_SECONDS, expect=int
        )
    except signing.BadLink:
        return None
    return TakedownRequest.objects.select_related("trajectory").filter(pk=pk).first()


def takedown_confirm(*, request: TakedownRequest) -> bool:
    """The requester followed the link: the request goes to the queue (once)."""
    with transaction.atomic():
        confirmed = (
            TakedownRequest.objects.filter(pk=request.pk, state=TakedownState.UNCONFIRMED).update(
                state=TakedownState.OPEN, confirmed_at=timezone.now()
            )
            == 1
        )
        if confirmed:
            audit_record(
                action=AuditAction.TAKEDOWN_REQUESTED,
                share_id=request.trajectory.share_id,
                actor_kind=ActorKind.TAKEDOWN,
                reason=request.text[:500],
            )
    return confirmed


def takedown_decide(
    *, request: TakedownRequest, moderator: User, grant: bool, note: str = ""
) -> TakedownRequest:
    """Grant (the trajectory leaves every public surface: hidden if it was approved, else
    rejected; its owner is told) or decline a confirmed request; the outcome is mailed back."""
    from apps.moderation.services import _moderate

    if not getattr(moderator, "is_moderator", False):
        raise ModerationError("only moderators can decide takedown requests")
    trajectory = request.trajectory
    with transaction.atomic():
        state = TakedownState.GRANTED if grant else TakedownState.DECLINED
        decided = (
            TakedownRequest.objects.filter(pk=request.pk, state=TakedownState.OPEN).update(
                state=state, decided_at=timezone.now(), decision_note=note
            )
            == 1
        )
        if not decided:
            raise ModerationError("this takedown request is not open (decided already?)")
        if grant and trajectory.review_state not in (ReviewState.HIDDEN, ReviewState.REJECTED):
            # The owner gets the takedown notice below, not a second one for the hiding.
            to = (
                ReviewState.HIDDEN
                if trajectory.review_state == ReviewState.APPROVED
                else ReviewState.REJECTED
            )
            _moderate(trajectory=trajectory, moderator=moderator, note=note, to=to, notify=False)
        audit_record(
            action=AuditAction.TAKEDOWN_GRANTED if grant else AuditAction.TAKEDOWN_DECLINED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=_reviewer(moderator),
            reason=note,
        )
        if grant:
            from apps.accounts.notices import notice_send

            notice_send(kind="takedown", trajectory=trajectory, reason=note)
        _mail_after_commit(request.pk, "outcome")
    request.refresh_from_db()
    return request


def _reviewer(moderator: User) -> ActorKind:
    from apps.moderation.audit import reviewer_kind

    return reviewer_kind(moderator)


def _mail_after_commit(request_id: int, what: str) -> None:
    from apps.moderation.tasks import takedown_email

    def queue() -> None:
        try:
            takedown_email.delay(request_id, what)
        except Exception:  # a broker that is down must not break the committed request
            logger.exception(
                "could not queue the %s email of takedown request %s", what, request_id
            )

    transaction.on_commit(queue)


def takedown_mail(*, request_id: int, what: str) -> bool:
    """Send the confirmation link ("confirm") or the outcome ("outcome") to the requester; the
    address is erased once the outcome is sent. The task calls this."""
    from django.core.mail import EmailMessage
    from django.template.loader import render_to_string

    request = TakedownRequest.objects.select_related("trajectory").filter(pk=request_id).first()
    if request is None or not request.email:
        return False
    context = {
        "request": request,
        "share_id": request.trajectory.share_id,
        "site_name": settings.SITE_NAME,
        "confirm_url": takedown_confirm_url(request),
        "granted": request.state == TakedownState.GRANTED,
        "note": request.decision_note,
    }
    template = "moderation/emails/takedown_" + ("confirm" if what == "confirm" else "outcome")
    subject = " ".join(render_to_string(f"{template}_subject.txt", context).split())[:200]
    EmailMessage(
        subject=subject, body=render_to_string(f"{template}.txt", context), to=[request.email]
    ).send()
    if what == "outcome":
        TakedownRequest.objects.filter(pk=request.pk).update(email="")
    logger.info("takedown request %s: %s email sent", request.pk, what)
    return True


# --- Appeals ------------------------------------------------------------------------------------


def appeal_url(trajectory: Trajectory) -> str:
    """The signed link of a rejection notice: whoever received the notice may appeal."""
    token = signing.link_token(APPEAL_SALT, trajectory.share_id)
    return settings.SITE_URL + reverse("trajectory-appeal", args=[token])


def appeal_trajectory(token: str) -> Trajectory | None:
    try:
        share_id = signing.link_payload(
            APPEAL_SALT, token, max_age=settings.TRAJHUB_APPEAL_LINK_SECONDS, expect=str
        )
    except signing.BadLink:
        return None
    return Trajectory.objects.filter(share_id=share_id).first()


def appeal_submit(*, trajectory: Trajectory, text: str) -> Appeal:
    """Ask for a second look at a rejection: back to the queue with these words."""
    text = text.strip()
    if not text:
        raise ModerationError("say why it should be published after all")
    with transaction.atomic():
        locked = Trajectory.objects.select_for_update().filter(pk=trajectory.pk).first()
        if locked is None or locked.review_state != ReviewState.REJECTED:
            raise ModerationError("only a rejected trajectory can be appealed")
        appeals = Appeal.objects.filter(trajectory=trajectory)
        if appeals.filter(resolved_at__isnull=True).exists():
            raise ModerationError("a second look is already asked for; a moderator will answer")
        if appeals.count() >= MAX_APPEALS:
            raise ModerationError("this trajectory has been looked at again already")
        appeal = Appeal.objects.create(trajectory=trajectory, text=text[:TEXT_LIMIT])
        audit_record(
            action=AuditAction.APPEALED,
            share_id=trajectory.share_id,
            actor_kind=ActorKind.OWNER if trajectory.owner_id else ActorKind.HOLDER,
            actor=trajectory.owner,
            reason=text[:500],
        )
    return appeal


def appeals_resolve(*, trajectory: Trajectory, resolution: str) -> int:
    return Appeal.objects.filter(trajectory=trajectory, resolved_at__isnull=True).update(
        resolved_at=timezone.now(), resolution=resolution[:20]
    )


def appeal_decline(*, trajectory: Trajectory, moderator: User, note: str) -> None:
    """Uphold the rejection after a second look; the contributor is told why."""
    if not getattr(moderator, "is_moderator", False):
        raise ModerationError("only moderators can answer appeals")
    with transaction.atomic():
        if not appeals_resolve(trajectory=trajectory, resolution="declined"):
            raise ModerationError("no open appeal on this trajectory")
        audit_record(
            action=AuditAction.APPEAL_DECLINED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=_reviewer(moderator),
            reason=note,
        )
        from apps.accounts.notices import notice_send

        notice_send(kind="rejected", trajectory=trajectory, reason=note)
