"""Reads of step feedback for the pages, the viewer's summary and the API.

Whether a caller sees a trajectory at all is decided before any of this, by the trajectory's
one visibility queryset (`visible_to()`, through the viewer's `trajectory_access` or the API's
`trajectory_get_visible`): feedback on a trajectory nobody else may see is never read for them.
Within a trajectory the caller sees, a correction or comment reaches them when it is `shown`
(passed the scan or a moderator) and feedback is switched on, or when it is their own;
moderators see everything, the owner also what is hidden while feedback is switched off.
Anyone but a note's author and moderators reads its redacted text (screening.shown).
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Q, QuerySet

from apps.feedback import anchors, screening, signals
from apps.feedback.models import (
    HOLDER_KEY,
    FeedbackLicence,
    FeedbackSwitch,
    FirstWrongMark,
    NoteKind,
    NoteState,
    StepNote,
    StepRating,
)

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.trajectories.models import Event, Trajectory

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reader:
    """Who reads (and may give) feedback on one trajectory they may see."""

    user: User | None
    is_owner: bool  # the owner's account, or the password holder of an anonymous share
    is_moderator: bool
    is_holder: bool = False

    @property
    def key(self) -> str:
        if self.user is not None:
            return f"user:{self.user.pk}"
        return HOLDER_KEY if self.is_holder else ""


def reader_for(trajectory: Trajectory, user: Any, *, is_holder: bool = False) -> Reader:
    signed_in = user is not None and getattr(user, "is_authenticated", False)
    account = user if signed_in else None
    holder = is_holder and trajectory.owner_id is None and account is None
    return Reader(
        user=account,
        is_owner=(account is not None and trajectory.owner_id == account.pk) or holder,
        is_moderator=bool(account is not None and account.is_moderator),
        is_holder=holder,
    )


def can_give(trajectory: Trajectory, reader: Reader, *, enabled: bool) -> bool:
    """Whether the page offers the forms (the services decide again on every give)."""
    if not reader.key or not enabled:
        return False
    return trajectory.is_public or reader.is_owner


def is_enabled(trajectory: Trajectory) -> bool:
    return not FeedbackSwitch.objects.filter(trajectory=trajectory).exists()


def visible_notes(trajectory: Trajectory, reader: Reader, *, enabled: bool) -> QuerySet[StepNote]:
    """The corrections and comments of a trajectory this reader may read."""
    notes = StepNote.objects.filter(trajectory=trajectory)
    if reader.is_moderator:
        return notes
    mine = Q(author_key=reader.key) if reader.key else Q(pk__in=[])
    if enabled or reader.is_owner:
        return notes.filter(Q(state=NoteState.SHOWN) | mine)
    return notes.filter(mine)


def counts_visible(reader: Reader, *, enabled: bool) -> bool:
    """Ratings and marks while feedback is off: the owner and moderators still see them."""
    return enabled or reader.is_owner or reader.is_moderator


@dataclass
class NoteView:
    """A correction or comment as this reader reads it."""

    id: str
    kind: str
    mode: str
    author: str
    text: str
    original: str
    diff: list[tuple[str, str]]  # (" " | "+" | "-" | "@", line) for an action correction
    state: str
    state_label: str
    hold_reason: str
    rejected_by_owner: bool
    outdated: bool
    mine: bool
    created_at: datetime
    updated_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "mode": self.mode,
            "author": self.author,
            "text": self.text,
            "original": self.original,
            "diff": "\n".join(f"{sign}{line}" for sign, line in self.diff if sign != "@"),
            "state": self.state,
            "rejected_by_owner": self.rejected_by_owner,
            "outdated": self.outdated,
            "mine": self.mine,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


def diff_lines(original: str, text: str) -> list[tuple[str, str]]:
    """A unified diff of an action correction against the step it edits, line by line."""
    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(original.splitlines(), text.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        sign = "@" if line.startswith("@@") else line[:1]
        out.append((sign, line[1:] if sign != "@" else line))
    return out


def author_name(note: StepNote | StepRating | FirstWrongMark) -> str:
    if note.author_key == HOLDER_KEY:
        return "the sharer"
    return note.author.get_username() if note.author is not None else "a deleted account"


def note_view(note: StepNote, reader: Reader, trajectory: Trajectory, digest: str) -> NoteView:
    mine = bool(reader.key) and note.author_key == reader.key
    if mine or reader.is_moderator:
        text, original = note.text, note.original
    else:
        made = screening.shown(note, trajectory, digest=digest)
        text, original = made.text, made.original
    action = note.kind == NoteKind.CORRECTION and note.mode == "action"
    return NoteView(
        id=note.public_id,
        kind=note.kind,
        mode=note.mode,
        author=author_name(note),
        text=text,
        original=original,
        diff=diff_lines(original, text) if action else [],
        state=note.state,
        state_label=NoteState(note.state).label,
        hold_reason=note.hold_reason if (mine or reader.is_moderator) else "",
        rejected_by_owner=note.owner_rejected_at is not None,
        outdated=note.outdated,
        mine=mine,
        created_at=note.created_at,
        updated_at=note.updated_at,
    )


@dataclass
class StepFeedback:
    """Everything about one step's feedback that this reader may see."""

    step: int
    agent_step: bool
    enabled: bool
    can_give: bool
    good: int = 0
    bad: int = 0
    first_wrong: int = 0
    outdated: int = 0
    corrections: list[NoteView] = field(default_factory=list)
    comments: list[NoteView] = field(default_factory=list)
    my_rating: str | None = None
    my_first_wrong: bool = False
    my_first_wrong_step: int | None = None
    action: str = ""  # the step's action, redacted: what an action correction starts from
    # The reader's answer to the licence question: None not asked yet, "" declined, else it.
    my_license: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "agent_step": self.agent_step,
            "enabled": self.enabled,
            "can_give": self.can_give,
            "ratings": {"good": self.good, "bad": self.bad},
            "first_wrong": self.first_wrong,
            "outdated": self.outdated,
            "corrections": [note.as_json() for note in self.corrections],
            "comments": [note.as_json() for note in self.comments],
            "mine": {
                "rating": self.my_rating,
                "first_wrong": self.my_first_wrong,
                "first_wrong_step": self.my_first_wrong_step,
                "license": self.my_license,
            },
        }


