"""Find in one trajectory (the viewer's find as you type): from its find index where that is
current (services/find_index.py), else by reading every event as before. A query of one word
answers from the steps its words are in; a query of several words (or with a non-word
character beside its word) from where those words are, so neither reads the events (only the
few steps where the index cannot tell: a separator it did not keep, a query whose matches
could overlap within a step).

Visitors match the redacted text only, so a search can never reveal a redacted value; the
owner, the holder and moderators match the text they see, the original: the index (made of the
redacted text) answers for the events where the two are the same, and the few events whose
redacted text differs are read and matched as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.find_store import Head, head_of, runs
from apps.trajectories.selectors.redactions import full_redactions, index_usable, text_digest
from apps.trajectories.services.find_index import EDGE, UNKNOWN, WORD

SNIPPET_BEFORE = 40
SNIPPET_AFTER = 80
READ_BATCH = 500
_SPACE = re.compile(r"\s+")
_IMAGE_REF = re.compile(r"trajhub-image:[0-9a-f]{64}")


class Found:
    """The matching steps of a query, in step order, with the hits in each and its type: kept
    as arrays, so that a query matching 50,000 steps costs no list of them; a page of them is
    made into rows only for what the caller shows (`page`)."""

    def __init__(self, at: np.ndarray, hits: np.ndarray, kinds: np.ndarray, types: list[str]):
        self.at = np.asarray(at, dtype=np.int64)  # the steps (1-based)
        self.hits = np.asarray(hits, dtype=np.int64)
        self.kinds = np.asarray(kinds, dtype=np.int64)  # each step's type, as types[kind]
        self.types = types
        self.total = int(self.hits.sum())  # hits in all

    @classmethod
    def of_rows(cls, rows: list[tuple[int, int, str]]) -> Found:
        types = sorted({type_ for _, _, type_ in rows})
        number = {type_: n for n, type_ in enumerate(types)}
        return cls(
            np.array([step for step, _, _ in rows], dtype=np.int64),
            np.array([hits for _, hits, _ in rows], dtype=np.int64),
            np.array([number[type_] for _, _, type_ in rows], dtype=np.int64),
            types,
        )

    @property
    def matched(self) -> int:
        return len(self.at)

    @property
    def steps(self) -> list[tuple[int, int, str]]:
        """(step, hits, type) of every matching step, in order."""
        return self.page(0, self.matched)

    def page(self, offset: int, limit: int) -> list[tuple[int, int, str]]:
        """The rows of the matches `offset` to `offset + limit` (in step order)."""
        stop = offset + limit
        return [
            (step, hits, self.types[kind])
            for step, hits, kind in zip(
                self.at[offset:stop].tolist(),
                self.hits[offset:stop].tolist(),
                self.kinds[offset:stop].tolist(),
                strict=True,
            )
        ]

    def rank(self, step: int) -> int:
        """How many matches come before `step`: the offset of the first at or after it."""
        return int(np.searchsorted(self.at, step, side="left"))

    def without(self, hidden: set[str]) -> Found:
        """Only the steps of the types not hidden (the reader's filter)."""
        if not hidden:
            return self
        dropped = [n for n, type_ in enumerate(self.types) if type_ in hidden]
        keep = ~np.isin(self.kinds, dropped)
        return Found(self.at[keep], self.hits[keep], self.kinds[keep], self.types)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Found):
            return NotImplemented
        return self.steps == other.steps and self.total == other.total

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Found(matched={self.matched}, total={self.total}, steps={self.steps[:5]}...)"


class Haystacks:
    """The text a caller matches in an event: the original for those who see it; for others the
    stored redacted text where the trajectory's index is current and the event's digest
    matches its text, else the text redacted with the full map (made only if needed)."""

    def __init__(self, trajectory: Trajectory, *, show_original: bool):
        self.trajectory = trajectory
        self.show_original = show_original
        self.indexed = not show_original and index_usable(trajectory)
        self._full: Any = None

    def text(self, text: str | None, redacted: str | None, digest: str | None) -> str:
        text = text or ""
        if self.show_original:
            return text
        if self.indexed and digest and digest[:16] == text_digest(text):
            return text if redacted is None else redacted
        if self._full is None:
            # Only string entries, as the page's Marks takes them.
            self._full = redactor(
                {
                    key: value
                    for key, value in full_redactions(self.trajectory).items()
                    if key and isinstance(key, str) and isinstance(value, str)
                }
            )
        return self._full(text)

    def rows(self, positions: Iterable[int] | None) -> Iterator[tuple[int, str, str]]:
        """(position, type, text as matched) of the events at `positions` (None: all)."""
        events = Event.objects.filter(trajectory=self.trajectory).order_by("position")
        columns = ("position", "type", "text", "redacted_text", "index_digest")
        if positions is None:
            for position, type_, text, redacted, digest in events.values_list(*columns).iterator(
                chunk_size=READ_BATCH
            ):
                yield position, type_, self.text(text, redacted, digest)
            return
        wanted = sorted(set(positions))
        for start in range(0, len(wanted), READ_BATCH):
            batch = wanted[start : start + READ_BATCH]
            for position, type_, text, redacted, digest in events.filter(
                position__in=batch
            ).values_list(*columns):
                yield position, type_, self.text(text, redacted, digest)


