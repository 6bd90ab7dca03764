"""Format importers: bytes in, canonical trajectories out. Pure Python, no Django.

`parse()` decodes the bytes, checks the limits, detects the format (or takes the one asked for)
and converts every record. Each format is one module with NAME, LABEL, detect() and convert().

Optional hooks of a format module: `detect_lines` / `convert_lines` (a JSON Lines file that is
one session); `unpack(doc)` (a document that holds many records, such as an Inspect log's
samples: the records, each importable alone). ARCHIVE_READERS read the zip archives some
formats come as (`from_archive(entries, decode)`: the document it holds, or None).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from apps.trajectories.importers import (
    adp,
    atif,
    claude_code,
    claude_code_folder,
    codex_cli,
    gemini_cli,
    inspect_log,
    openai_messages,
    openhands_eval,
    openhands_share,
    openhands_v0,
    openhands_v1,
    sharegpt,
    sweagent,
)
from apps.trajectories.importers.archive import ArchiveLimits, is_zip, read_zip
from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    ImportItem,
    ImportResult,
    SessionFolder,
    Unpacked,
    finalize,
    json_type,
)
from apps.trajectories.importers.jsonio import BadLine, JsonLines, decode_json, split_lines

__all__ = [
    "CanonicalEvent",
    "CanonicalTrajectory",
    "FormatError",
    "ImportItem",
    "ImportResult",
    "Limits",
    "FORMATS",
    "BadLine",
    "decode_json",
    "decode_upload",
    "split_lines",
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
    inspect_log,
    adp,
    openhands_v1,
    sweagent,
    openhands_eval,
    openhands_v0,
    sharegpt,
    openai_messages,
]
FORMATS: dict[str, ModuleType] = {module.NAME: module for module in IMPORTERS}
# Formats whose files come as zip archives (`from_archive`), and, by format, the readers of the
# session folders they give (`convert_folder`).
ARCHIVE_READERS: list[ModuleType] = [inspect_log, claude_code_folder, atif, sweagent]
FOLDER_READERS: dict[str, ModuleType] = {claude_code.NAME: claude_code_folder}


@dataclass(frozen=True)
class Limits:
    max_events: int = 50_000
    max_field_bytes: int = 10 * 1024 * 1024
    max_depth: int = 200
    archive: ArchiveLimits = ArchiveLimits()


def register(module: ModuleType, *, before: str | None = None) -> None:
    """Add an importer module; `before` puts it ahead of a named one in detection order."""
    if module.NAME in FORMATS:
        return
    index = len(IMPORTERS)
    if before is not None and before in FORMATS:
        index = IMPORTERS.index(FORMATS[before])
    IMPORTERS.insert(index, module)
    FORMATS[module.NAME] = module


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
                check_field(key, limits, where, "")
            kind = type(child)
            if kind is dict or kind is list:
                _walk(child, remaining - 1, threshold, limits, where)
            elif kind is str and len(child) > threshold:
                check_field(child, limits, where, key)
    elif type(item) is list:
        if remaining <= 0:
            raise FormatError(f"JSON nested deeper than {limits.max_depth} levels", where)
        for child in item:
            kind = type(child)
            if kind is dict or kind is list:
                _walk(child, remaining - 1, threshold, limits, where)
            elif kind is str and len(child) > threshold:
                check_field(child, limits, where, "")
    elif type(item) is str and len(item) > threshold:
        check_field(item, limits, where, "")


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
                    check_field(key, limits, where, "")
                kind = type(child)
                if kind is dict or kind is list:
                    stack.append((child, depth + 1))
                elif kind is str and len(child) > threshold:
                    check_field(child, limits, where, key)
        elif type(item) is str and len(item) > threshold:
            check_field(item, limits, where, "")


def check_field(text: str, limits: Limits, where: str, key: str) -> None:
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
    if isinstance(value, SessionFolder):
        if forced is not None and forced.NAME != value.format:
            raise FormatError(
                f"a {FORMATS[value.format].LABEL} folder is not a {forced.LABEL}", "format"
            )
        named = FORMATS[value.format]
        item = _folder(named, FOLDER_READERS[value.format], value, limits)
        return ImportResult(format=named.NAME, items=[item])
    if not lines and not isinstance(value, Unpacked):
        value = unpack(value, forced)
    labels = value.labels if isinstance(value, Unpacked) else None
    if lines:
        session = _session_format(value, forced)
        if session is not None:
            return ImportResult(format=session.NAME, items=[_session(session, value, limits)])
        # One line parsed at a time (JsonLines), as the loop below reads it.
        records: Iterable[tuple[str, Any]] = (
            (f"line {number}", record) for number, record in value
        )
    else:
        module = detect(value) if forced is None else (forced if _detects(forced, value) else None)
        if module is not None:
            check_limits(value, limits)
            return ImportResult(format=module.NAME, items=[_convert(module, value, "", limits)])
        if isinstance(value, list) and value and (labels or _splits(value, forced)):
            records = [
                (labels[index] if labels else f"[{index}]", record)
                for index, record in enumerate(value)
            ]
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
        item.line = _line_number(value, index) if lines else None
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


def _session(module: ModuleType, lines: Sequence[tuple[int, Any]], limits: Limits) -> ImportItem:
    """One session file. A session still being written often ends in a half-written line: it
    imports without that line, with a warning; a bad line anywhere else refuses the file,
    naming the line.

    The records are checked as the importer reads them, one at a time, in one pass: a line of
    a JsonLines body is parsed only then, and let go once the importer has taken its events
    from it. The first line in the file that is bad (not JSON, over a limit, or a record the
    importer cannot read) is the one named."""
    if len(lines) > 2 * limits.max_events:
        error = FormatError(
            f"{len(lines):,} items, far over the limit of {limits.max_events:,} events"
        )
        return ImportItem(where="", error=error)
    warnings: list[dict[str, str]] = []
    last = len(lines) - 1

    def checked() -> Iterator[tuple[int, Any]]:
        for index, (number, record) in enumerate(lines):
            if isinstance(record, BadLine):
                if index == last:
                    warnings.append(
                        {
                            "where": f"line {number}",
                            "message": f"left out: {record.error.message} (a line "
                            "still being written when the file was copied)",
                        }
                    )
                    return
                raise record.error
            check_limits(record, limits, f"line {number}")
            yield number, record

    item = _convert(module, checked(), "", limits, module.convert_lines)
    if item.trajectory is not None:
        item.trajectory.warnings = warnings + item.trajectory.warnings
    return item


def _line_number(lines: Sequence[tuple[int, Any]], index: int) -> int:
    return lines.number(index) if isinstance(lines, JsonLines) else lines[index][0]


def _folder(
    module: ModuleType, reader: ModuleType, folder: SessionFolder, limits: Limits
) -> ImportItem:
    """A session of several files (_session's rules, per file: a half-written last line is
    left out with a warning, a bad line elsewhere refuses the session, naming file and line)."""
    warnings = []
    files = []
    for name, file_lines in folder.files:
        # A folder's files are read more than once (subagents are found by their records):
        # each is parsed once here and held, as a zip's entries are.
        lines = list(file_lines)
        if lines and isinstance(lines[-1][1], BadLine):
            number, bad = lines[-1]
            warnings.append(
                {
                    "where": f"{name} line {number}",
                    "message": f"left out: {bad.error.message} (a line "
                    "still being written when the file was copied)",
                }
            )
            lines = lines[:-1]
        for number, record in lines:
            if isinstance(record, BadLine):
                return ImportItem(
                    where="",
                    error=FormatError(record.error.message, name + " " + record.error.where),
                )
            try:
                check_limits(record, limits, f"{name} line {number}")
            except FormatError as exc:
                return ImportItem(where="", error=exc)
        files.append((name, lines))
    item = _convert(module, SessionFolder(folder.format, files), "", limits, reader.convert_folder)
    if item.trajectory is not None:
        item.trajectory.warnings = warnings + item.trajectory.warnings
    return item


def unpack(value: Any, forced: ModuleType | None = None) -> Any:
    """The records of a document that holds many (an Inspect log's samples), else `value`."""
    for module in [forced] if forced is not None else IMPORTERS:
        if hasattr(module, "unpack"):
            try:
                records = module.unpack(value)
            except FormatError:
                raise
            except Exception:  # a hook must never decide the outcome by crashing
                continue
            if records is not None:
                return records
    return value


def decode_upload(data: bytes, limits: Limits = Limits()) -> tuple[bytes, Any, bool]:
    """(the bytes the document was read from, the decoded document, whether JSON Lines).

    A zip archive is read within the archive limits and handed to the formats whose files come
    as archives (an Inspect `.eval`, a Claude Code session folder); a zip of one trajectory
    file is that file (its bytes are returned, for the raw copy). Anything else is JSON or
    JSON Lines (decode_json), with a document of many records unpacked into them.
    """
    if not is_zip(data):
        value, lines = decode_json(data)
        return data, (value if lines else unpack(value)), lines
    entries = read_zip(data, limits.archive)
    for reader in ARCHIVE_READERS:
        document = reader.from_archive(entries, decode_json)
        if document is not None:
            return data, document, False
    if len(entries) == 1:
        (entry,) = entries
        try:
            value, lines = decode_json(entry.data)
        except FormatError as exc:
            raise exc.at(f"entry {entry.name!r}") from None
        return entry.data, (value if lines else unpack(value)), lines
    names = ", ".join(repr(entry.name) for entry in entries[:5])
    raise FormatError(
        f"a zip archive of {len(entries)} files ({names}{', ...' if len(entries) > 5 else ''}) "
        "that is neither an Inspect .eval log, a Claude Code session folder, a Harbor trial "
        "folder nor a SWE-agent .traj with its evaluation report; zip one trajectory file, or "
        "share the files one by one"
    )


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
    """Import uploaded bytes: one JSON document, JSON Lines or a zip archive (decode_upload).
    Raises FormatError if nothing fits."""
    _, value, lines = decode_upload(data, limits)
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
