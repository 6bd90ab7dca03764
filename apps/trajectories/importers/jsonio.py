"""Reading an upload's bytes as JSON or JSON Lines, each line numbered as the errors name it.
Pure Python, no Django.

JSON Lines are read lazily (JsonLines): the body is cut into line spans once, and each line is
parsed when it is read and not kept, so a 20 MB session is never held as text, as lines and as
parsed records at once; an importer walking it holds one record at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, overload

import orjson

from apps.trajectories.importers.base import FormatError

_BOM = b"\xef\xbb\xbf"
# What bytes.strip() leaves: the first byte that is not ASCII whitespace.
_NOT_SPACE = re.compile(rb"[^ \t\n\r\x0b\x0c]")
# str.strip() also strips these (and Unicode spaces, which are not ASCII): such a line is read
# as text to decide whether it is blank, as decoding the whole body used to.
_MAYBE_SPACE = frozenset(b"\x1c\x1d\x1e\x1f")
# How many of the first lines decide that a body whose first line is a JSON value is JSON Lines
# rather than a broken document.
_SAMPLE_LINES = 20


class BadLine:
    """A line of a JSON Lines file that is not JSON: it becomes that record's error."""

    __slots__ = ("error",)

    def __init__(self, error: FormatError):
        self.error = error

    def __repr__(self) -> str:
        return f"BadLine({self.error})"


def split_lines(text: str) -> list[str]:
    """The lines of a JSON Lines file as decode_json numbers them (line N is item N - 1).

    Only "\n" ends a line: JSON strings may hold U+2028 and other characters that
    str.splitlines() would also break at.
    """
    return text.split("\n")


class JsonLines(Sequence[tuple[int, Any]]):
    """The non-blank lines of a JSON Lines body as (line number, value), a value parsed each time
    it is read (a line that is not JSON reads as a BadLine). Slices are views of the same body.
    """

    __slots__ = ("_data", "_spans", "_numbers")

    def __init__(self, data: bytes, spans: list[tuple[int, int]], numbers: list[int]):
        self._data = data
        self._spans = spans
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> tuple[int, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> JsonLines: ...
    def __getitem__(self, index: int | slice) -> tuple[int, Any] | JsonLines:
        if isinstance(index, slice):
            return JsonLines(self._data, self._spans[index], self._numbers[index])
        return self._numbers[index], self._value(index)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for index in range(len(self._spans)):
            yield self._numbers[index], self._value(index)

    def number(self, index: int) -> int:
        """The line number of item `index` (without parsing it)."""
        return self._numbers[index]

    def raw(self, index: int) -> bytes:
        """The bytes of item `index`'s line, as sent (without its "\n")."""
        start, end = self._spans[index]
        return self._data[start:end]

    def _value(self, index: int) -> Any:
        start, end = self._spans[index]
        view = memoryview(self._data)[start:end]
        try:
            return orjson.loads(view)
        except orjson.JSONDecodeError as exc:
            where = f"line {self._numbers[index]}"
            try:
                bytes(view).decode("utf-8")
            except UnicodeDecodeError as bad:
                return BadLine(FormatError(f"not valid UTF-8 (byte {start + bad.start})", where))
            return BadLine(_json_error(exc, where))


def _line_spans(data: bytes, start: int) -> tuple[list[tuple[int, int]], list[int]]:
    """(start, end) and line number of each non-blank line of data[start:], lines ending at
    "\n" only, blank as str.strip() says."""
    spans: list[tuple[int, int]] = []
    numbers: list[int] = []
    number, position, size = 0, start, len(data)
    while position <= size:
        end = data.find(b"\n", position)
        if end < 0:
            end = size
        number += 1
        found = _NOT_SPACE.search(data, position, end)
        if found is not None and not _blank_text(data, found.start(), end):
            spans.append((position, end))
            numbers.append(number)
        position = end + 1
    return spans, numbers


def _blank_text(data: bytes, first: int, end: int) -> bool:
    """Whether a line whose first non-ASCII-space byte is at `first` is blank all the same:
    only characters that str.strip() strips (rare, so read as text only then)."""
    if data[first] < 0x80 and data[first] not in _MAYBE_SPACE:
        return False
    return not data[first:end].decode("utf-8", "replace").strip()


def _first_line_is_a_record(data: bytes, start: int) -> bool:
    """Whether the body's first non-blank line is a JSON object or array by itself, with more
    than JSON whitespace after it. Then parsing the whole body as one document can only fail
    (a complete value followed by more), so that parse is skipped: orjson's error would copy
    the whole body into its message's document."""
    found = _NOT_SPACE.search(data, start)
    if found is None or data[found.start()] not in b"{[":
        return False
    end = data.find(b"\n", found.start())
    if end < 0 or _NOT_SPACE.search(data, end) is None:
        return False
    try:
        return isinstance(orjson.loads(memoryview(data)[found.start() : end]), (dict, list))
    except orjson.JSONDecodeError:
        return False


def decode_json(data: bytes) -> tuple[Any, bool]:
    """The JSON value of `data`, or for JSON Lines (second item True) the (line number, value)
    of its non-blank lines (JsonLines), where a line that is not JSON has a BadLine."""
    if not data:
        raise FormatError("the body is empty")
    start = len(_BOM) if data.startswith(_BOM) else 0
    if _first_line_is_a_record(data, start):
        lines = JsonLines(data, *_line_spans(data, start))
        if len(lines) >= 2 and _mostly_records(lines[:_SAMPLE_LINES]):
            return lines, True
        raise _document_error(data)
    try:
        # The common case straight from bytes: orjson checks the UTF-8 itself.
        return orjson.loads(data), False
    except orjson.JSONDecodeError:
        pass
    if _NOT_SPACE.search(data) is None:
        raise FormatError("the body is empty")
    try:
        # Checked whole (a broken document names the byte), the text let go at once.
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 (byte {exc.start})") from None
    if start:
        try:
            return orjson.loads(memoryview(data)[start:]), False
        except orjson.JSONDecodeError:
            pass
    lines = JsonLines(data, *_line_spans(data, start))
    if len(lines) < 2 or not _mostly_records(lines):
        raise _document_error(data)
    return lines, True


def _mostly_records(lines: JsonLines) -> bool:
    """Whether at least half the lines are JSON objects or arrays: else the body is a broken
    JSON document, not JSON Lines."""
    containers = sum(isinstance(value, (dict, list)) for _, value in lines)
    return containers * 2 >= len(lines)


def _document_error(data: bytes) -> FormatError:
    """The error of `data` read as one JSON document (BOM and all, as orjson sees it)."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    try:
        orjson.loads(memoryview(data)[start:])
    except orjson.JSONDecodeError as exc:
        return _json_error(exc, "")
    return FormatError("not valid JSON")  # not reached: the callers saw it fail


def _json_error(exc: orjson.JSONDecodeError, where: str) -> FormatError:
    message = str(exc).lower()
    if "recursion" in message or "depth limit" in message:
        return FormatError("JSON nested too deeply", where)
    location = f"line {exc.lineno}, column {exc.colno}" if not where else where
    return FormatError(f"not valid JSON ({exc.msg})", location)
