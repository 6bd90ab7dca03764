"""Reads of an account's feedback across trajectories: its own, for "download all my data", and
the public part of it, for its profile (/u/<username>/feedback)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apps.feedback import screening
from apps.feedback.models import FeedbackSwitch, FirstWrongMark, NoteState, StepNote, StepRating
from apps.feedback.selectors import NOTE_VIEW_FIELDS, NoteView, Reader, note_view

if TYPE_CHECKING:
    from apps.accounts.models import User


def account_feedback(user: User) -> list[dict[str, Any]]:
    """Everything an account gave, in its own words, for "download all my data": ratings,
    first-wrong marks, corrections and comments, with the trajectory and step of each."""
    rows: list[dict[str, Any]] = []
    for rating in StepRating.objects.filter(author=user).select_related("trajectory"):
        rows.append(_own(rating, "rating", value=rating.value))
    for mark in FirstWrongMark.objects.filter(author=user).select_related("trajectory"):
        rows.append(_own(mark, "first_wrong"))
    for note in StepNote.objects.filter(author=user).select_related("trajectory"):
        rows.append(
            _own(
                note,
                note.kind,
                mode=note.mode,
                text=note.text,
                original=note.original,
                state=note.state,
                rejected_by_owner=note.owner_rejected_at is not None,
            )
        )
    return sorted(rows, key=lambda row: (row["created_at"], row["kind"]))


def _own(row: StepRating | FirstWrongMark | StepNote, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "trajectory": row.trajectory.share_id,
        "step": row.step,
        "outdated": row.outdated,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        **extra,
    }


@dataclass
class PublicNote:
    """One of an account's corrections or comments as its profile lists it."""

    share_id: str
    title: str
    step: int
    note: NoteView


def public_feedback_of(user: User, *, limit: int = 100) -> list[PublicNote]:
    """An account's corrections and comments that anyone may read: shown, on trajectories in
    `public()` whose feedback is switched on; newest first, redacted as every reader reads them."""
    from apps.trajectories.models import Trajectory
    from apps.trajectories.redaction import redactor
    from apps.trajectories.selectors.redactions import own_redactions, with_redaction_index

    switched_off = FeedbackSwitch.objects.values("trajectory_id")
    notes = list(
        StepNote.objects.filter(
            author=user,
            state=NoteState.SHOWN,
            trajectory__in=Trajectory.objects.public().values("pk"),
        )
        .exclude(trajectory_id__in=switched_off)
        .select_related("author")
        .only(*NOTE_VIEW_FIELDS)
        .order_by("-updated_at", "-id")[:limit]
    )
    trajectories = {
        trajectory.pk: trajectory
        for trajectory in with_redaction_index(
            Trajectory.objects.public().filter(pk__in={note.trajectory_id for note in notes})
        ).defer("search_text", "search_vector", "contact_email", "deletion_password_hashes")
    }
    plain = Reader(user=None, is_owner=False, is_moderator=False)
    out: list[PublicNote] = []
    for note in notes:
        trajectory = trajectories.get(note.trajectory_id)
        if trajectory is None:
            continue
        digest = screening.current_map_digest(trajectory)
        title = redactor(own_redactions(trajectory))(trajectory.title)
        out.append(
            PublicNote(
                share_id=trajectory.share_id,
                title=title or f"Trajectory {trajectory.share_id[:12]}",
                step=note.step,
                note=note_view(note, plain, trajectory, digest),
            )
        )
    return out