def step_feedback(trajectory: Trajectory, event: Event, reader: Reader) -> StepFeedback:
    """One step's feedback as `reader` sees it. A fixed number of queries."""
    enabled = is_enabled(trajectory)
    position = event.position
    agent = anchors.is_agent_step(event)
    result = StepFeedback(
        step=position + 1,
        agent_step=agent,
        enabled=enabled,
        can_give=can_give(trajectory, reader, enabled=enabled),
    )
    if counts_visible(reader, enabled=enabled):
        ratings = StepRating.objects.filter(trajectory=trajectory, position=position)
        for value, outdated, n in (
            ratings.values_list("value", "outdated").annotate(n=Count("id")).order_by()
        ):
            if outdated:
                result.outdated += n
            elif value == "good":
                result.good = n
            else:
                result.bad = n
        result.first_wrong = FirstWrongMark.objects.filter(
            trajectory=trajectory, position=position, outdated=False
        ).count()
    notes = list(
        visible_notes(trajectory, reader, enabled=enabled)
        .filter(position=position)
        .select_related("author")
        .order_by("created_at", "id")
    )
    if notes:
        digest = screening.current_map_digest(trajectory)
        for note in notes:
            view = note_view(note, reader, trajectory, digest)
            (result.corrections if note.kind == NoteKind.CORRECTION else result.comments).append(
                view
            )
    if reader.key:
        result.my_rating = (
            StepRating.objects.filter(
                trajectory=trajectory, position=position, author_key=reader.key
            )
            .values_list("value", flat=True)
            .first()
        )
        mark = (
            FirstWrongMark.objects.filter(trajectory=trajectory, author_key=reader.key)
            .values_list("position", flat=True)
            .first()
        )
        result.my_first_wrong_step = None if mark is None else mark + 1
        result.my_first_wrong = mark == position
        key = reader.key if reader.user is not None else f"{HOLDER_KEY}:{trajectory.share_id}"
        result.my_license = (
            FeedbackLicence.objects.filter(author_key=key).values_list("license", flat=True).first()
        )
    if agent and result.can_give:
        redactions, _digest = screening.trajectory_map(trajectory)
        from apps.trajectories.redaction import redactor

        result.action = redactor(redactions)(anchors.action_text(event))
    return result


