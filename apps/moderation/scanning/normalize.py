"""Views of a text as a reader sees it, each with a map back to offsets in the stored text.

A secret is stored in ways a pattern does not see at once: split by colour codes (`grep --color`
output, which the trajectory page shows with the codes removed), percent-encoded in a URL,
broken in two where a terminal wrapped a long line, or Base64-encoded. Each builder here returns
a `View` (or None when the text has nothing of the kind): the transformed text, and segments
that map a span of it back to the stored text, so that what is redacted is the stored span.

Views other than the terminal one cover only windows around what was transformed (joined by NUL,
which no rule matches across), so their cost follows the transformed parts, not the whole text.
"""

from __future__ import annotations

import binascii
import html.entities
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from apps.moderation.scanning.rules import one_byte_copy
from apps.moderation.scanning.runs import RUN_TABLE, VECTORIZED_FROM, Runs

# The same sequences the trajectory page removes from terminal output (rendering/text.py).
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# Control characters the page drops; NUL is kept (it separates the strings of a batch).
_CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TERMINAL = re.compile(ANSI.pattern + "|" + _CONTROL.pattern)
# The same characters (ESC among them) as 1 in a byte table: whether a text has any is then two C
# passes (`encode` with one byte per character, `translate`), not a character-class search.
_CONTROL_TABLE = bytes(
    1 if (c <= 0x1F and c not in (0x00, 0x09, 0x0A, 0x0D)) or c == 0x7F else 0 for c in range(256)
)
# Spelled with the first escape outside the group: `(?:%..)+` has no literal prefix for `re`, which
# then tries the group at every position (measured: 40x slower, more than a whole rule pass).
_ESCAPES = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")
# A line break between two runs of token characters, the first line long enough to be a
# terminal's full width: where a terminal wraps a long key. (The look-behind comes after the
# literal line break so that `re` searches for line breaks, not tries every position.)
# The next line must go on with token characters up to a space or its end, and not start an
# assignment of its own: `HOME=/root` after `KEY=value` is a new line, not the rest of the value.
# (The one-character look-ahead first is implied by the last one: most line breaks are followed by
# indentation or another break, and are let go before the look-behind reads twenty characters
# back; a third less time, the same matches.)
_JUNCTION = re.compile(
    r"\n(?=[A-Za-z0-9_+/=.-])(?<=[^\s\x00]{8}\n)(?![A-Z_][A-Z0-9_]*=)"
    r"(?=(?P<rest>[A-Za-z0-9_+/=.-]+)(?:[\s\x00]|$))"
)
_WRAP_MIN_LINE = 20
_WRAP_MIN_TOKEN = 20  # characters of the wrapped token, both lines together
# The junctions `unwrapped` reads: those of `_JUNCTION` where the token's two parts can reach
# _WRAP_MIN_TOKEN together, the first part at least k characters (a look-behind) and the rest at
# least 19 - k (a look-ahead) for some even k, a condition every junction it keeps meets. `re`
# lets go of 6 in 10 of the junctions of real agent text this way, each of which was a Python
# step of the width and token checks (bench_scan.py's corpus: 942 -> 402 a megabyte).
_TOKEN_CHARACTER = "[A-Za-z0-9_+/=.-]"
_LONG_JUNCTION = re.compile(
    _JUNCTION.pattern
    + "(?:(?<=[^\\s\\x00]{20}\\n)|"
    + "|".join(
        f"(?<=[^\\s\\x00]{{{k}}}\\n)(?={_TOKEN_CHARACTER}{{{19 - k}}})" for k in range(18, 7, -2)
    )
    + ")"
)
# A terminal wraps at its width: a wrapped line is as long as the full line before it, or as
# long as one of the widths terminals commonly have, or as Base64 is written (`base64` wraps
# at 76, PEM and `openssl base64` at 64). This keeps ordinary line ends out.
_WIDTHS = frozenset({40, 64, 72, 76, 80, 100, 120, 132, 160, 200, 240})
# Base64 runs are those of `runs.Runs.encodable`.
_MAX_RUN = 8192
_MAX_DECODED = 4096  # Base64 runs decoded per string: bounds the work on a text full of them
MARGIN = 256  # characters of context kept around a transformed part (the `KEY=` before a value)


