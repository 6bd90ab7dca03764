"""What readers, taken together, say about the steps of public trajectories: for the layers
above (Learn-by-interact's filter and retrieval), which read feedback only through here.

Only what every reader may see counts: trajectories in `public()` with feedback switched on
(the owner's switch hides ratings and marks from everyone but the owner and moderators, so they
decide nothing here either), and feedback that is not outdated (its step changed since).

- A step is **rated wrong** when it is one of the agent's steps (anchors.is_agent_step: its
  actions and messages) and it has strictly more bad than good ratings. A tie is not a verdict.
- A trajectory's **first wrong step** is the step that strictly more than half of the readers
  who marked a first wrong step on it marked (one mark per reader per trajectory): 2 of 3 is a
  majority, 1 of 2 and 2 of 4 are not.
- An **accepted correction** is a correction that passed the scan or a moderator (`shown`),
  that its trajectory's owner has not rejected and that is not outdated; its text is the
  redacted one everyone but its author and moderators reads (screening.shown).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Exists, F, OuterRef, Q

from apps.feedback import anchors, screening
from apps.feedback.models import (
    FeedbackSwitch,
    FirstWrongMark,
    NoteKind,
    NoteState,
    StepNote,
    StepRating,
)
from apps.trajectories.models import Event, Trajectory


@dataclass(frozen=True)
class RatedWrong:
    position: int
    good: int
    bad: int

    @property
    def step(self) -> int:
        return self.position + 1


@dataclass(frozen=True)
class FirstWrong:
    position: int
    votes: int  # readers who marked this step
    markers: int  # readers who marked any step of the trajectory

    @property
    def step(self) -> int:
        return self.position + 1


@dataclass
class ReadersVerdict:
    """One trajectory's steps rated wrong and its first wrong step (None: no majority)."""

    rated_wrong: list[RatedWrong] = field(default_factory=list)
    first_wrong: FirstWrong | None = None


def _counted(model: type[StepRating] | type[FirstWrongMark] | type[StepNote], ids: list[int]):
    """Rows of `model` on these trajectories that count: public, switched on, current."""
    switched_off = FeedbackSwitch.objects.filter(trajectory_id=OuterRef("pk"))
    counted = Trajectory.objects.public().filter(pk__in=ids).exclude(Exists(switched_off))
    return model.objects.filter(trajectory_id__in=ids, trajectory__in=counted, outdated=False)


def readers_verdicts(trajectory_ids: Iterable[int]) -> dict[int, ReadersVerdict]:
    """Per trajectory (those without a verdict left out), what its readers' majority says is
    wrong. Two queries, whatever the number of trajectories."""
    ids = sorted(set(trajectory_ids))
    out: dict[int, ReadersVerdict] = defaultdict(ReadersVerdict)
    if not ids:
        return {}
    agent_step = Event.objects.filter(
        anchors.agent_step_q(),
        trajectory_id=OuterRef("trajectory_id"),
        position=OuterRef("position"),
    )
    rated = (
        _counted(StepRating, ids)
        .filter(Exists(agent_step))
        .values("trajectory_id", "position")
        .annotate(good=Count("id", filter=Q(value="good")), bad=Count("id", filter=Q(value="bad")))
        .filter(bad__gt=F("good"))
        .order_by("trajectory_id", "position")
    )
    for row in rated:
        out[row["trajectory_id"]].rated_wrong.append(
            RatedWrong(row["position"], row["good"], row["bad"])
        )
    marks: dict[int, dict[int, int]] = defaultdict(dict)
    for trajectory_id, position, votes in (
        _counted(FirstWrongMark, ids)
        .values_list("trajectory_id", "position")
        .annotate(n=Count("id"))
        .order_by()
    ):
        marks[trajectory_id][position] = votes
    for trajectory_id, by_position in marks.items():
        markers = sum(by_position.values())
        position, votes = max(by_position.items(), key=lambda item: (item[1], -item[0]))
        if votes * 2 > markers:
            out[trajectory_id].first_wrong = FirstWrong(position, votes, markers)
    return dict(out)


@dataclass(frozen=True)
class Correction:
    """An accepted correction as everyone but its author reads it."""

    trajectory_id: int
    position: int
    id: str  # its public id
    mode: str  # "message" | "action"
    text: str  # redacted

    @property
    def step(self) -> int:
        return self.position + 1


def accepted_corrections(
    spans: Iterable[tuple[int, int, int]], *, digests: dict[int, str]
) -> list[Correction]:
    """The accepted corrections on the steps of these (trajectory id, first position, last
    position) spans, oldest first, in their redacted text. `digests` holds each trajectory's
    current map digest (the caller has it): only a correction whose stored text was made with
    another map has it made again, reading its trajectory. One query otherwise."""
    wanted = Q(pk__in=[])
    ids = []
    for trajectory_id, first, last in spans:
        wanted |= Q(trajectory_id=trajectory_id, position__range=(first, last))
        ids.append(trajectory_id)
    rows = (
        _counted(StepNote, ids)
        .filter(wanted, kind=NoteKind.CORRECTION, state=NoteState.SHOWN, owner_rejected_at=None)
        .order_by("trajectory_id", "position", "created_at", "id")
        .values_list(
            "trajectory_id", "position", "public_id", "mode", "shown_text", "shown_map", "pk"
        )
    )
    out = []
    for trajectory_id, position, public_id, mode, text, made_with, pk in rows:
        if not made_with or made_with != digests.get(trajectory_id):
            text = _made_again(pk, digests.get(trajectory_id))
        out.append(Correction(trajectory_id, position, public_id, mode, text))
    return out


def corrections_exist(*, trajectory: str, first: str, last: str) -> Exists:
    """For a query over spans of steps (the outer query's field names of the trajectory id and
    the first and last positions): whether a correction that may be accepted is on one of
    them. A hint, to save the query of accepted_corrections where there is none: it does not
    check public() or the switch, which accepted_corrections does."""
    return Exists(
        StepNote.objects.filter(
            trajectory_id=OuterRef(trajectory),
            position__gte=OuterRef(first),
            position__lte=OuterRef(last),
            kind=NoteKind.CORRECTION,
            state=NoteState.SHOWN,
            owner_rejected_at=None,
            outdated=False,
        )
    )


def _made_again(pk: int, digest: str | None) -> str:
    """The redacted text of a note whose stored one was made with another map than today's."""
    note = StepNote.objects.select_related("trajectory").get(pk=pk)
    return screening.shown(note, note.trajectory, digest=digest).text
