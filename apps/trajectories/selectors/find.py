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
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection

from apps.trajectories.models import Event, FindIndex, Trajectory
from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.redactions import full_redactions, index_usable, text_digest
from apps.trajectories.services.find_index import (
    DTYPE,
    EDGE,
    FIND_INDEX_VERSION,
    OCCURRENCE,
    UNKNOWN,
    WORD,
)

SNIPPET_BEFORE = 40
SNIPPET_AFTER = 80
READ_BATCH = 500
_SPACE = re.compile(r"\s+")
_IMAGE_REF = re.compile(r"trajhub-image:[0-9a-f]{64}")


@dataclass(frozen=True)
class Found:
    steps: list[tuple[int, int, str]]  # (step, hits, type) of every matching step, in order
    total: int  # hits in all


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
    total = 0
    for position, type_, text in haystacks.rows(None):
        hits = _count(needle, text, type_)
        if hits:
            total += hits
            steps.append((position + 1, hits, type_))
    return Found(steps, total)


def _terms_matching(
    terms: bytes, newlines: np.ndarray, token: str, left: bool, right: bool
) -> Counter[int]:
    """{term number: hits of `token` in that term} for the terms it matches: anywhere inside,
    at the term's start when the query has a non-word character before it (`left`), at its end
    when one follows (`right`)."""
    found: Counter[int] = Counter()
    pattern = re.compile(re.escape(token.encode()))
    starts = [match.start() for match in pattern.finditer(terms)]
    if not starts:
        return found
    length = len(token.encode())
    where = np.searchsorted(newlines, np.asarray(starts), side="right") - 1
    for start, term in zip(starts, where.tolist(), strict=True):
        if left and start != newlines[term] + 1:
            continue
        if right and start + length != newlines[term + 1]:
            continue
        found[term] += 1
    return found


def _slices(
    trajectory_id: int, column: str, offsets: np.ndarray, terms: list[int], dtype: np.dtype
) -> dict[int, np.ndarray]:
    """{term: its records in `column`} for the terms asked for. PostgreSQL reads only their
    slices (the column is stored uncompressed, out of line); elsewhere the whole column."""
    if not terms:
        return {}
    size = dtype.itemsize
    # Slices only for a few words: a short query ("r") matches tens of thousands of words, and
    # as many slices (sent as three arrays, cut one by one) took seconds where the whole
    # column is one read of a few megabytes.
    few = len(terms) <= MANY_TERMS
    if connection.vendor == "postgresql" and few:
        starts = [int(offsets[term]) * size + 1 for term in terms]
        lengths = [int(offsets[term + 1] - offsets[term]) * size for term in terms]
        table = connection.ops.quote_name(FindIndex._meta.db_table)
        name = connection.ops.quote_name(column)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT s.n, substring(f.{name} FROM s.a FOR s.l) FROM {table} f, "
                "unnest(%s::int[], %s::int[], %s::int[]) AS s(n, a, l) "
                "WHERE f.trajectory_id = %s",
                [terms, starts, lengths, trajectory_id],
            )
            rows = cursor.fetchall()
        return {n: np.frombuffer(bytes(blob), dtype=dtype) for n, blob in rows}
    blob = (
        FindIndex.objects.filter(trajectory_id=trajectory_id).values_list(column, flat=True).first()
    )
    records = np.frombuffer(bytes(blob or b""), dtype=dtype)
    return {term: records[offsets[term] : offsets[term + 1]] for term in terms}


def _postings(trajectory_id: int, offsets: np.ndarray, terms: list[int]) -> dict[int, np.ndarray]:
    """{term: (step, count) pairs} of the terms asked for."""
    found = _slices(trajectory_id, "postings", offsets, terms, PAIR)
    return {term: pairs.reshape(-1, 2) for term, pairs in found.items()}


PAIR = np.dtype((DTYPE, (2,)))
MANY_TERMS = 256
HEAD = ("terms", "types", "offsets", "replaced", "total", "version", "step_types")
PLACES = ("step_words", "separators", "occurrence_offsets")


def _head(trajectory: Trajectory, *, placed: bool) -> tuple[Any, ...] | None:
    """The find index's row without its postings, if it was made for the trajectory's current
    redaction index and events (and, `placed`, with where its words are)."""
    if trajectory.indexed_at is None:
        return None
    head = (
        FindIndex.objects.filter(
            trajectory_id=trajectory.pk,
            indexed_at=trajectory.indexed_at,
            chain_fingerprint=trajectory.chain_fingerprint,
        )
        .values_list(*HEAD, *(PLACES if placed else ()))
        .first()
    )
    if head is None or head[4] != trajectory.num_events:
        return None
    if placed and head[5] != FIND_INDEX_VERSION:
        return None  # made before words had places: read (until the sweep makes it again)
    return head


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