@dataclass
class View:
    """`text` derived from a stored string; segments map its offsets back to the stored ones."""

    text: str
    _dstarts: list[int] = field(default_factory=list)
    _rstarts: list[int] = field(default_factory=list)
    _dlens: list[int] = field(default_factory=list)
    _rlens: list[int] = field(default_factory=list)
    _linear: list[bool] = field(default_factory=list)

    def _segment(self, dstart: int, rstart: int, dlen: int, rlen: int, linear: bool) -> None:
        if dlen > 0:
            self._dstarts.append(dstart)
            self._rstarts.append(rstart)
            self._dlens.append(dlen)
            self._rlens.append(rlen)
            self._linear.append(linear)

    def to_stored(self, start: int, end: int) -> tuple[int, int] | None:
        """The stored span of `text[start:end]` (a decoded character maps to its whole escape)."""
        i = bisect_right(self._dstarts, start) - 1
        j = bisect_right(self._dstarts, end - 1) - 1
        if i < 0 or j < 0:
            return None
        if (
            start >= self._dstarts[i] + self._dlens[i]
            or end - 1 >= self._dstarts[j] + self._dlens[j]
        ):
            return None  # in a separator between windows
        linear_i, linear_j = self._linear[i], self._linear[j]
        stored_start = self._rstarts[i] + (start - self._dstarts[i] if linear_i else 0)
        stored_end = (
            self._rstarts[j] + (end - 1 - self._dstarts[j]) + 1
            if linear_j
            else self._rstarts[j] + self._rlens[j]
        )
        return stored_start, stored_end


def _build(text: str, replacements: list[tuple[int, int, str]], margin: int | None) -> View | None:
    """Apply sorted, non-overlapping replacements; `margin=None` keeps the whole text, else only
    windows of `margin` characters around them."""
    if not replacements:
        return None
    if margin is None:
        windows = [(0, len(text))]
    else:
        windows = []
        for start, end, _ in replacements:
            low, high = max(0, start - margin), min(len(text), end + margin)
            if windows and low <= windows[-1][1]:
                windows[-1] = (windows[-1][0], max(windows[-1][1], high))
            else:
                windows.append((low, high))
    view = View("")
    parts: list[str] = []
    dpos = 0
    index = 0
    for low, high in windows:
        if parts:
            parts.append("\x00")
            dpos += 1
        cursor = low
        while index < len(replacements) and replacements[index][0] < high:
            start, end, replacement = replacements[index]
            index += 1
            if start < cursor:
                continue
            view._segment(dpos, cursor, start - cursor, start - cursor, True)
            parts.append(text[cursor:start])
            dpos += start - cursor
            view._segment(dpos, start, len(replacement), end - start, False)
            parts.append(replacement)
            dpos += len(replacement)
            cursor = end
        view._segment(dpos, cursor, high - cursor, high - cursor, True)
        parts.append(text[cursor:high])
        dpos += high - cursor
    view.text = "".join(parts)
    return view


# The control characters as 1 and the Base64 alphabet as `Runs` reads it, in one table: the scan
# makes one copy of a text through it for both (`marks`), and a pass over 60-90 KB is a
# thirtieth of the floor's time.
_MARKS_TABLE = bytes(1 if _CONTROL_TABLE[c] else RUN_TABLE[c] for c in range(256))


def marks(data: bytes) -> bytes:
    """`data` (one byte per character) with each control character as 1 (what `terminal`
    looks for) and the Base64 alphabet as `Runs` reads it (its `marks`)."""
    return data.translate(_MARKS_TABLE)


def terminal(text: str, data: bytes | None = None, marked: bytes | None = None) -> View | None:
    """The text without colour codes and control characters, as the page shows terminal output.
    `data`: the text with one byte per character (`rules.one_byte_copy`), if at hand; `marked`:
    its `marks`, if at hand."""
    if marked is None:
        if data is None:
            data = one_byte_copy(text)
        marked = data.translate(_CONTROL_TABLE)
    at = marked.find(1)
    if at < 0:
        return None
    # Every sequence starts at a control character (ESC among them): `re` is asked to match only
    # there, found by `bytes.find` in the table's copy. (`finditer` of the alternation has no
    # literal to search for and tried every position: 3x the cost of the floor on the text
    # around one coloured output.)
    replacements = []
    while at >= 0:
        match = _TERMINAL.match(text, at)
        end = match.end() if match is not None else at + 1
        replacements.append((at, end, ""))
        at = marked.find(1, end)
    return _build(text, replacements, None)