# The summary's counts as every reader but the owner and moderators sees them, cached per
# trajectory under a generation that every write of its feedback replaces (services, and the
# models' save and delete signals: a cascade from a deleted account too).
SUMMARY_CACHE_SECONDS = 600


def _generation_key(trajectory_id: int) -> str:
    return f"trajhub:feedback:generation:{trajectory_id}"


def feedback_changed(trajectory_id: int) -> None:
    """Forget the trajectory's cached summary (a new generation), and tell the apps above
    (signals.feedback_changed) once the transaction commits."""
    import secrets

    cache.set(_generation_key(trajectory_id), secrets.token_hex(8), SUMMARY_CACHE_SECONDS * 2)
    _changed.ids.add(trajectory_id)
    # One callback per change, each sending what gathered since the last: the many rows of a
    # cascade (an account's deletion) are one signal. A rolled-back transaction's ids ride on
    # the next signal (a listener only checks them again).
    transaction.on_commit(_send_changed)


class _Changed(threading.local):
    def __init__(self) -> None:
        self.ids: set[int] = set()


_changed = _Changed()


def _send_changed() -> None:
    if not _changed.ids:
        return
    ids = sorted(_changed.ids)
    _changed.ids.clear()
    for receiver, result in signals.feedback_changed.send_robust(
        sender=StepNote, trajectory_ids=ids
    ):
        if isinstance(result, Exception):
            # A listener that fails must not fail the write; the release run checks again.
            logger.error(
                "a feedback_changed listener failed: %s: %s",
                getattr(receiver, "__name__", receiver),
                result,
            )


def _shared_counts(trajectory: Trajectory) -> tuple[bool, dict[int, dict[str, int]]]:
    """(enabled, counts per step with shown notes only): the same for every plain reader."""
    generation = cache.get(_generation_key(trajectory.pk))
    if generation is None:
        feedback_changed(trajectory.pk)
        generation = cache.get(_generation_key(trajectory.pk))
    key = f"trajhub:feedback:summary:{trajectory.pk}:{generation}"
    found = cache.get(key)
    if found is not None:
        return found
    enabled = is_enabled(trajectory)
    plain = Reader(user=None, is_owner=False, is_moderator=False)
    steps = _counts(trajectory, plain, enabled=enabled)
    cache.set(key, (enabled, steps), SUMMARY_CACHE_SECONDS)
    return enabled, steps


def trajectory_summary(trajectory: Trajectory, reader: Reader) -> dict[str, Any]:
    """Per step, what the viewer draws: ratings for and against, first-wrong marks, how many
    corrections and comments, and the reader's own rating and mark. Steps without feedback are
    left out. A few queries at most, whatever the number of steps; for readers but the owner
    and moderators the counts come from the cache while no feedback changed."""
    if reader.is_owner or reader.is_moderator:
        enabled = is_enabled(trajectory)
        steps = _counts(trajectory, reader, enabled=enabled)
    else:
        enabled, shared = _shared_counts(trajectory)
        steps = {step: dict(counts) for step, counts in shared.items()}
        if reader.key:
            # Their own notes that no one else sees yet count for them.
            own = StepNote.objects.filter(trajectory=trajectory, author_key=reader.key)
            if enabled:
                own = own.exclude(state=NoteState.SHOWN)
            for position, kind, n in (
                own.values_list("position", "kind").annotate(n=Count("id")).order_by()
            ):
                name = "corrections" if kind == NoteKind.CORRECTION else "comments"
                row = steps.setdefault(position + 1, {})
                row[name] = row.get(name, 0) + n
    return _summary(trajectory, reader, enabled, steps)