def _placed(
    trajectory_id: int,
    needle: str,
    spans: list[tuple[int, int]],
    matches: list[Counter[int]],
    places: tuple[Any, ...],
) -> Placed:
    """The matches of a query of several words (or of one word with a non-word character
    before or after it), from where its words are: token i at ordinal k + i, each separator
    between them exactly the query's, the one before the first ending with what the query has
    before its first word, the one after the last starting with what it has after."""
    step_words_blob, separators, offsets_blob = places
    offsets = np.frombuffer(bytes(offsets_blob), dtype=DTYPE)
    step_words = np.frombuffer(bytes(step_words_blob), dtype=DTYPE).astype(np.int64)
    slices = _slices(
        trajectory_id,
        "occurrences",
        offsets,
        sorted({term for found in matches for term in found}),
        OCCURRENCE,
    )
    empty = np.zeros(0, dtype=OCCURRENCE)
    per_token = []
    for found in matches:
        records = np.concatenate([slices[term] for term in found] or [empty])
        per_token.append(records[np.argsort(records["ordinal"], kind="stable")])
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
    for text, field, fits in (
        (lead, at[0]["before"], str.endswith),
        (trail, at[-1]["after"], str.startswith),
    ):
        if not text:
            continue
        kept = np.array([fits(separator, text) for separator in separators] + [False], bool)
        number = field.astype(np.int64) & ~EDGE
        unknown = number == UNKNOWN
        ok &= unknown | kept[np.minimum(number, len(separators))]
        unsure |= unknown
    steps = np.searchsorted(step_words, start, side="right") - 1
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
    head = _head(trajectory, placed=not exact)
    if head is None:
        return None
    terms_text, types, offsets_blob, replaced_blob, total_events = head[:5]
    terms = terms_text.encode()
    newlines = np.flatnonzero(np.frombuffer(terms, dtype=np.uint8) == 10)
    words = len(newlines) - 1 if len(newlines) else 0
    offsets = np.frombuffer(bytes(offsets_blob), dtype=DTYPE)
    matches = [_terms_matching(terms, newlines, *token) for token in tokens]
    typed = [words + n for n, name in enumerate(types) if needle in (name or "").casefold()]
    wanted = set(typed) | (set(matches[0]) if exact else set())
    stored_types = head[5] == FIND_INDEX_VERSION
    if not stored_types:
        # An older index: every type's steps give each matched step its type.
        wanted |= set(range(words, words + len(types)))
    postings = _postings(trajectory.pk, offsets, sorted(wanted))
    hits = np.zeros(max(total_events, 1), dtype=np.int64)
    for term in typed:
        hits[postings[term][:, 0]] += 1
    step_type = np.zeros(max(total_events, 1), dtype=np.int32)
    if stored_types:
        step_type[:total_events] = np.frombuffer(bytes(head[6]), dtype="<u2")
    else:
        for n in range(len(types)):
            step_type[postings[words + n][:, 0]] = n
    replaced = np.frombuffer(bytes(replaced_blob), dtype=DTYPE)
    check: set[int] = set()
    if exact and matches[0]:
        # Hits from the words alone: (hits in the word) x (times in the step), summed, in one
        # pass however many words match.
        found = [postings[term] for term in matches[0]]
        pairs = np.concatenate(found)
        weights = np.repeat(
            np.fromiter(matches[0].values(), np.int64, len(found)), [len(f) for f in found]
        )
        hits += np.bincount(
            pairs[:, 0].astype(np.int64),
            weights=pairs[:, 1].astype(np.int64) * weights,
            minlength=len(hits),
        ).astype(np.int64)[: len(hits)]
    elif all(matches):
        # Each token is tied to a word's edge here, so a word holds at most one of its hits.
        placed = _placed(trajectory.pk, needle, spans, matches, head[7:])
        np.add.at(hits, placed.steps, 1)
        check = placed.unsure
    if show_original and len(replaced):
        # Their text is not what the index holds: matched as the caller sees it.
        hits[replaced] = 0
        check |= set(replaced.tolist())
    if check:
        haystacks = Haystacks(trajectory, show_original=show_original)
        for position, type_, text in haystacks.rows(check):
            hits[position] = _count(needle, text, type_)
    matched = np.flatnonzero(hits)
    return Found(
        [
            (step + 1, count, types[kind])
            for step, count, kind in zip(
                matched.tolist(), hits[matched].tolist(), step_type[matched].tolist(), strict=True
            )
        ],
        int(hits.sum()),
    )


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
