"""Runs of the Base64 alphabet: what the bare AWS key pass and the Base64 view read. Pure Python
and numpy, no Django.

A bare AWS secret key (40 characters of the alphabet standing alone) and Base64-encoded text are
both maximal runs of `[A-Za-z0-9+/]`, 20 or more, with up to two `=` after them. A pattern such
as `[A-Za-z0-9/+=]{40,}` costs in `re` at every position of every shorter run (it fails and
retries one character on), so the runs are found on a copy of the text with one byte per
character (C `encode` and `translate`), where the alphabet reads `a` and `=` stays `=`.

Most runs are neither a key nor Base64: of the 3,615 runs in a megabyte of real agent text
(bench_scan.py's corpus), 2,477 touch `_` or `-` (identifiers, paths, URL-safe tokens: no
Base64, `normalize.base64_decoded` skips them) and 61 are 40 long. `Runs` picks the runs each
pass reads before any Python code sees one: on a long text (a batch of strings joined, 60-90 KB)
with numpy's array operations, on a short one (a view's windows) with the Python loop, which is
quicker there than numpy's fixed cost of some tens of microseconds a call.
"""

from __future__ import annotations

import re

import numpy as np

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
RUN_TABLE = bytes(
    ord("a") if c in _ALPHABET else ord("=") if c == ord("=") else ord(" ") for c in range(256)
)
MIN_RUN = 20
_RUN_START = b"a" * MIN_RUN
_RUN_REST = re.compile(rb"a*={0,2}")
_LETTER, _PAD = ord("a"), ord("=")
# `_` and `-` next to a run: a URL-safe token or an identifier, not Base64.
_URLSAFE = np.zeros(256, dtype=bool)
_URLSAFE[[ord("_"), ord("-")]] = True


def _utf8_start(first: int, second: int) -> bool:
    """Whether Base64 starting with the alphabet's characters `first` and `second` (their
    indexes) can decode to UTF-8: they hold the first byte and the top four bits of the second,
    which tell a lead byte from a continuation one (and the second byte's range after E0, ED,
    F0 and F4). A necessary condition only: `normalize.base64_decoded` decodes what passes."""
    byte, top = (first << 2) | (second >> 4), second & 0xF
    continuation = 0x8 <= top <= 0xB
    if byte < 0x80:
        return not continuation
    if not 0xC2 <= byte <= 0xF4 or not continuation:
        return False
    low, high = {0xE0: (0xA, 0xB), 0xED: (0x8, 0x9), 0xF0: (0x9, 0xB), 0xF4: (0x8, 0x8)}.get(
        byte, (0x8, 0xB)
    )
    return low <= top <= high


# The alphabet's index of each byte (any for a byte outside it: no run holds one), and whether
# a run starting with two given characters can be UTF-8 once decoded, by 64 * first + second.
# Most runs are words and names, not Base64: on real agent text this tells 6 in 10 of them
# apart before they are decoded (bench_scan.py's corpus: 558 of 909, none of them UTF-8).
_INDEX = np.zeros(256, dtype=np.intp)
_INDEX[np.frombuffer(_ALPHABET, dtype=np.uint8)] = np.arange(64)
_UTF8_START = np.array([_utf8_start(i >> 6, i & 63) for i in range(64 * 64)], dtype=bool)
_UTF8_START_SET = frozenset(
    (_ALPHABET[i >> 6], _ALPHABET[i & 63]) for i in range(64 * 64) if _UTF8_START[i]
)
# From this many bytes on numpy's passes beat the loop (measured on the bench corpus: a 65 KB
# batch 0.1 ms against 0.23 ms; a 2 KB view 30-90 us against 7 us).
VECTORIZED_FROM = 16 * 1024

Span = tuple[int, int]


def _loop(marks: bytes) -> list[Span]:
    """The runs in `marks` (the copy through `RUN_TABLE`): `bytes.find` of 20 `a`s is a skipping
    search (a space in the window moves it 20 on), and `re` only extends a run it found."""
    find, rest = marks.find, _RUN_REST.match
    out = []
    at = find(_RUN_START)
    while at >= 0:
        end = rest(marks, at + MIN_RUN).end()  # type: ignore[union-attr]  # `a*` always matches
        out.append((at, end))
        at = find(_RUN_START, end)
    return out


