"""Format importers: bytes in, canonical trajectories out. Pure Python, no Django.

`parse()` decodes the bytes, checks the limits, detects the format (or takes the one asked for)
and converts every record. Each format is one module with NAME, LABEL, detect() and convert().
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import orjson

from apps.trajectories.importers import (
    atif,
    claude_code,
    codex_cli,
    gemini_cli,
    openai_messages,
    openhands_eval,
    openhands_share,
    openhands_v0,
    openhands_v1,
    sharegpt,
    sweagent,
)
from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    ImportItem,
    ImportResult,
    finalize,
    json_type,
)

__all__ = [
    "CanonicalEvent",
    "CanonicalTrajectory",
    "FormatError",
    "ImportItem",
    "ImportResult",
    "Limits",
    "FORMATS",
    "parse",
    "parse_document",
]

# Order matters: the most specific shapes first. A share payload also has a "trajectory" list;
# V1 and SWE-agent files also have a "history"; evaluation rows hold V0 events under "history".
IMPORTERS: list[ModuleType] = [
    openhands_share,
    claude_code,
    codex_cli,
    gemini_cli,
    atif,
    openhands_v1,
    sweagent,
    openhands_eval,
    openhands_v0,
    sharegpt,
    openai_messages,
]
FORMATS: dict[str, ModuleType] = {module.NAME: module for module in IMPORTERS}


@dataclass(frozen=True)
class Limits:
    max_events: int = 50_000
    max_field_bytes: int = 10 * 1024 * 1024
    max_depth: int = 200


def register(module: ModuleType, *, before: str | None = None) -> None:
    """Add an importer module; `before` puts it ahead of a named one in detection order."""
    if module.NAME in FORMATS:
        return
    index = len(IMPORTERS)
    if before is not None and before in FORMATS:
        index = IMPORTERS.index(FORMATS[before])
    IMPORTERS.insert(index, module)
    FORMATS[module.NAME] = module


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
    if not data or not data.strip():
        raise FormatError("the body is empty")
    try:
        # The common case straight from bytes: orjson checks the UTF-8 itself.
        return orjson.loads(data), False
    except orjson.JSONDecodeError as exc:
        first_error = exc
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


def check_limits(value: Any, limits: Limits, where: str = "") -> None:
    """Raise FormatError for nesting deeper than allowed or a string over the field limit.

    The walk visits every value of the document, so it is written for speed (it costs about
    as much as orjson's parse of the same bytes): `type() is` tests, and recursion, which is
    bounded by the depth limit, unless that limit is too high for Python's stack.
    """
    if limits.max_depth <= RECURSIVE_DEPTH_LIMIT:
        _walk(value, limits.max_depth, limits.max_field_bytes // 4, limits, where)
    else:
        _walk_iteratively(value, limits, where)


# Recursion is the fastest walk; past this depth limit the iterative one keeps clear of
# Python's recursion limit (orjson itself stops at 1024 levels).
RECURSIVE_DEPTH_LIMIT = 400


def _walk(item: Any, remaining: int, threshold: int, limits: Limits, where: str) -> None:
    if type(item) is dict:
        if remaining <= 0:
            raise FormatError(f"JSON nested deeper than {limits.max_depth} levels", where)
        for key, child in item.items():
            if len(key) > threshold:
                _check_field(key, limits, where, "")
            kind = type(child)
            if kind is dict or kind is list:
                _walk(child, remaining - 1, threshold, limits, where)
            elif kind is str and len(child) > threshold:
                _check_field(child, limits, where, key)
    elif type(item) is list:
        if remaining <= 0:
            raise FormatError(f"JSON nested deeper than {limits.max_depth} levels", where)
        for child in item:
            kind = type(child)
            if kind is dict or kind is list:
                _walk(child, remaining - 1, threshold, limits, where)
            elif kind is str and len(child) > threshold:
                _check_field(child, limits, where, "")
    elif type(item) is str and len(item) > threshold:
        _check_field(item, limits, where, "")


def _walk_iteratively(value: Any, limits: Limits, where: str) -> None:
    threshold = limits.max_field_bytes // 4
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict or type(item) is list:
            if depth > limits.max_depth:
                raise FormatError(f"JSON nested deeper than {limits.max_depth} levels", where)
            pairs = item.items() if type(item) is dict else (("", child) for child in item)
            for key, child in pairs:
                if len(key) > threshold:
                    _check_field(key, limits, where, "")
                kind = type(child)
                if kind is dict or kind is list:
                    stack.append((child, depth + 1))
                elif kind is str and len(child) > threshold:
                    _check_field(child, limits, where, key)
        elif type(item) is str and len(item) > threshold:
            _check_field(item, limits, where, "")


def _check_field(text: str, limits: Limits, where: str, key: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_field_bytes:
        name = f"field '{key}'" if key else "a text field"
        raise FormatError(
            f"{name} is {size:,} bytes, over the limit of {limits.max_field_bytes:,}", where
        )


def detect(value: Any) -> ModuleType | None:
    for module in IMPORTERS:
        try:
            if module.detect(value):
                return module
        except Exception:  # a detector must never decide the outcome by crashing
            continue
    return None


def _convert(
    module: ModuleType, record: Any, where: str, limits: Limits, convert: Any = None
) -> ImportItem:
    try:
        _check_size(record, limits)
        trajectory = (convert or module.convert)(record)
        if not isinstance(trajectory, CanonicalTrajectory):
            raise FormatError("no trajectory found")
        if not trajectory.events:
            raise FormatError("the trajectory has no events")
        if len(trajectory.events) > limits.max_events:
            raise FormatError(
                f"{len(trajectory.events):,} events, over the limit of {limits.max_events:,}"
            )
        return ImportItem(where=where, trajectory=finalize(trajectory))
    except FormatError as exc:
        return ImportItem(where=where, error=exc.at(where) if where else exc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        # Importers validate what they read; this is the net under them, never a 500.
        error = FormatError(f"cannot read this {module.LABEL} record ({type(exc).__name__})")
        return ImportItem(where=where, error=error.at(where) if where else error)


def _check_size(record: Any, limits: Limits) -> None:
    """Refuse a record far over the event limit before converting it: no format makes more
    than two events of one item of its longest list (an [action, observation] pair)."""
    lists = [record] if type(record) is list else []
    if type(record) is dict:
        lists = [value for value in record.values() if type(value) is list]
    longest = max((len(items) for items in lists), default=0)
    if longest > 2 * limits.max_events:
        raise FormatError(f"{longest:,} items, far over the limit of {limits.max_events:,} events")


def parse_document(
    value: Any, *, format: str | None = None, limits: Limits = Limits(), lines: bool = False
) -> ImportResult:
    """Import an already decoded JSON value (or, with lines=True, a list of (line, value))."""
    forced = None
    if format:
        forced = FORMATS.get(format)
        if forced is None:
            raise FormatError(
                f"unknown format '{format}'; known formats: {', '.join(sorted(FORMATS))}",
                "format",
            )
    if lines:
        session = _session_format(value, forced)
        if session is not None:
            return ImportResult(format=session.NAME, items=[_session(session, value, limits)])
        records = [(f"line {number}", record) for number, record in value]
    else:
        module = detect(value) if forced is None else (forced if _detects(forced, value) else None)
        if module is not None:
            check_limits(value, limits)
            return ImportResult(format=module.NAME, items=[_convert(module, value, "", limits)])
        if isinstance(value, list) and value and _splits(value, forced):
            records = [(f"[{index}]", record) for index, record in enumerate(value)]
        elif forced is not None and isinstance(value, (dict, list)):
            # The format was named: let its importer say what is wrong with this document.
            check_limits(value, limits)
            return ImportResult(format=forced.NAME, items=[_convert(forced, value, "", limits)])
        else:
            # Say that it is too deep or too big before saying that it is unrecognised.
            check_limits(value, limits)
            raise FormatError(_unknown_message(value))

    items: list[ImportItem] = []
    found = forced
    for where, record in records:
        if isinstance(record, BadLine):
            items.append(ImportItem(where=where, error=record.error))
            continue
        module = forced or detect(record)
        if module is None:
            items.append(
                ImportItem(where=where, error=FormatError(_unknown_message(record), where))
            )
            continue
        found = found or module
        try:
            check_limits(record, limits, where)
        except FormatError as exc:
            items.append(ImportItem(where=where, error=exc))
            continue
        items.append(_convert(module, record, where, limits))
    for index, item in enumerate(items):  # one item per record, in the document's order
        item.index = index
        item.line = value[index][0] if lines else None
    if found is None:
        raise FormatError(_unknown_message(value if not lines else None))
    return ImportResult(format=found.NAME, items=items)


def _session_format(lines: list[tuple[int, Any]], forced: ModuleType | None) -> ModuleType | None:
    """The format whose files are one session written as JSON Lines (Claude Code, Codex CLI):
    the whole file is one trajectory, not one per line."""
    if forced is not None:
        return forced if hasattr(forced, "convert_lines") else None
    records = [record for _, record in lines[:40] if not isinstance(record, BadLine)]
    for module in IMPORTERS:
        if hasattr(module, "detect_lines"):
            try:
                if module.detect_lines(records):
                    return module
            except Exception:  # a detector must never decide the outcome by crashing
                continue
    return None


def _session(module: ModuleType, lines: list[tuple[int, Any]], limits: Limits) -> ImportItem:
    """One session file. A session still being written often ends in a half-written line: it
    imports without that line, with a warning; a bad line anywhere else refuses the file,
    naming the line."""
    warnings = []
    if lines and isinstance(lines[-1][1], BadLine):
        number, bad = lines[-1]
        warnings.append(
            {
                "where": f"line {number}",
                "message": f"left out: {bad.error.message} (a line "
                "still being written when the file was copied)",
            }
        )
        lines = lines[:-1]
    for number, record in lines:
        if isinstance(record, BadLine):
            return ImportItem(where="", error=record.error)
        try:
            check_limits(record, limits, f"line {number}")
        except FormatError as exc:
            return ImportItem(where="", error=exc)
    item = _convert(module, lines, "", limits, module.convert_lines)
    if item.trajectory is not None:
        item.trajectory.warnings = warnings + item.trajectory.warnings
    return item


def _detects(module: ModuleType, value: Any) -> bool:
    try:
        return bool(module.detect(value))
    except Exception:
        return False


def _splits(value: list, forced: ModuleType | None) -> bool:
    """Whether a JSON array is a list of records (conversations, rows) rather than one record."""
    sample = value[:20]
    if forced is not None:
        return any(_detects(forced, record) for record in sample)
    return any(detect(record) is not None for record in sample)


def parse(data: bytes, *, format: str | None = None, limits: Limits = Limits()) -> ImportResult:
    """Import uploaded bytes: one JSON document or JSON Lines. Raises FormatError if nothing fits."""
    value, lines = decode_json(data)
    return parse_document(value, format=format, limits=limits, lines=lines)


def _unknown_message(value: Any) -> str:
    known = ", ".join(module.LABEL for module in IMPORTERS)
    if value is None:
        return f"no known trajectory format matches; known formats: {known}"
    shape = json_type(value)
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:8])
        shape = f"an object with keys {keys}" if keys else "an empty object"
    return f"no known trajectory format matches {shape}; known formats: {known}"
