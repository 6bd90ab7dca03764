"""Reads behind /compare/: two trajectories' steps as short signatures, aligned, and the other
public runs of the same task (same evaluation instance, or the same first user message).

The alignment is difflib's: a longest-matching-blocks alignment over step signatures (kind,
type and, for actions, the command's first words), so the steps two runs share line up and a
detour one of them took shows as a gap on the other side. Pure Python over at most
COMPARE_MAX_STEPS steps a side; one query a side.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from django.core.cache import cache
from django.db.models import Case, Q, QuerySet, When
from django.db.models.fields.json import KT
from django.db.models.functions import MD5, Coalesce, Substr

from apps.trajectories.alignment import opcodes
from apps.trajectories.models import Event, EventSummary, Trajectory
from apps.trajectories.redaction import Matcher
from apps.trajectories.selectors.redactions import full_redactions, map_digest

COMPARE_MAX_STEPS = 5000
SUMMARY_CHARS = 300
CANDIDATES = 12
STEPS_CACHE_SECONDS = 3600
_SPACE = re.compile(r"\s+")


# Named tuples, not dataclasses: a warm /compare/ of two 2,000-step runs turns 4,000 cached
# tuples into Steps, and a frozen dataclass costs several times a tuple to build (it was a third
# of the page's time).
class Step(NamedTuple):
    step: int  # 1-based, as on the trajectory page
    kind: str
    type: str
    source: str
    # The start of the event's text (SUMMARY_CHARS), unredacted: the view redacts it whole for
    # its reader, then shows the first line.
    summary: str
    signature: str


class Row(NamedTuple):
    """One line of the comparison: a step of each side, or a gap (None) on one of them."""

    a: Step | None
    b: Step | None
    status: str  # "same" (same signature and text) | "differs" | "only-a" | "only-b"


STATUSES = ("same", "differs", "only-a", "only-b")


@dataclass(frozen=True)
class Alignment:
    """The aligned rows as pairs of step indexes (-1: a gap), with the count of each status.
    Rows are made only for the slice a page shows: 3,500 Row objects per request for the 200
    on screen were most of what was left of a warm page's time."""

    left: Sequence[Step]
    right: Sequence[Step]
    pairs: list[tuple[int, int, str]]
    counts: dict[str, int]

    def __len__(self) -> int:
        return len(self.pairs)

    def rows(self, start: int, stop: int) -> list[Row]:
        left, right = self.left, self.right
        shown = self.pairs[start:stop]
        # Stored steps read the summaries of these rows only (one query a side).
        if isinstance(left, StoredSteps | WindowSteps):
            left.prefetch(i for i, _j, _s in shown)
        if isinstance(right, StoredSteps | WindowSteps):
            right.prefetch(j for _i, j, _s in shown)
        return [
            Row(left[i] if i >= 0 else None, right[j] if j >= 0 else None, status)
            for i, j, status in self.pairs[start:stop]
        ]


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


class CachedSteps(Sequence[Step]):
    """Cached steps, as plain tuples, made into Steps only when looked at: a page shows 200
    rows of two 2,000-step runs, so most are never looked at (only the cold path, aligning,
    reads them all)."""

    def __init__(self, rows: list[tuple]):
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [Step._make(row) for row in self._rows[index]]
        return Step._make(self._rows[index])


def _map_stamp(trajectory: Trajectory) -> str:
    """Which map the summaries were cut by: the index's digest of it while the index is current
    (a trigger clears indexed_at whenever the map changes), else the digest of the map itself."""
    index = trajectory.__dict__.get("redaction_index")
    if (
        trajectory.__dict__.get("indexed_at") is not None
        and isinstance(index, dict)
        and isinstance(index.get("map"), str)
    ):
        return index["map"]
    return map_digest(full_redactions(trajectory))


