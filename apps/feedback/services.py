"""Writes of step feedback: ratings, first-wrong marks, corrections and comments, the owner's
controls (audited), and the re-anchoring after a re-import is in reanchoring.py. Moderators'
decisions and readers' reports are in `moderating`. Each write that changes what lists count
recounts the trajectory (counts.py).

Every write of a reader's text is scanned (screening.py) before anyone else can read it and
held for a moderator when the scan finds something (or its account is new, by a setting);
every give is counted against the account's and the client address's hourly limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Notice
from apps.accounts.notices import notice_send
from apps.core import ratelimit
from apps.core.ratelimit import RateLimited
from apps.feedback import anchors, screening
from apps.feedback.audit import feedback_audit, owner_kind
from apps.feedback.counts import trajectory_counts_recount
from apps.feedback.errors import FeedbackError
from apps.feedback.models import (
    HOLDER_KEY,
    CorrectionMode,
    FeedbackLicence,
    FeedbackSwitch,
    FirstWrongMark,
    NoteKind,
    NoteState,
    Rating,
    StepNote,
    StepRating,
)
from apps.feedback.selectors import feedback_changed
from apps.moderation.models import AuditAction
from apps.trajectories.models import Event, Trajectory

if TYPE_CHECKING:
    from apps.accounts.models import User

CORRECTION_MAX = 20_000
COMMENT_MAX = 2_000
REPORT_TEXT_MAX = 2_000
DAY = timedelta(days=1)
# Given as a field's value, it leaves that piece of feedback as it is.
UNSET: Any = object()


@dataclass(frozen=True)
class Author:
    """Who gives feedback: an account, or the anonymous sharer with the share's password."""

    user: User | None
    is_holder: bool = False
    client_ip: str = ""

    @property
    def key(self) -> str:
        if self.user is not None:
            return f"user:{self.user.pk}"
        return HOLDER_KEY if self.is_holder else ""


def is_owner(trajectory: Trajectory, author: Author) -> bool:
    """The owner's account, or the password holder of an unclaimed anonymous share."""
    if author.user is not None:
        return trajectory.owner_id == author.user.pk
    return author.is_holder and trajectory.owner_id is None


def feedback_enabled(trajectory: Trajectory) -> bool:
    return not FeedbackSwitch.objects.filter(trajectory=trajectory).exists()


def _count(author: Author) -> None:
    """One give against the account's and the address's hourly limits."""
    checks = [
        (
            "feedback.address",
            author.client_ip or "-",
            settings.TRAJHUB_FEEDBACK_PER_HOUR_PER_ADDRESS,
            "from your network",
        ),
    ]
    if author.key:
        checks.append(
            ("feedback.account", author.key, settings.TRAJHUB_FEEDBACK_PER_HOUR, "from you")
        )
    for scope, key, limit, whom in checks:
        verdict = ratelimit.hit(scope, key, limit, 3600)
        if not verdict.allowed:
            raise RateLimited(
                f"too much feedback {whom} in the last hour (at most {limit}); try again later",
                retry_after=verdict.retry_after,
            )


def step_event(trajectory: Trajectory, step: int) -> Event:
    """The event at the page's step `step` (from 1), or a 404 naming it."""
    event = (
        Event.objects.filter(trajectory=trajectory, position=step - 1).first()
        if step >= 1
        else None
    )
    if event is None:
        raise FeedbackError(
            f"this trajectory has no step {step} (steps run from 1 to {trajectory.num_events})",
            "step",
            status_code=404,
        )
    return event


def _check_may_give(trajectory: Trajectory, author: Author) -> None:
    if not author.key:
        raise FeedbackError("sign in to give feedback", status_code=401)
    if not trajectory.is_public and not is_owner(trajectory, author):
        # Readers give feedback on public trajectories only; the owner on their own too.
        raise FeedbackError(
            "feedback on a trajectory that is not public is for its owner only",
            status_code=403,
        )
    if not feedback_enabled(trajectory):
        raise FeedbackError("the owner switched feedback off for this trajectory", status_code=403)


def clean_text(text: str, *, limit: int, field: str) -> str:
    if not isinstance(text, str):
        raise FeedbackError(f"{field} must be text", field)
    # PostgreSQL refuses NUL in text; no reader needs one.
    text = text.replace("\x00", "").strip()
    if len(text) > limit:
        raise FeedbackError(f"{field} is {len(text):,} characters; at most {limit:,}", field)
    return text


@dataclass(frozen=True)
class Given:
    """What one give changed (the API answers with the step's feedback after it)."""

    rating: StepRating | None = None
    first_wrong: FirstWrongMark | None = None
    correction: StepNote | None = None
    comment: StepNote | None = None


