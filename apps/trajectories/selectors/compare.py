"""Reads behind /compare/: two trajectories' steps as short signatures, aligned, and the other
public runs of the same task (same evaluation instance, or the same first user message).

The alignment is difflib's: a longest-matching-blocks alignment over step signatures (kind,
type and, for actions, the command's first words), so the steps two runs share line up and a
detour one of them took shows as a gap on the other side. Pure Python over at most
COMPARE_MAX_STEPS steps a side; one query a side.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import astuple, dataclass

from django.core.cache import cache
from django.db.models import Q
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Substr

from apps.trajectories.models import Event, Trajectory

COMPARE_MAX_STEPS = 5000
SUMMARY_CHARS = 300
CANDIDATES = 12
STEPS_CACHE_SECONDS = 3600
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Step:
    step: int  # 1-based, as on the trajectory page
    kind: str
    type: str
    source: str
    summary: str  # first line of the event's text, unredacted: the view redacts per reader
    signature: str


@dataclass(frozen=True)
class Row:
    """One line of the comparison: a step of each side, or a gap (None) on one of them."""

    a: Step | None
    b: Step | None
    status: str  # "same" (same signature and text) | "differs" | "only-a" | "only-b"


def _signature(kind: str, type_: str, source: str, summary: str) -> str:
    if kind == "action":
        # The command's first three words: `pytest -x tests/a.py` and `pytest -x tests/b.py`
        # are the same kind of step; `ls` and `pytest` are not.
        words = _SPACE.sub(" ", summary).strip().split(" ")[:3]
        return f"action:{type_}:{' '.join(words)}"
    if kind == "message":
        return f"message:{source}"
    return f"{kind}:{type_}"


# Where the formats keep an action's command or target (OpenHands V0 args, V1 actions, OpenAI
# tool-call arguments; SWE-agent keeps the command line itself as `action`).
COMMAND_PATHS = (
    "data__args__command",
    "data__args__code",
    "data__args__path",
    "data__args__url",
    "data__action__command",
    "data__action__path",
    "data__tool_call__function__arguments",
    "data__action",
)


def _steps_key(share_id: str) -> str:
    return f"compare:steps:{share_id}"


def compare_steps(trajectory: Trajectory) -> list[Step]:
    """The steps of a trajectory, short (see _read_steps). Cached: reading them means reading
    every event's text (long outputs) and data out of the database, hundreds of milliseconds for
    2,000 steps, while the steps of a stored trajectory only change when it is stored again
    (its updated_at moves) and go when it is deleted (compare_steps_forget, on
    trajectory_deleted). The summaries are kept unredacted, like the rows they come from: each
    reader's page redacts them."""
    stamp = (
        trajectory.updated_at.isoformat() if trajectory.updated_at else "",
        trajectory.num_events,
    )
    cached = cache.get(_steps_key(trajectory.share_id))
    if cached is not None and tuple(cached[0]) == stamp:
        return [Step(*row) for row in cached[1]]
    steps = _read_steps(trajectory)
    cache.set(
        _steps_key(trajectory.share_id),
        (stamp, [astuple(step) for step in steps]),
        STEPS_CACHE_SECONDS,
    )
    return steps


def compare_steps_forget(share_id: str) -> None:
    cache.delete(_steps_key(share_id))


def _read_steps(trajectory: Trajectory) -> list[Step]:
    """An action's command (or the first line of its text), anything else's first line (of the
    first SUMMARY_CHARS of its text). One query."""
    command = Substr(Coalesce(*(KT(path) for path in COMMAND_PATHS)), 1, SUMMARY_CHARS)
    rows = (
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .annotate(head=Substr("text", 1, SUMMARY_CHARS), command=command)
        .values_list("position", "kind", "type", "source", "head", "command")[:COMPARE_MAX_STEPS]
    )
    steps = []
    last_action = ""
    for position, kind, type_, source, head, cmd in rows:
        summary = (head or "").strip().split("\n", 1)[0]
        if kind == "action" and cmd and cmd.strip() and cmd.strip() != type_:
            summary = cmd.strip().split("\n", 1)[0]
        signature = _signature(kind, type_, source, summary)
        if kind == "action":
            last_action = signature
        elif kind == "observation":
            # An output is the output of its command: `ls`'s and `cat`'s do not line up.
            signature = f"{signature}<{last_action}"
        steps.append(Step(position + 1, kind, type_, source, summary, signature))
    return steps