def _counts(trajectory: Trajectory, reader: Reader, *, enabled: bool) -> dict[int, dict[str, int]]:
    steps: dict[int, dict[str, Any]] = defaultdict(dict)
    if counts_visible(reader, enabled=enabled):
        for position, value, n in (
            StepRating.objects.filter(trajectory=trajectory, outdated=False)
            .values_list("position", "value")
            .annotate(n=Count("id"))
            .order_by()
        ):
            steps[position + 1][value] = n
        for position, n in (
            FirstWrongMark.objects.filter(trajectory=trajectory, outdated=False)
            .values_list("position")
            .annotate(n=Count("id"))
            .order_by()
        ):
            steps[position + 1]["first_wrong"] = n
    for position, kind, n in (
        visible_notes(trajectory, reader, enabled=enabled)
        .values_list("position", "kind")
        .annotate(n=Count("id"))
        .order_by()
    ):
        steps[position + 1]["corrections" if kind == NoteKind.CORRECTION else "comments"] = n
    return dict(steps)


def _summary(
    trajectory: Trajectory, reader: Reader, enabled: bool, steps: dict[int, dict[str, int]]
) -> dict[str, Any]:
    mine: dict[str, Any] = {"ratings": {}, "first_wrong": None}
    if reader.key:
        mine["ratings"] = {
            str(position + 1): value
            for position, value in StepRating.objects.filter(
                trajectory=trajectory, author_key=reader.key
            ).values_list("position", "value")
        }
        mark = (
            FirstWrongMark.objects.filter(trajectory=trajectory, author_key=reader.key)
            .values_list("position", flat=True)
            .first()
        )
        mine["first_wrong"] = None if mark is None else mark + 1
    return {
        "enabled": enabled,
        "can_give": can_give(trajectory, reader, enabled=enabled),
        "signed_in": reader.user is not None or reader.is_holder,
        "steps": {str(step): counts for step, counts in sorted(steps.items())},
        "mine": mine,
    }


# What note_view reads: a chunk's notes are hundreds of rows, each a model and its author.
NOTE_VIEW_FIELDS = (
    "trajectory_id",
    "position",
    "public_id",
    "kind",
    "mode",
    "text",
    "original",
    "state",
    "hold_reason",
    "findings",
    "shown_text",
    "shown_original",
    "shown_map",
    "owner_rejected_at",
    "outdated",
    "author_key",
    "created_at",
    "updated_at",
    "author__username",
)


def notes_of_steps(trajectory: Trajectory, reader: Reader, steps: list[int]) -> list[StepFeedback]:
    """The corrections and comments of these steps (page numbers) that the reader may read, as
    StepFeedback rows holding only them, in step order; steps without any are left out. One
    query for the notes (and the map's digest, read once)."""
    enabled = is_enabled(trajectory)
    notes = list(
        visible_notes(trajectory, reader, enabled=enabled)
        .filter(position__in=[step - 1 for step in steps])
        .select_related("author")
        .only(*NOTE_VIEW_FIELDS)
        .order_by("position", "created_at", "id")
    )
    if not notes:
        return []
    digest = screening.current_map_digest(trajectory)
    out: dict[int, StepFeedback] = {}
    for note in notes:
        row = out.get(note.position)
        if row is None:
            row = out[note.position] = StepFeedback(
                step=note.position + 1, agent_step=True, enabled=enabled, can_give=False
            )
        view = note_view(note, reader, trajectory, digest)
        (row.corrections if note.kind == NoteKind.CORRECTION else row.comments).append(view)
    return list(out.values())


def note_for(trajectory: Trajectory, public_id: str, reader: Reader) -> StepNote | None:
    """A note of this trajectory that the reader may read, by its public id (None: no such
    note for them, whatever the reason)."""
    return (
        visible_notes(trajectory, reader, enabled=is_enabled(trajectory))
        .filter(public_id=public_id)
        .select_related("trajectory", "author")
        .first()
    )
