"""The human signal on steps (apps.feedback) as configs of every release, registered alongside
the trajectory configs from DatasetsConfig.ready() (the feedback app sits below this one and
cannot register itself): their rows are made in the build's one pass over the trajectories,
from each trajectory as the release shows it.

- `step_feedback`: one row per step with released feedback: ratings for and against,
  first-wrong marks, and the corrections and comments (their redacted text), no author named;
- `preferences`: one row per correction the owner did not reject, in TRL's conversational
  preference format: `prompt` the conversation up to the step (the `openai` config's
  messages), `chosen` the correction, `rejected` the agent's step;
- `stepwise`: one row per trajectory whose every agent step has at least
  TRAJHUB_STEPWISE_MIN_RATINGS ratings and no tie, in TRL's stepwise-supervision format
  (`prompt`, `completions` the agent steps, `labels` the readers' majority per step).

What feedback a release holds was fixed when it was published (ReleaseFeedback, from
apps.feedback.releasing's rules); a batch reads that feedback and leaves out what stopped being
releasable since (deleted, held, outdated, switched off).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.conf import settings

from apps.datasets import configs
from apps.datasets.models import Release, ReleaseFeedback
from apps.datasets.row_schema import MESSAGE, Type
from apps.feedback import releasing
from apps.feedback.anchors import is_agent_step
from apps.feedback.models import StepNote

_NOTE: dict[str, Type] = {"id": "string", "text": "string", "license": "string"}
STEP_FEEDBACK = configs.ReleaseConfig(
    name="step_feedback",
    columns={
        "id": "string",
        "step": "int64",
        "good": "int64",
        "bad": "int64",
        "first_wrong": "int64",
        "corrections": [
            {**_NOTE, "mode": "string", "original": "string", "rejected_by_owner": "bool"}
        ],
        "comments": [_NOTE],
        "license": "string",
    },
    directory="step_feedback",
    description="readers' and owners' feedback per step: ratings for (`good`) and against "
    "(`bad`), how many marked it as the first wrong step, and the corrections and comments "
    "(redacted), without their authors",
)
PREFERENCES = configs.ReleaseConfig(
    name="preferences",
    columns={
        "id": "string",
        "trajectory_id": "string",
        "step": "int64",
        "mode": "string",
        "prompt": [MESSAGE],
        "chosen": [MESSAGE],
        "rejected": [MESSAGE],
        "tools": "string",
        "license": "string",
        "correction_license": "string",
    },
    directory="preferences",
    description="one row per accepted correction in TRL's conversational preference format: "
    "`prompt` the conversation up to the step, `chosen` the correction, `rejected` the agent's "
    "step",
)
STEPWISE = configs.ReleaseConfig(
    name="stepwise",
    columns={
        "id": "string",
        "prompt": "string",
        "completions": ["string"],
        "labels": ["bool"],
        "steps": ["int64"],
        "license": "string",
    },
    directory="stepwise",
    description="TRL's stepwise supervision: a trajectory's agent steps (`completions`) with "
    "one label per step from readers' majority (`labels`), for trajectories whose every agent "
    "step has enough ratings and no tie",
    free_text=frozenset({"prompt"}),
)
CONFIG_NAMES = (STEP_FEEDBACK.name, PREFERENCES.name, STEPWISE.name)


@dataclass
class Feedback:
    """One trajectory's released feedback: {position: [good, bad]}, {position: marks}, notes
    and the licence each note's author agreed to ({note key: licence})."""

    ratings: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    marks: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    notes: list[StepNote] = field(default_factory=list)
    licences: dict[int, str] = field(default_factory=dict)


def _entries(release: Release, ids: list[int], *kinds: str) -> Any:
    return (
        ReleaseFeedback.objects.filter(release=release, kind__in=kinds, trajectory_id__in=ids)
        .order_by()
        .values("item_id")
    )


def read_batch(release: Release, ids: list[int]) -> dict[int, Feedback]:
    """The feedback of these trajectories that the release holds and that may still be
    released: four queries for the batch."""
    found: dict[int, Feedback] = defaultdict(Feedback)
    Kind = ReleaseFeedback.Kind
    for trajectory_id, position, value in (
        releasing.releasable_ratings(ids)
        .filter(pk__in=_entries(release, ids, Kind.RATING))
        .values_list("trajectory_id", "position", "value")
    ):
        found[trajectory_id].ratings[position][0 if value == "good" else 1] += 1
    for trajectory_id, position in (
        releasing.releasable_marks(ids)
        .filter(pk__in=_entries(release, ids, Kind.FIRST_WRONG))
        .values_list("trajectory_id", "position")
    ):
        found[trajectory_id].marks[position] += 1
    notes = list(
        releasing.releasable_notes(ids)
        .filter(pk__in=_entries(release, ids, Kind.CORRECTION, Kind.COMMENT))
        .only(
            "trajectory_id",
            "position",
            "public_id",
            "kind",
            "mode",
            "text",
            "original",
            "findings",
            "shown_text",
            "shown_original",
            "shown_map",
            "owner_rejected_at",
            "author_key",
        )
        .order_by("trajectory_id", "position", "created_at", "id")
    )
    # releasable_notes annotates whose answer to the licence question applies to each note.
    keys = {note.pk: str(getattr(note, "licence_key", "")) for note in notes}
    licences = releasing.licences_of(set(keys.values()))
    for note in notes:
        mine = found[note.trajectory_id]
        mine.notes.append(note)
        mine.licences[note.pk] = licences.get(keys[note.pk], "")
    return found


