"""The moderators' side of step feedback and readers' reports: hold, show or reject a
correction or comment (the review queue in Django admin), delete one, and report one. Each
action that changes something leaves exactly one entry in the site's audit log (audit.py),
written in the same transaction as the change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core import ratelimit, signing
from apps.core.ratelimit import RateLimited
from apps.feedback.audit import feedback_audit
from apps.feedback.counts import trajectory_counts_recount
from apps.feedback.errors import FeedbackError
from apps.feedback.models import HOLDER_KEY, NoteKind, NoteReport, NoteState, ReportReason, StepNote
from apps.feedback.selectors import feedback_changed
from apps.feedback.services import REPORT_TEXT_MAX, Author, clean_text, tell_owner
from apps.moderation.audit import reviewer_kind
from apps.moderation.models import ActorKind, AuditAction

if TYPE_CHECKING:
    from apps.accounts.models import User

MODERATOR_ACTIONS = {
    NoteState.SHOWN: AuditAction.FEEDBACK_SHOWN,
    NoteState.REJECTED: AuditAction.FEEDBACK_REJECTED,
    NoteState.HELD: AuditAction.FEEDBACK_HELD,
}
HELD_BY_MODERATOR = "held by a moderator"


def _check_moderator(moderator: User) -> None:
    if not getattr(moderator, "is_moderator", False):
        raise FeedbackError("only moderators decide on held feedback", status_code=403)


def note_decide(*, note: StepNote, moderator: User, approve: bool) -> bool:
    """A moderator shows a held (or reported) note, or rejects it. Conditional: False when
    another decision got there first. Its open reports are resolved either way. One audit
    entry: the decision (with how many reports it resolved), or, when the note already stood
    so, the reports' resolution; none when nothing changed."""
    _check_moderator(moderator)
    target = NoteState.SHOWN if approve else NoteState.REJECTED
    now = timezone.now()
    with transaction.atomic():
        changed = (
            StepNote.objects.filter(pk=note.pk)
            .exclude(state=target)
            .update(state=target, decided_by=moderator, decided_at=now, hold_reason="")
        )
        resolved = NoteReport.objects.filter(note=note, resolved_at__isnull=True).update(
            resolved_at=now
        )
        if changed or resolved:
            feedback_audit(
                MODERATOR_ACTIONS[target] if changed else AuditAction.FEEDBACK_REPORTS_RESOLVED,
                trajectory=note.trajectory,
                note=note,
                actor_kind=reviewer_kind(moderator),
                actor=moderator,
                reports_resolved=resolved,
                **({} if changed else {"state": str(target)}),
            )
        trajectory_counts_recount(trajectory_id=note.trajectory_id)
    feedback_changed(note.trajectory_id)
    if changed and approve and note.kind == NoteKind.CORRECTION:
        author = Author(user=note.author, is_holder=note.author_key == HOLDER_KEY)
        tell_owner(note.trajectory, author, kind="corrected", step=note.step)
    return bool(changed)


def note_hold(*, note: StepNote, moderator: User) -> bool:
    """A moderator holds a shown note (a report below the threshold, something the scan
    missed): only its author and moderators read it until a decision. Its reports stay open
    for that decision. False when it was not shown (held already, or rejected)."""
    _check_moderator(moderator)
    with transaction.atomic():
        changed = StepNote.objects.filter(pk=note.pk, state=NoteState.SHOWN).update(
            state=NoteState.HELD,
            hold_reason=HELD_BY_MODERATOR,
            decided_by=moderator,
            decided_at=timezone.now(),
        )
        if changed:
            feedback_audit(
                AuditAction.FEEDBACK_HELD,
                trajectory=note.trajectory,
                note=note,
                actor_kind=reviewer_kind(moderator),
                actor=moderator,
            )
            trajectory_counts_recount(trajectory_id=note.trajectory_id)
    feedback_changed(note.trajectory_id)
    return bool(changed)


def note_remove(*, note: StepNote, moderator: User) -> bool:
    """A moderator deletes a correction or comment (and its reports) for good: what no
    decision should keep, such as a secret that must not stay in the database. False when it
    was gone already."""
    _check_moderator(moderator)
    with transaction.atomic():
        reports = NoteReport.objects.filter(note_id=note.pk, resolved_at__isnull=True).count()
        deleted, _ = StepNote.objects.filter(pk=note.pk).delete()
        if deleted:
            feedback_audit(
                AuditAction.FEEDBACK_DELETED,
                trajectory=note.trajectory,
                note=note,
                actor_kind=reviewer_kind(moderator),
                actor=moderator,
                reports_resolved=reports,
            )
            trajectory_counts_recount(trajectory_id=note.trajectory_id)
    feedback_changed(note.trajectory_id)
    return bool(deleted)


def note_report(
    *, note: StepNote, reason: str, text: str = "", user: User | None, client_ip: str
) -> NoteReport:
    """A reader reports a correction or comment; enough distinct reporters (accounts, or
    addresses for readers without one) hold it for a moderator. Reporting again while one's
    report is open adds nothing. Audited once per report, with whether it held the note; the
    reporter's words are not copied into the audit entry, only the reason's category."""
    if reason not in ReportReason.values:
        raise FeedbackError(f"reason must be one of {', '.join(ReportReason.values)}", "reason")
    text = clean_text(text, limit=REPORT_TEXT_MAX, field="text")
    verdict = ratelimit.hit(
        "feedback.reports", client_ip or "-", settings.TRAJHUB_REPORTS_PER_HOUR, 3600
    )
    if not verdict.allowed:
        raise RateLimited(
            "too many reports from your network in the last hour; try again later",
            retry_after=verdict.retry_after,
        )
    address = signing.digest("trajhub.feedback.reporter", client_ip or "-")
    key = f"user:{user.pk}" if user is not None else f"addr:{address[:32]}"
    with transaction.atomic():
        existing = NoteReport.objects.filter(
            note=note, reporter_key=key, resolved_at__isnull=True
        ).first()
        if existing is not None:
            return existing
        try:
            with transaction.atomic():
                report = NoteReport.objects.create(
                    note=note,
                    reason=reason,
                    text=text,
                    reporter=user,
                    reporter_key=key,
                    address_key=address,
                )
        except IntegrityError:  # the same reporter's report, a moment ago
            return NoteReport.objects.get(note=note, reporter_key=key, resolved_at__isnull=True)
        reporters = (
            NoteReport.objects.filter(note=note, resolved_at__isnull=True)
            .values("address_key")
            .distinct()
            .count()
        )
        held = 0
        if reporters >= settings.TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT:
            held = StepNote.objects.filter(pk=note.pk, state=NoteState.SHOWN).update(
                state=NoteState.HELD, hold_reason=f"reported by {reporters} readers"
            )
            if held:
                trajectory_counts_recount(trajectory_id=note.trajectory_id)
        feedback_audit(
            AuditAction.FEEDBACK_REPORTED,
            trajectory=note.trajectory,
            note=note,
            actor_kind=ActorKind.REPORT,
            actor=user,
            report=report.pk,
            reason=reason,
            held=bool(held),
        )
    if held:
        feedback_changed(note.trajectory_id)
    return report