def _count(needle: str, haystack: str, type_: str) -> int:
    hits = haystack.casefold().count(needle)
    if needle in (type_ or "").casefold():
        hits += 1
    return hits


def find_by_reading(trajectory: Trajectory, query: str, *, show_original: bool) -> Found:
    """Every event read and matched: what find does where no index is current."""
    needle = query.casefold()
    haystacks = Haystacks(trajectory, show_original=show_original)
    steps = []
    for position, type_, text in haystacks.rows(None):
        hits = _count(needle, text, type_)
        if hits:
            steps.append((position + 1, hits, type_))
    return Found.of_rows(steps)


@dataclass(frozen=True)
class Words:
    """The words of the index a token matches (term numbers, in order) and its hits in each."""

    terms: np.ndarray
    hits: np.ndarray

    def __bool__(self) -> bool:
        return bool(len(self.terms))


def _terms_matching(head: Head, token: str, left: bool, right: bool) -> Words:
    """The words `token` matches: anywhere inside, at the word's start when the query has a
    non-word character before it (`left`), at its end when one follows (`right`). Found with
    array arithmetic over the words' bytes: "r" is in 25,000 words of a 50,000-step run, and a
    match object each cost 50 ms."""
    needle = token.encode()
    length = len(needle)
    haystack = np.frombuffer(head.terms, dtype=np.uint8)
    if _has_border(token):
        # Its matches may overlap within a word, and str.count counts them without overlap:
        # the regular expression's scan does the same.
        pattern = re.compile(re.escape(needle))
        starts = np.fromiter((m.start() for m in pattern.finditer(head.terms)), np.int64)
    else:
        starts = np.flatnonzero(haystack[: max(len(haystack) - length + 1, 0)] == needle[0])
        for k in range(1, length):
            starts = starts[haystack[starts + k] == needle[k]]
    newlines = head.newlines
    term = np.searchsorted(newlines, starts, side="right") - 1
    keep = np.ones(len(starts), dtype=bool)
    if left:
        keep &= starts == newlines[term] + 1
    if right:
        keep &= starts + length == newlines[np.minimum(term + 1, len(newlines) - 1)]
    terms, hits = np.unique(term[keep], return_counts=True)
    return Words(terms.astype(np.int64), hits.astype(np.int64))


def _has_border(needle: str) -> bool:
    """Whether the needle starts with a proper suffix of itself: only then can two of its
    matches overlap, and str.count counts the overlapping ones once."""
    border = [0] * len(needle)
    k = 0
    for i in range(1, len(needle)):
        while k and needle[i] != needle[k]:
            k = border[k - 1]
        if needle[i] == needle[k]:
            k += 1
        border[i] = k
    return bool(needle) and border[-1] > 0


@dataclass(frozen=True)
class Placed:
    steps: np.ndarray  # the step (position) of each sure match, one entry a hit
    unsure: set[int]  # steps whose hits only their text can tell


def _placed(head: Head, needle: str, spans: list[tuple[int, int]], matches: list[Words]) -> Placed:
    """The matches of a query of several words (or of one word with a non-word character
    before or after it), from where its words are: token i at ordinal k + i, each separator
    between them exactly the query's, the one before the first ending with what the query has
    before its first word, the one after the last starting with what it has after."""
    assert head.step_words is not None
    separators = head.separators
    # One read for every token's words (a word two tokens match is read once).
    terms = np.unique(np.concatenate([found.terms for found in matches]))
    records, lengths = head.occurrences(terms)
    ends = np.cumsum(lengths)
    per_token = []
    for found in matches:
        picked = np.searchsorted(terms, found.terms)
        mine = runs(ends[picked] - lengths[picked], lengths[picked])
        records_of = records[mine]
        per_token.append(records_of[np.argsort(records_of["ordinal"], kind="stable")])
    ordinals = [records["ordinal"].astype(np.int64) for records in per_token]
    start = ordinals[0]
    for i in range(1, len(per_token)):
        start = np.intersect1d(start, ordinals[i] - i, assume_unique=True)
    at = [per_token[i][np.searchsorted(ordinals[i], start + i)] for i in range(len(per_token))]
    ok = np.ones(len(start), dtype=bool)
    unsure = np.zeros(len(start), dtype=bool)
    ids = {text: n for n, text in enumerate(separators)}
    for i in range(len(spans) - 1):
        # Between two words of the query: exactly its separator, inside one step (an edge
        # separator is the end of its step's text).
        after = at[i]["after"].astype(np.int64)
        gap = ids.get(needle[spans[i][1] : spans[i + 1][0]], -1)
        unknown = after == UNKNOWN
        ok &= (after == gap) | unknown
        unsure |= unknown
    lead, trail = needle[: spans[0][0]], needle[spans[-1][1] :]
    for text, column, fits in (
        (lead, at[0]["before"], str.endswith),
        (trail, at[-1]["after"], str.startswith),
    ):
        if not text:
            continue
        kept = np.array([fits(separator, text) for separator in separators] + [False], bool)
        number = column.astype(np.int64) & ~EDGE
        unknown = number == UNKNOWN
        ok &= unknown | kept[np.minimum(number, len(separators))]
        unsure |= unknown
    steps = np.searchsorted(head.step_words, start, side="right") - 1
    unsure_steps = set(steps[ok & unsure].tolist())
    sure = ok & ~unsure
    if _has_border(needle) and sure.sum() > 1:
        # Two matches may overlap only where one starts within len(spans) words of the other
        # (they share a word, or the separator between): their step's text counts them.
        where = steps[sure]
        near = (np.diff(start[sure]) <= len(spans)) & (where[1:] == where[:-1])
        unsure_steps |= set(where[1:][near].tolist())
    return Placed(steps[sure], unsure_steps)