def step_feedback_give(
    *,
    trajectory: Trajectory,
    step: int,
    author: Author,
    rating: Any = UNSET,
    first_wrong: Any = UNSET,
    correction: Any = UNSET,
    mode: str = CorrectionMode.MESSAGE,
    comment: Any = UNSET,
) -> Given:
    """Give, change or take back feedback on one step; each argument left UNSET is kept.

    `rating` "good" | "bad" | None (take it back); `first_wrong` True | False; `correction`
    and `comment` text ("" deletes it). One rating and one correction and comment of each
    author per step, and one first-wrong mark per author per trajectory: giving again replaces.
    Only agent steps can be marked first wrong or corrected. Nothing is written unless all of
    it is valid."""
    _check_may_give(trajectory, author)
    event = step_event(trajectory, step)
    agent = anchors.is_agent_step(event)
    if rating is not UNSET and rating is not None and rating not in Rating.values:
        raise FeedbackError("rating must be good, bad or null", "rating")
    if first_wrong is not UNSET and not isinstance(first_wrong, bool):
        raise FeedbackError("first_wrong must be true or false", "first_wrong")
    if (first_wrong is True or (correction is not UNSET and correction)) and not agent:
        field = "first_wrong" if first_wrong is True else "correction"
        raise FeedbackError(
            f"step {step} is not one of the agent's actions or messages ({event.source} "
            f"{event.kind}): only those can be marked as the first wrong step or corrected",
            field,
        )
    if correction is not UNSET:
        correction = clean_text(correction, limit=CORRECTION_MAX, field="correction")
        if mode not in CorrectionMode.values:
            raise FeedbackError("mode must be message or action", "mode")
    if comment is not UNSET:
        comment = clean_text(comment, limit=COMMENT_MAX, field="comment")
    _count(author)
    fingerprint = anchors.fingerprint(event)
    anchor = {
        "trajectory": trajectory,
        "position": event.position,
        "author": author.user,
        "author_key": author.key,
    }
    with transaction.atomic():
        given_rating = _rate(anchor, fingerprint, rating) if rating is not UNSET else None
        given_mark = (
            _mark(anchor, fingerprint, first_wrong, author) if first_wrong is not UNSET else None
        )
        notes: dict[str, StepNote | None] = {}
        for kind, text in ((NoteKind.CORRECTION, correction), (NoteKind.COMMENT, comment)):
            if text is not UNSET:
                notes[kind] = _write_note(
                    anchor, fingerprint, kind=kind, text=text, mode=mode, event=event
                )
        if first_wrong is not UNSET or correction is not UNSET:
            trajectory_counts_recount(trajectory_id=trajectory.pk)
    correction_note = notes.get(NoteKind.CORRECTION)
    if correction_note is not None and correction_note.state == NoteState.SHOWN:
        tell_owner(trajectory, author, kind="corrected", step=step)
    if given_mark is not None:
        tell_owner(trajectory, author, kind="flagged", step=given_mark.step)
    return Given(given_rating, given_mark, correction_note, notes.get(NoteKind.COMMENT))


def _rate(anchor: dict[str, Any], fingerprint: str, value: str | None) -> StepRating | None:
    keys = {name: anchor[name] for name in ("trajectory", "position", "author_key")}
    if value is None:
        StepRating.objects.filter(**keys).delete()
        return None
    rating, _ = StepRating.objects.update_or_create(
        **keys,
        defaults={
            "value": value,
            "fingerprint": fingerprint,
            "outdated": False,
            "author": anchor["author"],
        },
    )
    return rating


def _mark(
    anchor: dict[str, Any], fingerprint: str, on: bool, author: Author
) -> FirstWrongMark | None:
    """Set (or move) the author's first-wrong mark to this step, or take it off this step."""
    mine = FirstWrongMark.objects.filter(
        trajectory=anchor["trajectory"], author_key=anchor["author_key"]
    )
    if not on:
        mine.filter(position=anchor["position"]).delete()
        return None
    existing = mine.first()
    if existing is not None and existing.position == anchor["position"]:
        return None  # already there: nothing new to tell anyone
    mark, _ = FirstWrongMark.objects.update_or_create(
        trajectory=anchor["trajectory"],
        author_key=anchor["author_key"],
        defaults={
            "position": anchor["position"],
            "fingerprint": fingerprint,
            "outdated": False,
            "author": anchor["author"],
        },
    )
    return mark


def _write_note(
    anchor: dict[str, Any], fingerprint: str, *, kind: str, text: str, mode: str, event: Event
) -> StepNote | None:
    keys = {name: anchor[name] for name in ("trajectory", "position", "author_key")}
    if not text:
        StepNote.objects.filter(**keys, kind=kind).delete()
        return None
    trajectory = anchor["trajectory"]
    action = kind == NoteKind.CORRECTION and mode == CorrectionMode.ACTION
    original = ""
    if action:
        # The step as everyone else reads it: a correction never starts from an original.
        redactions, _digest = screening.trajectory_map(trajectory)
        from apps.trajectories.redaction import redactor

        original = redactor(redactions)(anchors.action_text(event))
    findings = screening.scan_findings(text)
    reason = screening.hold_reason(findings=findings, user=anchor["author"])
    made = screening.make_shown(
        text=text, original=original, findings=findings, trajectory=trajectory
    )
    note, _ = StepNote.objects.update_or_create(
        **keys,
        kind=kind,
        defaults={
            "author": anchor["author"],
            "fingerprint": fingerprint,
            "outdated": False,
            "mode": mode if kind == NoteKind.CORRECTION else "",
            "text": text,
            "original": original,
            "findings": findings,
            "state": NoteState.HELD if reason else NoteState.SHOWN,
            "hold_reason": reason,
            "shown_text": made.text,
            "shown_original": made.original,
            "shown_map": made.map,
            # An edited correction is a new one: the owner's rejection was of the old text.
            "owner_rejected_at": None,
            "decided_by": None,
            "decided_at": None,
        },
    )
    return note