def compare_steps(trajectory: Trajectory) -> Sequence[Step]:
    """The steps of a trajectory, short (see _read_steps). Cached: reading them means reading
    every event's text (long outputs) and data out of the database, hundreds of milliseconds for
    2,000 steps, while the steps of a stored trajectory only change when it is stored again
    (its updated_at moves) or its map changes (where summaries are cut depends on it), and go
    when it is deleted (compare_steps_forget, on trajectory_deleted). The summaries are kept
    unredacted, like the rows they come from: each reader's page redacts them. The stored rows
    hold no text (signatures and digests of the summaries); a page reads the summaries of the
    rows it shows, cut by the current map (_read_steps)."""
    stored = (
        EventSummary.objects.filter(
            trajectory_id=trajectory.pk,
            chain_fingerprint=trajectory.chain_fingerprint,
            total=trajectory.num_events,
        )
        .values_list("compare_steps", flat=True)
        .first()
    )
    if isinstance(stored, list):
        return StoredSteps(trajectory, stored)
    stamp = (
        trajectory.updated_at.isoformat() if trajectory.updated_at else "",
        trajectory.num_events,
        _map_stamp(trajectory),
    )
    cached = cache.get(_steps_key(trajectory.share_id))
    if cached is not None and tuple(cached[0]) == stamp:
        return CachedSteps(cached[1])
    steps = _read_steps(trajectory)
    # Kept with the summary for the next reader (stored before ingest made them: a summary
    # row without them); the text stays in the cache below only.
    EventSummary.objects.filter(
        trajectory_id=trajectory.pk,
        chain_fingerprint=trajectory.chain_fingerprint,
        total=trajectory.num_events,
    ).update(compare_steps=stored_rows(steps))
    cache.set(
        _steps_key(trajectory.share_id),
        (stamp, [tuple(step) for step in steps]),  # plain tuples: no class path per item
        STEPS_CACHE_SECONDS,
    )
    return steps


def compare_steps_forget(share_id: str) -> None:
    cache.delete(_steps_key(share_id))


def _cut(text: str, matcher: Matcher) -> str:
    """The first SUMMARY_CHARS characters of `text`, or as far as the end of an original of the
    map that starts before them (`text` is read that far): cut inside an original, the rest of
    it would no longer match and would show in part. Redacting the cut text then replaces
    exactly what redacting the whole text replaces in it (leftmost-longest: redaction.py)."""
    end = SUMMARY_CHARS
    if len(text) > end and matcher:
        for _start, stop in matcher.spans(text, before=SUMMARY_CHARS):
            end = max(end, stop)
    return text[:end]


def _read_steps(trajectory: Trajectory, positions: Sequence[int] | None = None) -> list[Step]:
    """An action's command (or the first line of its text), anything else's first line (of the
    first SUMMARY_CHARS of its text, cut by _cut). One query. With `positions`: only those steps'
    (their signatures then lack the action before them: only their summaries are used)."""
    redactions = full_redactions(trajectory)
    matcher = Matcher(redactions)
    # As far as an original that starts within the summary can reach (a Base64 PEM key on one
    # line is thousands of characters), so that it is read whole and is redacted whole.
    reach = SUMMARY_CHARS + max(map(len, redactions), default=0)
    # Only an action's command is used (steps_from_rows). Each `->>` detoasts the whole data
    # again: an observation's data (its extras, kilobytes, compressed) read eight times for a
    # command nobody uses was most of a warm page's SQL (80 of 90 ms for 200 rows a side).
    command = Case(
        When(kind="action", then=Substr(Coalesce(*(KT(path) for path in COMMAND_PATHS)), 1, reach))
    )
    events = Event.objects.filter(trajectory=trajectory)
    if positions is not None:
        events = events.filter(position__in=list(positions))
    rows = (
        events.order_by("position")
        .annotate(head=Substr("text", 1, reach), command=command)
        .values_list("position", "kind", "type", "source", "head", "command")[:COMPARE_MAX_STEPS]
    )
    return steps_from_rows(rows, matcher)


def steps_from_rows(
    rows: Iterable[tuple[int, str, str, str, str | None, str | None]],
    matcher: Matcher | None = None,
) -> list[Step]:
    """Steps of (position, kind, type, source, start of the text, command) rows in step order,
    each summary cut by _cut (at ingest there is no map yet: plain SUMMARY_CHARS)."""
    matcher = matcher if matcher is not None else Matcher({})
    steps = []
    last_action = ""
    for position, kind, type_, source, head, cmd in rows:
        # Not cut at the first line here: the view redacts the summary whole, then shows its
        # first line (a secret wrapped across lines matches its redaction only whole).
        summary = _cut(head or "", matcher).strip()
        if kind == "action" and cmd and cmd.strip() and cmd.strip() != type_:
            summary = _cut(cmd, matcher).strip()
        signature = _signature(kind, type_, source, summary.split("\n", 1)[0])
        if kind == "action":
            last_action = signature
        elif kind == "observation":
            # An output is the output of its command: `ls`'s and `cat`'s do not line up.
            signature = f"{signature}<{last_action}"
        steps.append(Step(position + 1, kind, type_, source, summary, signature))
    return steps