def feedback_batch(release: Release, ids: list[int]) -> configs.TrajectoryRows:
    """The batch source registered alongside: read the batch's feedback, then make each
    trajectory's rows of the three configs."""
    found = read_batch(release, ids)
    minimum = settings.TRAJHUB_STEPWISE_MIN_RATINGS

    def rows_of(built: configs.BuiltTrajectory) -> dict[str, list[dict[str, Any]]]:
        feedback = found.pop(built.id, None)
        if feedback is None:
            return {}  # no feedback on this trajectory
        return {
            STEP_FEEDBACK.name: step_rows(built, feedback),
            PREFERENCES.name: preference_rows(built, feedback),
            STEPWISE.name: stepwise_rows(built, feedback, minimum=minimum),
        }

    return rows_of


def _shown(built: configs.BuiltTrajectory, note: StepNote) -> tuple[str, str]:
    """The note as everyone reads it, then through the release's redactor (the contributor's
    own addresses, as in every other config)."""
    made = releasing.shown_with(note, built.redactions)
    return built.redact(made.text), built.redact(made.original)


def step_rows(built: configs.BuiltTrajectory, feedback: Feedback) -> list[dict[str, Any]]:
    positions = sorted(
        {*feedback.ratings, *feedback.marks, *(note.position for note in feedback.notes)}
    )
    by_step: dict[int, list[StepNote]] = defaultdict(list)
    for note in feedback.notes:
        by_step[note.position].append(note)
    rows = []
    for position in positions:
        good, bad = feedback.ratings.get(position, (0, 0))
        corrections, comments = [], []
        for note in by_step.get(position, []):
            text, original = _shown(built, note)
            licence = feedback.licences.get(note.pk, "")
            if note.kind == ReleaseFeedback.Kind.CORRECTION:
                corrections.append(
                    {
                        "id": note.public_id,
                        "text": text,
                        "license": licence,
                        "mode": note.mode,
                        "original": original,
                        "rejected_by_owner": note.owner_rejected_at is not None,
                    }
                )
            else:
                comments.append({"id": note.public_id, "text": text, "license": licence})
        rows.append(
            {
                "id": built.share_id,
                "step": position + 1,
                "good": good,
                "bad": bad,
                "first_wrong": feedback.marks.get(position, 0),
                "corrections": corrections,
                "comments": comments,
                "license": built.license,
            }
        )
    return rows


def _turn_of(built: configs.BuiltTrajectory, position: int) -> int | None:
    """The index in `messages` of the message the agent step at `position` became: its own
    turn, or (a call made in parallel with the one before it) the turn it was grouped into."""
    where = {id(event): index for index, event in enumerate(built.events)}
    offset = 1 if built.talk.system else 0
    best = None
    for index, turn in enumerate(built.talk.turns):
        at = where.get(id(turn.event)) if turn.event is not None else None
        if at is None or at > position:
            continue
        if at == position:
            return index + offset
        best = index if turn.role == "calls" else None
    return None if best is None else best + offset