def align(left: list[Step], right: list[Step]) -> list[Row]:
    """Both step lists side by side, matching steps on one row, gaps where one side has none."""
    matcher = difflib.SequenceMatcher(
        a=[s.signature for s in left], b=[s.signature for s in right], autojunk=False
    )
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(left[i1:i2], right[j1:j2], strict=True):
                rows.append(Row(a, b, "same" if a.summary == b.summary else "differs"))
        elif tag == "replace":
            # Different steps at the same point: side by side as far as both go, then gaps.
            width = max(i2 - i1, j2 - j1)
            for k in range(width):
                mine = left[i1 + k] if i1 + k < i2 else None
                theirs = right[j1 + k] if j1 + k < j2 else None
                status = "differs" if mine and theirs else ("only-a" if mine else "only-b")
                rows.append(Row(mine, theirs, status))
        elif tag == "delete":
            rows.extend(Row(a, None, "only-a") for a in left[i1:i2])
        else:
            rows.extend(Row(None, b, "only-b") for b in right[j1:j2])
    return rows


def _stamp(trajectory: Trajectory) -> str:
    updated = trajectory.updated_at.isoformat() if trajectory.updated_at else ""
    return f"{trajectory.share_id}:{updated}:{trajectory.num_events}"


def align_cached(a: Trajectory, b: Trajectory, left: list[Step], right: list[Step]) -> list[Row]:
    """align(), remembered for this pair as stored: only step indexes are cached (no text)."""
    key = "compare:rows:" + hashlib.sha256(f"{_stamp(a)}|{_stamp(b)}".encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        return [
            Row(left[i] if i >= 0 else None, right[j] if j >= 0 else None, status)
            for i, j, status in cached
        ]
    rows = align(left, right)
    index_a = {id(step): n for n, step in enumerate(left)}
    index_b = {id(step): n for n, step in enumerate(right)}
    cache.set(
        key,
        [
            (index_a[id(row.a)] if row.a else -1, index_b[id(row.b)] if row.b else -1, row.status)
            for row in rows
        ],
        STEPS_CACHE_SECONDS,
    )
    return rows


def same_task_candidates(trajectory: Trajectory, first_message: str) -> list[Trajectory]:
    """Other public runs of the same task: the same evaluation instance id, or the same first
    user message (which importers also make the title of a run without one)."""
    metadata = trajectory.metadata if isinstance(trajectory.metadata, dict) else {}
    instance = metadata.get("instance_id")
    same = Q(pk__in=[])
    if isinstance(instance, str) and instance:
        same |= Q(metadata__instance_id=instance)
    if first_message:
        same |= Q(
            pk__in=Event.objects.filter(
                source="user", kind="message", position__lt=3, text=first_message
            ).values("trajectory_id")
        )
    if trajectory.title:
        same |= Q(title=trajectory.title)
    return list(
        Trajectory.objects.public()
        .filter(same)
        .exclude(pk=trajectory.pk)
        .only("share_id", "title", "agent", "model_name", "num_events", "created_at", "redactions")
        .order_by("-created_at")[:CANDIDATES]
    )


def first_user_message(trajectory: Trajectory) -> str:
    """The text of the first user message (within the first steps), or "". One query."""
    text = (
        Event.objects.filter(trajectory=trajectory, source="user", kind="message", position__lt=3)
        .order_by("position")
        .values_list("text", flat=True)
        .first()
    )
    return text or ""
