"""Reading an upload's bytes as JSON or JSON Lines, each line numbered as the errors name it.
Pure Python, no Django."""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.importers.base import FormatError


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


def decode_json(data: bytes) -> tuple[Any, bool]:
    """The JSON value of `data`, or for JSON Lines (second item True) the list of
    (line number, value) of its non-blank lines, where a line that is not JSON has a BadLine.
    """
    if not data:
        raise FormatError("the body is empty")
    try:
        # The common case straight from bytes: orjson checks the UTF-8 itself.
        return orjson.loads(data), False
    except orjson.JSONDecodeError as exc:
        first_error = exc
    if not data.strip():  # only now: strip() copies the body
        raise FormatError("the body is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
        try:
            return orjson.loads(text), False
        except orjson.JSONDecodeError as exc:
            first_error = exc
    lines = [(n, line) for n, line in enumerate(split_lines(text), start=1) if line.strip()]
    if len(lines) < 2:
        raise _json_error(first_error, "")
    values: list[tuple[int, Any]] = []
    containers = 0
    for number, line in lines:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            values.append((number, BadLine(_json_error(exc, f"line {number}"))))
            continue
        containers += isinstance(value, (dict, list))
        values.append((number, value))
    if containers * 2 < len(lines):
        # Mostly not JSON per line: a broken JSON document, not JSON Lines.
        raise _json_error(first_error, "")
    return values, True


def _json_error(exc: orjson.JSONDecodeError, where: str) -> FormatError:
    message = str(exc).lower()
    if "recursion" in message or "depth limit" in message:
        return FormatError("JSON nested too deeply", where)
    location = f"line {exc.lineno}, column {exc.colno}" if not where else where
    return FormatError(f"not valid JSON ({exc.msg})", location)
