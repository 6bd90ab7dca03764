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

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

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
    return model.objects.filter(
        trajectory_id__in=ids,
        trajectory__in=Trajectory.objects.public(),
        outdated=False,
    ).exclude(Exists(FeedbackSwitch.objects.filter(trajectory_id=OuterRef("trajectory_id"))))


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


def accepted_corrections(spans: Iterable[tuple[int, int, int]]) -> QuerySet[StepNote]:
    """The accepted corrections on the steps of these (trajectory id, first position, last
    position) spans, oldest first. Read their text with `correction_text`."""
    wanted = Q(pk__in=[])
    ids = []
    for trajectory_id, first, last in spans:
        wanted |= Q(trajectory_id=trajectory_id, position__range=(first, last))
        ids.append(trajectory_id)
    return (
        _counted(StepNote, ids)
        .filter(wanted, kind=NoteKind.CORRECTION, state=NoteState.SHOWN, owner_rejected_at=None)
        .only(
            "trajectory_id",
            "position",
            "public_id",
            "mode",
            "text",
            "original",
            "findings",
            "shown_text",
            "shown_original",
            "shown_map",
        )
        .order_by("trajectory_id", "position", "created_at", "id")
    )


def correction_text(note: StepNote, *, digest: str) -> str:
    """What everyone but its author reads of an accepted correction: its redacted text. `digest`
    is its trajectory's current map digest; only where the stored text was made with another
    map is the trajectory read to make it again."""
    if note.shown_map and note.shown_map == digest:
        return note.shown_text
    trajectory = Trajectory.objects.get(pk=note.trajectory_id)
    return screening.shown(note, trajectory, digest=digest).text
