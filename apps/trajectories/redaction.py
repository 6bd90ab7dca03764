"""Applying a trajectory's redactions ({"original": "<EMAIL_1>"}) to text and JSON. Pure Python.

The scan (apps.moderation) decides what to redact and stores the map on Trajectory.redactions;
every public surface (pages, API, exports, releases) passes text through `redactor()`.

Matching is leftmost-longest: at the first place where any original occurs, the longest original
that starts there is replaced, and the search goes on after it (what one regular expression of
every original, longest first, does). `Matcher` does this in time proportional to the text
whatever the number of originals: an alternation of them costs `re` every branch at every
position (300,000 redactions of one trajectory made its page take a minute), and an Aho-Corasick
automaton of that many strings takes tens of seconds and hundreds of MB to build.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from operator import itemgetter
from typing import Any

Redact = Callable[[str], str]

# Up to this many strings an alternation is the faster matcher (its C loop over the branches at a
# position beats a dictionary look-up per position in Python); past it, the index below.
ALTERNATION_MAX = 256
_PREFIX_MAX = 8
# A text whose length times the number of distinct lengths is below this is read without the
# index (building it reads every string: a list page redacts many short titles).
SHORT_TEXT_LOOKUPS = 20_000


class Matcher:
    """Leftmost-longest search for many literal strings, in one pass over the text.

    Up to ALTERNATION_MAX strings it is one regular expression. Past that, the strings' set (the
    caller's dict itself) and their lengths; a short text is then read position by position with
    a look-up per length, and a long one through an index built on first need: the strings'
    first `k` characters (`k` the shortest length, at most 8), so that each position inside a run
    of characters that occur in the strings costs one set look-up, and only where a prefix is some
    string's are whole candidates looked up, longest first. Everything built here is C-level
    passes over the strings (`map`, `set`, `join`): no compilation, nothing per string in Python.
    """

    def __init__(self, strings: Collection[str]):
        # A collection given (the caller's dict, a set) is used as it is for membership, not
        # copied: the callers' maps are read-only here; anything else becomes a set.
        keys: Collection[str] = (
            strings if isinstance(strings, AbstractSet | Mapping) else set(strings)
        )
        lengths = set(map(len, keys))
        lengths.discard(0)
        self._keys = keys
        self._lengths = tuple(sorted(lengths, reverse=True))
        self._pattern: re.Pattern[str] | None = None
        self._prefixes: set[str] | None = None
        self._prefix = 0
        self._runs: re.Pattern[str] | None = None
        if lengths and len(keys) <= ALTERNATION_MAX:
            ordered = sorted((key for key in keys if key), key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(key) for key in ordered))

    def __bool__(self) -> bool:
        return bool(self._lengths)

    def prepared(self) -> Matcher:
        """This matcher with its index built now, for a caller about to read many strings
        (short ones would otherwise be read a look-up per position and length)."""
        if self._lengths and self._pattern is None and self._prefixes is None:
            self._build_index()
        return self

    def _build_index(self) -> None:
        keys = self._keys
        prefix = min(_PREFIX_MAX, self._lengths[-1])
        self._prefixes = set(map(itemgetter(slice(0, prefix)), keys))
        self._prefix = prefix
        # An occurrence lies inside a run of characters that occur in the strings: the text
        # between such runs (spaces and punctuation, for most redactions) is skipped in C.
        alphabet = "".join(sorted(set("".join(keys))))
        self._runs = re.compile(f"[{_class_escape(alphabet)}]{{{prefix},}}")

    def spans(self, text: str, before: int | None = None) -> list[tuple[int, int]]:
        """(start, end) of each match, left to right, not overlapping; with `before`, only the
        matches that start before that position (the search stops there: compare reads a few
        hundred characters' worth of long texts)."""
        if not self._lengths or not text:
            return []
        stop = len(text) if before is None else min(before, len(text))
        if self._pattern is not None:
            if before is None:
                return [match.span() for match in self._pattern.finditer(text)]
            found = []
            for match in self._pattern.finditer(text):
                if match.start() >= stop:
                    break
                found.append(match.span())
            return found
        if self._prefixes is None and stop * len(self._lengths) <= SHORT_TEXT_LOOKUPS:
            return self._direct(text, 0, len(text), stop)
        if self._prefixes is None:
            self._build_index()
        assert self._runs is not None and self._prefixes is not None
        out: list[tuple[int, int]] = []
        prefixes, keys, prefix, lengths = self._prefixes, self._keys, self._prefix, self._lengths
        for run in self._runs.finditer(text):
            position, end = run.span()
            if position >= stop:
                break
            last = min(end - prefix, stop - 1)
            while position <= last:
                if text[position : position + prefix] in prefixes:
                    for length in lengths:
                        if position + length <= end and text[position : position + length] in keys:
                            out.append((position, position + length))
                            position += length
                            break
                    else:
                        position += 1
                else:
                    position += 1
        return out

    def _direct(
        self, text: str, position: int, end: int, stop: int | None = None
    ) -> list[tuple[int, int]]:
        """A look-up per position and length: no index (a title, a label). Matches start
        before `stop` (default: `end`)."""
        out: list[tuple[int, int]] = []
        keys, lengths = self._keys, self._lengths
        stop = end if stop is None else stop
        while position < stop:
            for length in lengths:
                if position + length <= end and text[position : position + length] in keys:
                    out.append((position, position + length))
                    position += length
                    break
            else:
                position += 1
        return out

    def sub(self, text: str, replace: Callable[[str], str]) -> str:
        """`text` with each match replaced by `replace(match)`."""
        if not self._lengths or not text:
            return text
        if self._pattern is not None:
            return self._pattern.sub(lambda match: replace(match.group(0)), text)
        spans = self.spans(text)
        if not spans:
            return text
        parts = []
        cursor = 0
        for start, end in spans:
            parts.append(text[cursor:start])
            parts.append(replace(text[start:end]))
            cursor = end
        parts.append(text[cursor:])
        return "".join(parts)


def _class_escape(characters: str) -> str:
    return "".join("\\" + c if c in "\\]^-[" else c for c in characters)


def identity(text: str) -> str:
    return text


def redactor(redactions: dict[str, str] | None) -> Redact:
    """A function replacing every original with its placeholder (longest originals first)."""
    if not redactions:
        return identity
    matcher = Matcher(redactions)
    if not matcher:
        return identity
    lookup = redactions.__getitem__

    def redact(text: str) -> str:
        if not text:
            return text
        return matcher.sub(text, lookup)

    return redact


def redact_data(value: Any, redact: Redact) -> Any:
    """The same JSON value with every string (keys included) passed through `redact`."""
    if redact is identity:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(item, redact) for item in value]
    if isinstance(value, dict):
        return {redact(key): redact_data(item, redact) for key, item in value.items()}
    return value