def summary_digest(summary: str) -> str:
    return hashlib.blake2b(summary.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def stored_rows(steps: Sequence[Step]) -> list[list[str]]:
    """What EventSummary.compare_steps keeps of steps: no text, a digest of each summary."""
    return [[s.kind, s.type, s.source, s.signature, summary_digest(s.summary)] for s in steps]


class StoredSteps(Sequence[Step]):
    """Steps from the trajectory's stored compare rows: signatures and summary digests for the
    alignment, and the summaries read only for the rows a page shows (`prefetch`)."""

    def __init__(self, trajectory: Trajectory, rows: list[list[str]]):
        self.trajectory = trajectory
        self._rows = rows
        self._summaries: dict[int, str] = {}

    @property
    def signatures(self) -> list[str]:
        return [row[3] for row in self._rows]

    @property
    def sameness(self) -> list[str]:
        return [row[4] for row in self._rows]

    def prefetch(self, indexes: Iterable[int]) -> None:
        wanted = [i for i in set(indexes) if i >= 0 and i not in self._summaries]
        if wanted:
            for step in _read_steps(self.trajectory, wanted):
                self._summaries[step.step - 1] = step.summary

    def __len__(self) -> int:
        return len(self._rows)

    def _step(self, index: int) -> Step:
        kind, type_, source, signature, _digest = self._rows[index]
        return Step(index + 1, kind, type_, source, self._summaries.get(index, ""), signature)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [self._step(i) for i in range(*index.indices(len(self._rows)))]
        return self._step(index if index >= 0 else len(self._rows) + index)


class WindowSteps(Sequence[Step]):
    """The steps of an alignment already made (cached): only the rows a page shows are read,
    kind, type, source and summary from their events (one query a side), none of the others:
    a warm page of two 5,000-step runs read both sides' 5,000 stored rows to show 200."""

    def __init__(self, trajectory: Trajectory, length: int):
        self.trajectory = trajectory
        self._length = length
        self._steps: dict[int, Step] = {}

    def prefetch(self, indexes: Iterable[int]) -> None:
        wanted = [i for i in set(indexes) if 0 <= i < self._length and i not in self._steps]
        if wanted:
            for step in _read_steps(self.trajectory, wanted):
                self._steps[step.step - 1] = step

    def __len__(self) -> int:
        return self._length

    def _step(self, index: int) -> Step:
        if index not in self._steps:
            self.prefetch([index])
        return self._steps[index]

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            indexes = range(*index.indices(self._length))
            self.prefetch(indexes)
            return [self._step(i) for i in indexes]
        return self._step(index if index >= 0 else self._length + index)


def _signatures(steps: Sequence[Step]) -> list[str]:
    return steps.signatures if isinstance(steps, StoredSteps) else [s.signature for s in steps]


def _sameness(steps: Sequence[Step]) -> list[str]:
    if isinstance(steps, StoredSteps):
        return steps.sameness
    return [summary_digest(s.summary) for s in steps]


def align_pairs(left: Sequence[Step], right: Sequence[Step]) -> list[tuple[int, int, str]]:
    """Both step lists side by side as (index in left, index in right, status) rows, -1 where
    one side has a gap: matching steps share a row."""
    same_left, same_right = _sameness(left), _sameness(right)
    pairs: list[tuple[int, int, str]] = []
    # difflib's opcodes, made faster (alignment.py): difflib itself took 0.8 s for two
    # 5,000-step runs, most of a cold compare.
    for tag, i1, i2, j1, j2 in opcodes(_signatures(left), _signatures(right)):
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                same = same_left[i] == same_right[j]
                pairs.append((i, j, "same" if same else "differs"))
        elif tag == "replace":
            # Different steps at the same point: side by side as far as both go, then gaps.
            for k in range(max(i2 - i1, j2 - j1)):
                i = i1 + k if i1 + k < i2 else -1
                j = j1 + k if j1 + k < j2 else -1
                status = "differs" if i >= 0 and j >= 0 else ("only-a" if i >= 0 else "only-b")
                pairs.append((i, j, status))
        elif tag == "delete":
            pairs.extend((i, -1, "only-a") for i in range(i1, i2))
        else:
            pairs.extend((-1, j, "only-b") for j in range(j1, j2))
    return pairs


def align(left: Sequence[Step], right: Sequence[Step]) -> list[Row]:
    """align_pairs() as rows of steps."""
    pairs = align_pairs(left, right)
    return Alignment(left=left, right=right, pairs=pairs, counts={}).rows(0, len(pairs))


def _stamp(trajectory: Trajectory) -> str:
    updated = trajectory.updated_at.isoformat() if trajectory.updated_at else ""
    return f"{trajectory.share_id}:{updated}:{trajectory.num_events}"


def align_key(a: Trajectory, b: Trajectory) -> str:
    """The cache key of this pair's alignment, as both are stored now."""
    return "compare:align:" + hashlib.sha256(f"{_stamp(a)}|{_stamp(b)}".encode()).hexdigest()


def align_cached(
    a: Trajectory, b: Trajectory, left: Sequence[Step], right: Sequence[Step]
) -> Alignment:
    """align(), remembered for this pair as stored: only step indexes are cached (no text)."""
    key = align_key(a, b)
    cached = cache.get(key)
    if cached is not None:
        pairs, counts = cached[:2]
    else:
        pairs = align_pairs(left, right)
        counts = dict.fromkeys(STATUSES, 0)
        for _i, _j, status in pairs:
            counts[status] += 1
        cache.set(key, (pairs, counts, (len(left), len(right))), STEPS_CACHE_SECONDS)
    return Alignment(left=left, right=right, pairs=pairs, counts=counts)


def compare_alignment(a: Trajectory, b: Trajectory) -> Alignment:
    """The two trajectories' alignment: where it is cached for them as stored, only the rows a
    page shows are read (WindowSteps); else their stored steps aligned (align_cached)."""
    cached = cache.get(align_key(a, b))
    if cached is not None and len(cached) == 3:
        pairs, counts, (left, right) = cached
        return Alignment(
            left=WindowSteps(a, left), right=WindowSteps(b, right), pairs=pairs, counts=counts
        )
    return align_cached(a, b, compare_steps(a), compare_steps(b))


# Where "the same task" is looked up (each an index of migration 0006): a run's first user
# message sits within its first FIRST_MESSAGE_POSITIONS steps.
FIRST_MESSAGE_POSITIONS = 3
FIRST_MESSAGE = Q(source="user", kind="message", position__lt=FIRST_MESSAGE_POSITIONS)
# Each way of being the same task contributes at most this many ids (a first message such as
# "hi" can be shared by thousands of runs; only the newest CANDIDATES are shown anyway).
CANDIDATE_IDS = 200


def same_task_candidates(trajectory: Trajectory, first_message: str) -> list[Trajectory]:
    """The newest CANDIDATES of same_task_queryset()."""
    queryset = same_task_queryset(trajectory, first_message)
    return [] if queryset is None else list(queryset[:CANDIDATES])


def same_task_queryset(trajectory: Trajectory, first_message: str) -> QuerySet[Trajectory] | None:
    """Other public runs of the same task: the same evaluation instance id, or the same first
    user message (which importers also make the title of a run without one), or the same title.
    One query: a union of three index lookups (instance id and title on partial indexes of
    public(), the first message by the md5 of early user messages' text), bounded each."""
    metadata = trajectory.metadata if isinstance(trajectory.metadata, dict) else {}
    instance = metadata.get("instance_id")
    public = Trajectory.objects.public()
    ways = []
    if isinstance(instance, str) and instance:
        ways.append(
            public.filter(metadata__instance_id=instance)
            .order_by()
            .values_list("id", flat=True)[:CANDIDATE_IDS]
        )
    if trajectory.title:
        ways.append(
            public.filter(title=trajectory.title)
            .order_by()
            .values_list("id", flat=True)[:CANDIDATE_IDS]
        )
    if first_message:
        ways.append(
            Event.objects.filter(FIRST_MESSAGE)
            .annotate(digest=MD5("text"))
            # The digest finds the rows through the index; the text itself rules out a collision.
            .filter(digest=hashlib.md5(first_message.encode()).hexdigest(), text=first_message)
            .order_by()  # any CANDIDATE_IDS of them, straight from the index
            .values_list("trajectory_id", flat=True)[:CANDIDATE_IDS]
        )
    if not ways:
        return None
    # Each bounded lookup wrapped in a plain `id IN (...)`: a UNION's own parts may not carry
    # a LIMIT in a subquery (Django refuses), their subqueries may.
    bounded = [
        Trajectory.objects.filter(pk__in=way).order_by().values_list("id", flat=True)
        for way in ways
    ]
    ids = bounded[0].union(*bounded[1:]) if len(bounded) > 1 else bounded[0]
    return (
        public.filter(pk__in=ids)
        .exclude(pk=trajectory.pk)
        .only("share_id", "title", "agent", "model_name", "num_events", "created_at", "redactions")
        .order_by("-created_at")
    )


def first_user_message(trajectory: Trajectory) -> str:
    """The text of the first user message (within the first steps), or "". One query."""
    text = (
        Event.objects.filter(FIRST_MESSAGE, trajectory=trajectory)
        .order_by("position")
        .values_list("text", flat=True)
        .first()
    )
    return text or ""