def find_by_index(trajectory: Trajectory, query: str, *, show_original: bool) -> Found | None:
    """Find from the trajectory's find index, or None when it cannot answer (none current, or
    a query without a word character, which no word matches)."""
    needle = query.casefold()
    spans = [match.span() for match in WORD.finditer(needle)]
    if not spans or trajectory.indexed_at is None:
        return None
    if not show_original and not index_usable(trajectory):
        return None
    tokens = [(needle[a:b], a > 0, b < len(needle)) for a, b in spans]
    exact = len(tokens) == 1 and not tokens[0][1] and not tokens[0][2]
    head = head_of(trajectory, placed=not exact)
    if head is None:
        return None
    total_events, words, types = head.total, head.words, head.types
    matches = [_terms_matching(head, *token) for token in tokens]
    typed = [words + n for n, name in enumerate(types) if needle in (name or "").casefold()]
    hits = np.zeros(max(total_events, 1), dtype=np.int64)
    step_type = np.zeros(max(total_events, 1), dtype=np.int32)
    if head.step_types is not None:
        step_type[:total_events] = head.step_types
        type_terms = typed
    else:
        # An older index: every type's steps give each matched step its type.
        type_terms = list(range(words, words + len(types)))
    if type_terms:
        pairs, lengths = head.postings(np.asarray(type_terms, dtype=np.int64))
        runs = np.split(pairs[:, 0], np.cumsum(lengths)[:-1])
        for n, run in zip(type_terms, runs, strict=True):
            if head.step_types is None:
                step_type[run] = n - words
            if n in typed:
                hits[run] += 1
    check: set[int] = set()
    if exact and matches[0]:
        # Hits from the words alone: (hits in the word) x (times in the step), summed, in one
        # pass however many words match.
        pairs, lengths = head.postings(matches[0].terms)
        weights = np.repeat(matches[0].hits, lengths)
        hits += np.bincount(
            pairs[:, 0].astype(np.int64),
            weights=pairs[:, 1].astype(np.int64) * weights,
            minlength=len(hits),
        ).astype(np.int64)[: len(hits)]
    elif not exact and all(matches):
        # Each token is tied to a word's edge here, so a word holds at most one of its hits.
        placed = _placed(head, needle, spans, matches)
        np.add.at(hits, placed.steps, 1)
        check = placed.unsure
    if show_original and len(head.replaced):
        # Their text is not what the index holds: matched as the caller sees it.
        hits[head.replaced] = 0
        check |= set(head.replaced.tolist())
    if check:
        haystacks = Haystacks(trajectory, show_original=show_original)
        for position, type_, text in haystacks.rows(check):
            hits[position] = _count(needle, text, type_)
    matched = np.flatnonzero(hits[:total_events])
    return Found(matched + 1, hits[matched], step_type[matched], types)


def snippets(
    trajectory: Trajectory, steps: list[int], query: str, *, show_original: bool
) -> list[tuple[int, str]]:
    """A short piece of each step's text around its first hit, cut from the text the caller may
    see (redacted for visitors: cut after redaction, never before)."""
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    haystacks = Haystacks(trajectory, show_original=show_original)
    cut: dict[int, str] = {}
    for position, _type, text in haystacks.rows(step - 1 for step in steps):
        text = _IMAGE_REF.sub("[image]", text)
        match = pattern.search(text)
        start = max(0, match.start() - SNIPPET_BEFORE) if match else 0
        end = (match.end() if match else 0) + SNIPPET_AFTER
        piece = _SPACE.sub(" ", text[start:end]).strip()
        cut[position + 1] = ("…" if start else "") + piece + ("…" if end < len(text) else "")
    return [(step, cut.get(step, "")) for step in steps]
