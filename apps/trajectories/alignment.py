"""difflib's alignment of two sequences, the same result in a fraction of the time.

/compare/ aligns two runs' step signatures with difflib.SequenceMatcher (autojunk off, no
junk): the longest matching block, then the same again left and right of it. Its
find_longest_match walks every pair of equal elements in Python dictionaries, and step
signatures repeat (a run of 5,000 steps has fewer than 200 distinct ones), so two 5,000-step
runs cost it 600,000 pairs a block: 0.8 s, the whole of a cold /compare/ of two 50,000-event
runs.

Here the pairs of equal elements are made once with numpy and joined into diagonal runs
(segments: a[i:end] == b[i+d:end+d]); the longest match in a rectangle is the longest
segment clipped to it, ties broken as difflib breaks them (the match whose last cell comes
first, row by row), and each rectangle of the recursion only looks at the segments that
cross its parent's. Two inputs with more pairs than MAX_PAIRS (say, two long chats of
alternating user and agent messages) go to difflib itself, for the same answer, slowly.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence

import numpy as np

MAX_PAIRS = 3_000_000
Opcode = tuple[str, int, int, int, int]


def _codes(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    numbers: dict[Hashable, int] = {}
    left = np.fromiter((numbers.setdefault(x, len(numbers)) for x in a), np.int32, len(a))
    right = np.fromiter((numbers.setdefault(x, len(numbers)) for x in b), np.int32, len(b))
    return left, right


Segments = tuple[np.ndarray, np.ndarray, np.ndarray]  # first row, diagonal, end row


def _segments(a: np.ndarray, b: np.ndarray, pairs: int) -> Segments:
    """Every maximal diagonal run of equal elements, a[i:end] == b[i+d:end+d], as arrays of
    i, d and end: the pairs of equal elements (made row by row), put in diagonal order (a
    stable sort keeps each diagonal's rows in order: a radix sort where the diagonals fit 16
    bits), cut where a diagonal changes or a row is skipped."""
    order = np.argsort(b, kind="stable").astype(np.int32)
    ordered = b[order]
    low = np.searchsorted(ordered, a, side="left")
    counts = np.searchsorted(ordered, a, side="right") - low
    rows = np.repeat(np.arange(len(a), dtype=np.int32), counts)
    # Each pair's place among b's elements equal to its row's: its row's low + how far in.
    first = np.repeat((low - (np.cumsum(counts) - counts)).astype(np.int32), counts)
    cols = order[first + np.arange(pairs, dtype=np.int32)]
    small = len(a) + len(b) < 2**15
    diagonal = (cols - rows).astype(np.int16 if small else np.int32)
    by = np.argsort(diagonal, kind="stable")
    diagonal, rows = diagonal[by], rows[by]
    starts = np.ones(pairs, dtype=bool)
    starts[1:] = (diagonal[1:] != diagonal[:-1]) | (rows[1:] != rows[:-1] + 1)
    where = np.flatnonzero(starts)
    i = rows[where]
    return (
        i,
        diagonal[where].astype(np.int32),
        i + np.diff(np.append(where, pairs)).astype(np.int32),
    )


def _longest(
    segments: Segments, alo: int, ahi: int, blo: int, bhi: int
) -> tuple[tuple[int, int, int], Segments]:
    """find_longest_match(alo, ahi, blo, bhi) over the segments, and those of them that cross
    the rectangle (the only ones its parts can hold)."""
    i, d, end = segments
    low = np.maximum(np.maximum(i, alo), blo - d)
    high = np.minimum(np.minimum(end, ahi), bhi - d)
    crossing = high > low
    i, d, end, low, high = i[crossing], d[crossing], end[crossing], low[crossing], high[crossing]
    if not len(i):
        return (alo, blo, 0), (i, d, end)
    size = high - low
    longest = size.max()
    best = np.flatnonzero(size == longest)
    # difflib keeps the first match to reach the longest size, scanning rows then columns:
    # the one whose last cell (row high - 1, column high - 1 + d) comes first.
    pick = best[np.lexsort((d[best], high[best]))[0]]
    start = int(low[pick])
    return (start, start + int(d[pick]), int(longest)), (i, d, end)


def _blocks(a: np.ndarray, b: np.ndarray, segments: Segments) -> list[tuple[int, int, int]]:
    """SequenceMatcher.get_matching_blocks() with find_longest_match over the segments."""
    blocks: list[tuple[int, int, int]] = []
    queue = [(0, len(a), 0, len(b), segments)]
    while queue:
        alo, ahi, blo, bhi, crossing = queue.pop()
        (i, j, k), crossing = _longest(crossing, alo, ahi, blo, bhi)
        if k:
            blocks.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j, crossing))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi, crossing))
    blocks.sort()
    joined: list[tuple[int, int, int]] = []
    i1 = j1 = k1 = 0
    for i2, j2, k2 in blocks:
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                joined.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        joined.append((i1, j1, k1))
    joined.append((len(a), len(b), 0))
    return joined


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes(), exactly."""
    left, right = _codes(a, b)
    if not len(left) or not len(right):
        return difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    ordered = np.sort(right)
    pairs = int(
        (np.searchsorted(ordered, left, side="right") - np.searchsorted(ordered, left)).sum()
    )
    if pairs > MAX_PAIRS:
        return difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    blocks = _blocks(left, right, _segments(left, right, pairs))
    answer: list[Opcode] = []
    i = j = 0
    for ai, bj, size in blocks:
        tag = ""
        if i < ai and j < bj:
            tag = "replace"
        elif i < ai:
            tag = "delete"
        elif j < bj:
            tag = "insert"
        if tag:
            answer.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            answer.append(("equal", ai, i, bj, j))
    return answer