def _edited_call(message: dict[str, Any], original: str, text: str) -> dict[str, Any] | None:
    """The rejected tool call with the edited action in place of the original (an action
    correction edits the command, the code, the arguments), when the call's arguments hold the
    original as one value; else None."""
    calls = message.get("tool_calls") or []
    if len(calls) != 1 or not original:
        return None
    call = calls[0]
    try:
        arguments = orjson.loads(call["function"]["arguments"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    if not isinstance(arguments, dict):
        return None
    if call["function"]["arguments"] == original:
        edited: Any = releasing_json(text)
        if edited is None:
            return None
    else:
        keys = [key for key, value in arguments.items() if value == original]
        if len(keys) != 1:
            return None
        edited = {**arguments, keys[0]: text}
    function = {**call["function"], "arguments": orjson.dumps(edited).decode()}
    return {**message, "tool_calls": [{**call, "function": function}]}


def releasing_json(text: str) -> Any:
    """Edited tool arguments (JSON text) as an object, or None when they are not JSON."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": None, "tool_call_id": None}


def preference_rows(built: configs.BuiltTrajectory, feedback: Feedback) -> list[dict[str, Any]]:
    rows = []
    for note in feedback.notes:
        if note.kind != ReleaseFeedback.Kind.CORRECTION or note.owner_rejected_at is not None:
            continue
        position = note.position
        if position >= len(built.events) or not is_agent_step(built.events[position]):
            continue
        index = _turn_of(built, position)
        if not index:  # no message, or nothing before it to prompt with
            continue
        rejected = built.messages[index]
        text, original = _shown(built, note)
        chosen = None
        if note.mode == "action":
            chosen = _edited_call(rejected, original, text)
        rows.append(
            {
                "id": note.public_id,
                "trajectory_id": built.share_id,
                "step": position + 1,
                "mode": note.mode,
                "prompt": built.messages[:index],
                "chosen": [chosen or _assistant(text)],
                "rejected": [rejected],
                "tools": built.tools,
                "license": built.license,
                "correction_license": feedback.licences.get(note.pk, ""),
            }
        )
    return rows


def stepwise_rows(
    built: configs.BuiltTrajectory, feedback: Feedback, *, minimum: int
) -> list[dict[str, Any]]:
    if not feedback.ratings:
        return []  # most trajectories: no need to look at their steps
    agent = [index for index, event in enumerate(built.events) if is_agent_step(event)]
    if not agent:
        return []
    labels = []
    for position in agent:
        good, bad = feedback.ratings.get(position, (0, 0))
        if good + bad < max(minimum, 1) or good == bad:
            return []  # too few ratings on a step, or a tie: the trajectory is left out
        labels.append(good > bad)
    before = built.events[: agent[0]]
    prompt = "\n\n".join(
        event.text for event in before if event.text and event.kind in ("system", "message")
    )
    return [
        {
            "id": built.share_id,
            "prompt": prompt,
            "completions": [built.events[position].text or "" for position in agent],
            "labels": labels,
            "steps": [position + 1 for position in agent],
            "license": built.license,
        }
    ]


def register() -> None:
    """Make the step feedback configs part of every release (DatasetsConfig.ready())."""
    configs.register_alongside(STEP_FEEDBACK, PREFERENCES, STEPWISE, batch=feedback_batch)


def card_section(release: Release) -> str:
    """The card's section on the step feedback configs: what each holds, its columns, how to
    load it, and what changed since the previous release."""
    minimum = settings.TRAJHUB_STEPWISE_MIN_RATINGS
    removed = release.feedback_removed or []
    notes = sum(1 for item in removed if item.get("id"))
    counted = sum(int(item.get("count", 0)) for item in removed if not item.get("id"))
    return f"""Readers and owners rate steps good or bad, mark the step where a run first went wrong,
and write corrections (what the agent should have done instead: in words, or the step's action
edited) and comments. Only feedback on this release's trajectories is here, and only what
passed the scan or a moderator, is not outdated (its step changed since) and was not switched
off by the trajectory's owner; the text of corrections and comments only from authors who
agreed to the {settings.TRAJHUB_LICENSE} licence for it, redacted like the trajectories. No
author's name or id is in any row. Steps are numbered from 1, as on the site's pages.

- `step_feedback` (step_feedback/): one row per step with feedback. `id` (the trajectory),
`step`, `good` and `bad` (ratings for and against), `first_wrong` (how many marked it as the
first wrong step), `corrections` (`id`, `mode` `message` or `action`, `text`, `original`: the
step's action a correction in `action` mode edits, `rejected_by_owner`, `license`), `comments`
(`id`, `text`, `license`), `license` (the trajectory's).
- `preferences` (preferences/): one row per correction its trajectory's owner did not reject,
in TRL's conversational preference format. `prompt` is the conversation up to the corrected
step (messages as in the `openai` config), `chosen` the correction (an edited action as the
same tool call with the edited arguments where they could be placed, else the text), `rejected`
the agent's step; also `id` (the correction), `trajectory_id`, `step`, `mode`, `tools` (JSON
text), `license` and `correction_license`.
- `stepwise` (stepwise/): TRL's stepwise supervision, one row per trajectory whose every agent
step has at least {minimum} ratings and no tie. `prompt` (the task: the messages before the
first agent step), `completions` (the agent steps' text), `labels` (one boolean per step: true
when more readers rated it good than bad), `steps` (their step numbers), `id`, `license`.

```python
from datasets import load_dataset
preferences = load_dataset("<this folder or Hub id>", "preferences", split="train")
stepwise = load_dataset("<this folder or Hub id>", "stepwise", split="train")
# TRL: DPOTrainer(..., train_dataset=preferences); PRMTrainer(..., train_dataset=stepwise)
```

Since the previous release: {release.feedback_added} pieces of feedback added; {notes}
corrections and comments and {counted} ratings and marks removed (deleted by their authors or
with their accounts, or no longer releasable). `manifest.json` lists the removed ones
(`feedback_removed`: corrections and comments by id, ratings and marks as a count per step).
"""
