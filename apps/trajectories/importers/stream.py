"""An OpenHands share payload read as a stream (issue 24: ingest memory <= 2x the payload).
Pure Python, no Django.

orjson parses one document whole: for a 20 MB share, the body, orjson's own parse tree and the
Python objects it makes lived at once (3.3x the payload). Here the body is read twice from its
file with ijson (C backend), never held: `scan` walks it once for its shape (one JSON object,
no deeper than the depth limit, the share envelope's fields, how many items its trajectory
has), building only the envelope's small values; `convert` then hands the trajectory's items on
one at a time, so an item (its screenshots as base64 text) can be let go as soon as its event
is stored.

Anything else (another format, JSON Lines, a broken or unusual document) makes `scan` answer
None: the caller reads the body whole as before, and that path says what is wrong with it, in
the same words as always.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from apps.trajectories.importers import FORMATS, Limits, check_field, check_limits, openhands_share
from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    finalize_event,
    finalize_header,
)

_BOM = b"\xef\xbb\xbf"
TRAJECTORY = "trajectory"
# The keys a payload read as a stream may have. Another key could make an earlier hook or
# detector read the document otherwise (an Inspect log's samples): such a body is read whole.
# (A format named by the caller is the share payload's: any key goes.)
SHARE_KEYS = openhands_share.ENVELOPE_KEYS | {TRAJECTORY}
_OPEN = ("start_map", "start_array")
_CLOSE = ("end_map", "end_array")


@dataclass
class Scan:
    """A share payload's shape: its top-level keys in order, every value but the trajectory's,
    and how many items the trajectory holds (a non-empty array)."""

    file: IO[bytes]
    start: int
    keys: list[str]
    envelope: dict[str, Any]
    count: int


def scan(file: IO[bytes], *, format: str | None, limits: Limits) -> Scan | None:
    """The shape of the share payload in `file` (read from its current position, which is put
    back), or None when it is not one to read as a stream. Raises FormatError for nesting
    deeper than the limit, as the whole-document check says it."""
    module = FORMATS.get(format) if format else None
    if format and module is not openhands_share:
        return None
    named = module is not None
    origin = file.tell()
    start = origin + (len(_BOM) if file.read(len(_BOM)) == _BOM else 0)
    file.seek(start)
    try:
        found = _walk(file, limits, named)
    except FormatError:
        raise
    except Exception:  # not JSON, numbers ijson cannot hold, ...: the whole-body path says
        found = None
    file.seek(origin)
    if found is None:
        return None
    keys, envelope, count = found
    if TRAJECTORY not in keys or count == 0:
        return None  # no trajectory, null, or empty: the importer's own words
    if not named and not (openhands_share.ENVELOPE_KEYS & set(keys)):
        return None  # {"trajectory": [...]} alone is an OpenHands event export
    return Scan(file=file, start=start, keys=keys, envelope=envelope, count=count)


def _walk(
    file: IO[bytes], limits: Limits, named: bool
) -> tuple[list[str], dict[str, Any], int] | None:
    """One pass of ijson's events (the only loop in Python here, so kept plain): the depth,
    the top-level keys, the envelope's values, the trajectory's items counted, and their
    fields' sizes (what check_limits says of a whole document, said here of the event)."""
    max_depth = limits.max_depth
    threshold = limits.max_field_bytes // 4  # a str of fewer characters has fewer bytes
    field = ""
    depth = 0
    key = ""
    keys: list[str] = []
    envelope: dict[str, Any] = {}
    builder: ObjectBuilder | None = None
    count = 0
    for event, value in ijson.basic_parse(file, use_float=True):
        if event in _OPEN:
            depth += 1
            if depth > max_depth:
                raise FormatError(f"JSON nested deeper than {max_depth} levels")
            if depth == 1:
                if event != "start_map":
                    return None
                continue
            if key == TRAJECTORY:
                if depth == 2 and event != "start_array":
                    return None
                if depth == 3:
                    count += 1
                continue
        elif event in _CLOSE:
            depth -= 1
            if depth == 0 or key == TRAJECTORY:
                continue
        elif depth == 1:
            if event == "map_key":
                # A repeated key (the last one wins in a whole parse), one ijson's prefixes
                # would confuse with the items ("trajectory.item"), or a key of another format.
                if value in keys or value.startswith(TRAJECTORY + "."):
                    return None
                if not named and value not in SHARE_KEYS:
                    return None
                key = value
                keys.append(value)
            else:
                envelope[key] = value  # a scalar; a null trajectory ends up here too
            continue
        elif key == TRAJECTORY:
            if depth == 2:
                count += 1
            if event == "map_key":
                field = value
                if len(value) > threshold:
                    check_field(value, limits, f"event {count - 1}", "")
            elif event == "string" and len(value) > threshold:
                check_field(value, limits, f"event {count - 1}", field)
            continue
        if builder is None:
            builder = ObjectBuilder()
        builder.event(event, value)
        if depth == 1:
            envelope[key] = builder.value
            builder = None
    if TRAJECTORY in envelope:
        return None
    return keys, envelope, count


def convert(
    found: Scan, *, limits: Limits, on_item: Callable[[Any], None] | None = None
) -> tuple[CanonicalTrajectory, Iterator[CanonicalEvent]]:
    """The share payload's trajectory, with its envelope's fields, and its events, made one at
    a time as they are read (`on_item` sees each item first, as parsed: the raw copy).

    What the registry checks of a whole document is checked by the scan (depth, field sizes)
    or here as the events come: the number of events, each event's fields finalized;
    the trajectory's own fields once the events are exhausted. A problem raises FormatError
    from the events (naming the event): nothing of it may be stored."""
    check_limits(found.envelope, limits)  # at the root's depth, as its values are

    def items() -> Iterator[Any]:
        found.file.seek(found.start)
        parsed = ijson.items(found.file, f"{TRAJECTORY}.item", use_float=True)
        for item in parsed:  # depth and field sizes were checked by the scan
            if on_item is not None:
                on_item(item)
            yield item

    trajectory, produced = openhands_share.convert_stream(found.envelope, items())

    def events() -> Iterator[CanonicalEvent]:
        if found.count > 2 * limits.max_events:
            raise FormatError(
                f"{found.count:,} items, far over the limit of {limits.max_events:,} events"
            )
        made = 0
        try:
            for event in produced:
                made += 1
                if made > limits.max_events:
                    continue  # counted to the end, to say how many
                finalize_event(event)
                yield event
        except FormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            # The registry's net under the importers (never a 500), as for a whole document.
            raise FormatError(
                f"cannot read this {openhands_share.LABEL} record ({type(exc).__name__})"
            ) from None
        if made > limits.max_events:
            raise FormatError(f"{made:,} events, over the limit of {limits.max_events:,}")
        if not made:
            raise FormatError("the trajectory has no events")
        finalize_header(trajectory)

    return trajectory, events()