def tell_owner(trajectory: Trajectory, author: Author, *, kind: str, step: int) -> None:
    """Tell the owner someone corrected or flagged their trajectory: once per kind while the
    last such notice is unread (a reader correcting twenty steps sends one), never for the
    owner's own feedback."""
    if is_owner(trajectory, author):
        return
    if trajectory.owner_id is not None:
        unread = Notice.objects.filter(
            user_id=trajectory.owner_id,
            kind=kind,
            share_id=trajectory.share_id,
            read_at__isnull=True,
        )
        if unread.exists():
            return
    elif Notice.objects.filter(
        kind=kind, share_id=trajectory.share_id, created_at__gte=timezone.now() - DAY
    ).exists():
        return  # an anonymous sharer's address: at most one of each kind a day
    link = f"{settings.SITE_URL}/t/{trajectory.share_id}/steps/{step}/feedback"
    notice_send(kind=kind, trajectory=trajectory, link=link, reason=f"Step {step}.")


def licence_key(trajectory: Trajectory, author: Author) -> str:
    """Whose answer it is: the account, or the sharer of this one anonymous share."""
    return author.key if author.user is not None else f"{HOLDER_KEY}:{trajectory.share_id}"


def feedback_licence_answer(*, trajectory: Trajectory, author: Author, agreed: bool) -> str:
    """Record the author's answer to the licence question; returns the licence agreed ("" :
    declined). Asked with the first correction or comment; answering again replaces it."""
    if not author.key:
        raise FeedbackError("sign in to answer", status_code=401)
    licence = settings.TRAJHUB_LICENSE if agreed else ""
    FeedbackLicence.objects.update_or_create(
        author_key=licence_key(trajectory, author),
        defaults={"author": author.user, "license": licence},
    )
    return licence


def step_feedback_withdraw(*, trajectory: Trajectory, step: int, author: Author) -> None:
    """The author takes back everything they gave on one step (a first-wrong mark only if it
    is on this step)."""
    if not author.key:
        raise FeedbackError("sign in to take back your feedback", status_code=401)
    event = step_event(trajectory, step)
    mine = {"trajectory": trajectory, "position": event.position, "author_key": author.key}
    with transaction.atomic():
        for model in (StepRating, FirstWrongMark, StepNote):
            model.objects.filter(**mine).delete()
        trajectory_counts_recount(trajectory_id=trajectory.pk)


def note_delete(*, note: StepNote, author: Author) -> None:
    """The author takes back their correction or comment."""
    if note.author_key != author.key or not author.key:
        raise FeedbackError("only its author can delete this", status_code=403)
    with transaction.atomic():
        note.delete()
        trajectory_counts_recount(trajectory_id=note.trajectory_id)


def note_owner_reject(*, note: StepNote, author: Author, rejected: bool = True) -> StepNote:
    """The owner marks a correction rejected (wrong), or takes that back. Audited when it
    changes something."""
    if not is_owner(note.trajectory, author):
        raise FeedbackError("only the trajectory's owner can reject a correction", status_code=403)
    if note.kind != NoteKind.CORRECTION:
        raise FeedbackError("only corrections can be rejected", "note")
    rows = StepNote.objects.filter(pk=note.pk, owner_rejected_at__isnull=rejected)
    with transaction.atomic():
        if rows.update(owner_rejected_at=timezone.now() if rejected else None):
            feedback_audit(
                AuditAction.CORRECTION_REJECTED if rejected else AuditAction.CORRECTION_RESTORED,
                trajectory=note.trajectory,
                note=note,
                actor_kind=owner_kind(author.user),
                actor=author.user,
            )
        trajectory_counts_recount(trajectory_id=note.trajectory_id)
    # A rejected correction leaves the preference data.
    feedback_changed(note.trajectory_id)
    note.refresh_from_db()
    return note


def feedback_switch(*, trajectory: Trajectory, author: Author, on: bool) -> bool:
    """The owner switches feedback on or off for their trajectory; returns whether it is on.
    Audited when it changes something."""
    if not is_owner(trajectory, author):
        raise FeedbackError("only the owner can switch feedback on or off", status_code=403)
    with transaction.atomic():
        if on:
            changed = FeedbackSwitch.objects.filter(trajectory=trajectory).delete()[0] > 0
        else:
            changed = FeedbackSwitch.objects.get_or_create(trajectory=trajectory)[1]
        if changed:
            feedback_audit(
                AuditAction.FEEDBACK_ON if on else AuditAction.FEEDBACK_OFF,
                trajectory=trajectory,
                note=None,
                actor_kind=owner_kind(author.user),
                actor=author.user,
            )
        # Off hides what was given from the counts too; on brings it back.
        trajectory_counts_recount(trajectory_id=trajectory.pk)
    return on