def alphabet_runs(text: str, data: bytes | None = None) -> list[Span]:
    """(start, end) of each maximal run of `[A-Za-z0-9+/]` of 20 or more, with up to two `=`
    after it, as character offsets into `text` (`data`: its one-byte-per-character copy,
    `rules.one_byte_copy`, if at hand)."""
    if data is None:
        data = text.encode("ascii", "replace")
    return Runs(data).spans()


class Runs:
    """The runs of one text (`data`: its one-byte-per-character copy), and the subsets the passes
    read. `vectorized`: numpy's passes (None: by the text's length; the tests set it)."""

    __slots__ = ("_data", "_ends", "_spans", "_starts")

    def __init__(self, data: bytes, vectorized: bool | None = None, marks: bytes | None = None):
        """`marks`: `data` through `RUN_TABLE`, or through a table that agrees with it on
        which bytes read `a` and `=` (`normalize.marks`), if at hand."""
        self._data = data
        if marks is None:
            marks = data.translate(RUN_TABLE)
        if vectorized is None:
            vectorized = len(data) >= VECTORIZED_FROM
        self._spans: list[Span] | None = None
        self._starts: np.ndarray | None = None
        self._ends: np.ndarray | None = None
        if not vectorized:
            self._spans = _loop(marks)
            return
        if _RUN_START not in marks:  # one C search: no run at all
            self._spans = []
            return
        copy = np.frombuffer(marks, dtype=np.uint8)
        # A run of letters starts and ends where "is a letter" changes.
        edges = np.flatnonzero(np.diff(copy == _LETTER, prepend=False, append=False))
        starts, ends = edges[0::2], edges[1::2]
        keep = ends - starts >= MIN_RUN
        starts, ends = starts[keep], ends[keep]
        # Up to two `=` after it (two places more, so that the run at the very end reads none).
        pad = np.concatenate((copy == _PAD, (False, False)))
        first = pad[ends]
        self._starts = starts
        self._ends = ends + first + (first & pad[ends + 1])

    def spans(self) -> list[Span]:
        """Every run, in order."""
        if self._spans is None:
            assert self._starts is not None and self._ends is not None
            self._spans = list(zip(self._starts.tolist(), self._ends.tolist(), strict=True))
        return self._spans

    def of_length(self, length: int) -> list[Span]:
        """The runs exactly `length` characters long (`=` included)."""
        if self._starts is None or self._ends is None:
            return [span for span in self.spans() if span[1] - span[0] == length]
        picked = self._ends - self._starts == length
        return list(zip(self._starts[picked].tolist(), self._ends[picked].tolist(), strict=True))

    def encodable(self, longest: int) -> list[Span]:
        """The runs that can be Base64 of UTF-8 text (`normalize.base64_decoded` decodes
        these): at most `longest` characters, no `_` or `-` just before or after, not one
        character more than a multiple of 4 without an `=` at the end (no Base64 is: a quarter
        of the runs), and their first two characters the start of UTF-8 (`_utf8_start`)."""
        data = self._data
        if self._starts is None or self._ends is None:
            out = []
            length = len(data)
            for start, end in self.spans():
                size = end - start
                if size > longest or (start and data[start - 1] in b"_-"):
                    continue
                if end < length and data[end] in b"_-":
                    continue
                if size % 4 == 1 and data[end - 1] != _PAD:
                    continue
                if (data[start], data[start + 1]) not in _UTF8_START_SET:
                    continue
                out.append((start, end))
            return out
        starts, ends = self._starts, self._ends
        copy = np.frombuffer(data, dtype=np.uint8)
        sizes = ends - starts
        # The character before each run (a run at 0 has none) and after it (none at the end).
        touching = _URLSAFE[copy[np.maximum(starts - 1, 0)]] & (starts > 0)
        touching |= _URLSAFE[copy[np.minimum(ends, len(copy) - 1)]] & (ends < len(copy))
        picked = ~touching & (sizes <= longest) & ((sizes % 4 != 1) | (copy[ends - 1] == _PAD))
        picked &= _UTF8_START[_INDEX[copy[starts]] * 64 + _INDEX[copy[starts + 1]]]
        return list(zip(starts[picked].tolist(), ends[picked].tolist(), strict=True))