def _starting_with(pattern: re.Pattern[str], literal: str, text: str) -> list[re.Match[str]]:
    """`pattern`'s matches in `text`, as `finditer` gives them, for a pattern that starts with
    `literal`: `str.find` goes from one `literal` to the next (a memchr), and `re` is asked to
    match only there. `finditer`'s own search for the literal reads the text a character at a
    time, at about twice the cost (bench_scan.py's corpus: `%` 29 -> 18 us a batch, `\\` and `&`
    59 -> 37 us)."""
    out = []
    find, match = text.find, pattern.match
    at = find(literal)
    while at >= 0:
        found = match(text, at)
        if found is None:
            at = find(literal, at + 1)
        else:
            out.append(found)
            at = find(literal, found.end())
    return out


def url_decoded(text: str) -> View | None:
    """Percent-escapes decoded (`%2D` -> `-`), in windows around them."""
    if "%" not in text:
        return None
    replacements = []
    for match in _starting_with(_ESCAPES, "%", text):
        raw = bytes.fromhex(match.group(0).replace("%", ""))
        decoded = raw.decode("utf-8", "replace").replace("\x00", "\ufffd")
        replacements.append((match.start(), match.end(), decoded))
    return _build(text, replacements, MARGIN)


# What Markdown decodes (markdown-it, CommonMark): a backslash before ASCII punctuation, and
# entity references (`&#115;`, `&#x73;`, `&amp;`). An agent's message is shown as Markdown, so a
# key spelled `&#115;k-proj-...` or `sk\-proj\-...` is shown whole. The two are searched apart,
# each pattern starting with its literal, so that `re` searches for `\` or `&`: one alternation
# of them has no literal prefix, and `re` tried it at every position (a quarter of the floor's
# time on the bench corpus, for some twenty escapes a megabyte).
_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")
_ENTITY = re.compile(r"&(?:#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_HTML5 = html.entities.html5


def _entity_code_valid(c: int) -> bool:
    """markdown-it's `isValidEntityCode`: what it decodes (else it shows U+FFFD)."""
    if 0xD800 <= c <= 0xDFFF or 0xFDD0 <= c <= 0xFDEF or (c & 0xFFFF) in (0xFFFF, 0xFFFE):
        return False
    if c <= 0x08 or c == 0x0B or 0x0E <= c <= 0x1F or 0x7F <= c <= 0x9F:
        return False
    return c <= 0x10FFFF


def _markdown_matches(text: str) -> list[re.Match[str]]:
    """The escapes and entities in `text`, left to right, as `finditer` of the alternation of
    the two finds them: merged by start, a match that begins inside the one before it
    (`\\&amp;`: the `&` is escaped) dropped. Neither pattern's matches overlap one another, and
    no entity holds a backslash."""
    escapes = _starting_with(_ESCAPE, "\\", text)
    entities = _starting_with(_ENTITY, "&", text)
    if not escapes or not entities:
        return escapes or entities
    out = []
    end = 0
    for match in sorted(escapes + entities, key=re.Match.start):
        if match.start() >= end:
            out.append(match)
            end = match.end()
    return out


def markdown_decoded(text: str) -> View | None:
    """Backslash escapes and entity references decoded as Markdown shows them, in windows."""
    replacements = []
    for match in _markdown_matches(text):
        found = match.group(0)
        if found[0] == "\\":
            decoded = found[1]
        elif found[1] == "#":
            code = int(found[3:-1], 16) if found[2] in "xX" else int(found[2:-1])
            decoded = chr(code) if _entity_code_valid(code) else "\ufffd"
        else:
            named = _HTML5.get(found[1:])
            if named is None:
                continue
            decoded = named
        replacements.append((match.start(), match.end(), decoded))
    return _build(text, replacements, MARGIN)


_LONGEST_LINE = 1024  # a line longer than any terminal is not a wrapped one
_WIDTH_TABLE = np.zeros(_LONGEST_LINE + 1, dtype=bool)
_WIDTH_TABLE[sorted(_WIDTHS)] = True


def _line_start(data: bytes, end: int) -> int:
    """Where the line ending at `end` starts (looking back a bounded distance: linear overall).
    `data`: the text with one byte per character, where `rfind` is one `memrchr` (in a text
    with a character beyond Latin-1, a character loop: most of the view's time)."""
    low = max(0, end - _LONGEST_LINE)
    return max(data.rfind(b"\n", low, end), data.rfind(b"\x00", low, end), low - 1) + 1


def unwrapped(text: str, data: bytes | None = None, vectorized: bool | None = None) -> View | None:
    """Line breaks removed where a terminal would have wrapped a long token, in windows.
    `data`: the text with one byte per character (`rules.one_byte_copy`), if at hand;
    `vectorized`: the line breaks picked with numpy first (None: by the text's length; the
    tests set it)."""
    if "\n" not in text:
        return None
    if data is None:
        data = one_byte_copy(text)
    if vectorized is None:
        vectorized = len(data) >= VECTORIZED_FROM
    if vectorized:
        places = _breaks_of_wide_lines(data)
        matches: Iterable[re.Match[str]] = filter(
            None, map(_LONG_JUNCTION.match, repeat(text, len(places)), places)
        )
    else:
        matches = _LONG_JUNCTION.finditer(text)
    replacements = []
    for match in matches:
        end = match.start()
        line_start = _line_start(data, end)
        width = end - line_start
        if width < _WRAP_MIN_LINE:
            continue
        # The width first: it lets go of nearly every ordinary line end (a thousand a megabyte),
        # most of them on one look at the character before where the line above would start.
        if width not in _WIDTHS:
            above = line_start - 1 - width  # where the line above starts if it is as long
            if line_start == 0 or above < 0:
                continue
            if above and width < _LONGEST_LINE and data[above - 1] not in b"\n\x00":
                continue
            if _line_start(data, line_start - 1) != above:
                continue
        # The token cut in two is long enough to be a key: a line ending in a short value after
        # `KEY = ` (a 40-column terminal leaves 16 characters of a key there) counts with the rest.
        head = end - 1
        while head > line_start and not text[head - 1].isspace():
            head -= 1
        if end - head + len(match.group("rest")) < _WRAP_MIN_TOKEN:
            continue
        replacements.append((match.start(), match.end(), ""))
    return _build(text, replacements, MARGIN)


def _breaks_of_wide_lines(data: bytes) -> list[int]:
    """The line breaks of a long text (`data`: one byte per character) whose line can pass the
    width test of `unwrapped`, in order: at least _WRAP_MIN_LINE characters, and as wide as a
    terminal commonly is, or as the line above, or too long to tell (the loop in `unwrapped`
    tells them apart as it does every junction). Measured from the positions of the line breaks
    and NULs alone (a thousand a megabyte), with numpy: the junction pattern's search read every
    line break and matched 4 in 10 of them, each then a Python step of the width test, which 1 in
    13 passed (bench_scan.py's corpus)."""
    copy = np.frombuffer(data, dtype=np.uint8)
    newline = copy == 10
    breaks = np.flatnonzero(newline | (copy == 0))
    # The line a break ends runs from the break before it (or the text's start).
    widths = np.diff(breaks, prepend=-1) - 1
    above = np.concatenate(((-1,), widths[:-1]))
    wide = (
        _WIDTH_TABLE[np.minimum(widths, _LONGEST_LINE)]
        | (widths == above)
        | (widths >= _LONGEST_LINE)
    )
    keep = newline[breaks] & (widths >= _WRAP_MIN_LINE) & wide
    return breaks[keep].tolist()


def _printable(decoded: str) -> bool:
    return sum(c.isprintable() or c in "\n\r\t" for c in decoded) >= 0.95 * len(decoded)


def base64_decoded(text: str, runs: Runs | None = None) -> View | None:
    """Base64 runs that decode to text, decoded (each maps back to its whole run).

    `runs`: the runs of `text` when the caller has them already (the bare AWS key pass reads the
    same runs)."""
    replacements = []
    # The bound counts per string of a batch (strings are joined with NUL, which no run holds):
    # a string full of Base64 must not use up the decoding of the strings after it, so each
    # string's findings are those it has when scanned alone.
    decoded_here, string_end = 0, text.find("\0")
    if runs is None:
        runs = Runs(one_byte_copy(text))
    for start, end in runs.encodable(_MAX_RUN):
        if 0 <= string_end < start:  # a later string: its own count (no run holds NUL)
            decoded_here, string_end = 0, text.find("\0", start)
        if decoded_here >= _MAX_DECODED:
            continue
        size = end - start
        # `base64.b64decode(validate=True)` is this call, after checks of its argument's type.
        try:
            raw = binascii.a2b_base64(text[start:end] + "=" * (-size % 4), strict_mode=True)
        except binascii.Error:
            continue
        # Most runs are words and names, whose decoding is no UTF-8: told apart without raising
        # an exception for each (U+FFFD where it was not in the bytes: an invalid sequence).
        decoded = raw.decode("utf-8", "replace")
        if "\ufffd" in decoded:
            if b"\xef\xbf\xbd" not in raw:
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
        if len(decoded) >= 12 and _printable(decoded):
            replacements.append((start, end, decoded.replace("\x00", " ")))
            decoded_here += 1
    return _build(text, replacements, 0)
