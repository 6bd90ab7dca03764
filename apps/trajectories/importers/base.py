"""The canonical form every importer produces. Pure Python: no Django here.

An importer turns decoded JSON into CanonicalTrajectory objects, or raises FormatError saying
what is wrong and where. Limits (events, depth, field size) are enforced by the registry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

SOURCES = ("user", "agent", "environment")
KINDS = ("message", "action", "observation", "system")

# Column sizes of the Trajectory and Event models: importers clip to them (see `finalize`) so
# that what parse() returns can always be stored.
MAX_TITLE = 300
MAX_AGENT = 100
MAX_MODEL = 200
MAX_AGENT_VERSION = 100
MAX_SESSION_ID = 200
MAX_TYPE = 60
MAX_ID = 100


class FormatError(ValueError):
    """Input that no importer (or the chosen one) can read. `where` points at the culprit;
    `status` is the HTTP status it is answered with (413 for an archive over a limit)."""

    status = 400

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def at(self, prefix: str) -> FormatError:
        """The same error, located inside `prefix` (e.g. "line 3")."""
        where = f"{prefix}, {self.where}" if self.where else prefix
        return type(self)(self.message, where)


@dataclass
class CanonicalEvent:
    source: str  # one of SOURCES
    kind: str  # one of KINDS
    type: str  # run, edit, browse, message, finish, ... (the format's own action/observation name)
    text: str = ""  # human-readable text for display and search
    data: dict[str, Any] = field(default_factory=dict)  # the original fields, as sent
    original_id: str = ""
    timestamp: datetime | None = None  # timezone-aware (naive input is taken as UTC)
    cause: str = ""  # original id of the action an observation answers


@dataclass
class CanonicalTrajectory:
    source_format: str
    events: list[CanonicalEvent]
    title: str = ""
    agent: str = ""
    model: str = ""
    agent_version: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str = ""
    # From share envelopes (OpenHands share payload); empty elsewhere.
    polarity: str = ""  # "positive" | "negative" | ""
    feedback_text: str = ""
    email: str = ""
    permissions: str = ""  # "public" | "private" | ""
    # What was left out of an otherwise valid trajectory, said to the sharer:
    # [{"where": "event 3", "message": "..."}].
    warnings: list[dict[str, str]] = field(default_factory=list)


@dataclass
class ImportItem:
    """One trajectory of a file, or the error that kept it out. `where`: "line 3", "[5]", "".

    Where its record sits in the document, for whoever cuts the record out again (the raw copy
    ingest stores): `index`, its place in the list of records (an array's element, or the n-th
    JSON line); `line`, its line number in JSON Lines. Both None: the whole document.
    """

    where: str
    trajectory: CanonicalTrajectory | None = None
    error: FormatError | None = None
    index: int | None = None
    line: int | None = None


@dataclass
class ImportResult:
    format: str
    items: list[ImportItem]

    @property
    def trajectories(self) -> list[CanonicalTrajectory]:
        return [item.trajectory for item in self.items if item.trajectory is not None]

    @property
    def errors(self) -> list[ImportItem]:
        return [item for item in self.items if item.error is not None]


class Unpacked(list):
    """The records one document holds, each importable alone (an Inspect log's samples), with
    `labels`, where each came from ("samples[1]", "samples/2_epoch_1.json"), for its errors."""

    def __init__(self, records: list[Any], labels: list[str]):
        super().__init__(records)
        self.labels = labels


@dataclass
class SessionFolder:
    """A session that is several JSON Lines files (a Claude Code session folder, from a zip):
    `files` are (name, [(line number, value)]), the session's own file first."""

    format: str
    files: list[tuple[str, list[tuple[int, Any]]]]


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 strings or epoch seconds; naive values are UTC; anything else is None."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, tz=UTC)
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return parsed
    except (ValueError, OverflowError, OSError):
        return None
    return None


def as_text(value: Any, *, image: str = "[image]") -> str:
    """Text of a content field that may be a string, a list of parts, or something else.

    The one reading of a content field, for the importers, exporters and cards alike. A part
    gives its `text`, or its `content` (as a tool-result part holds it); an image part gives
    `image` (the trajectory page passes "" since it shows the image itself); any other value is
    compact JSON (`true`, `{"a":1}`), never Python's repr.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("content"), str):
                    parts.append(part["content"])
                elif image and part.get("type") in ("image_url", "image"):
                    parts.append(image)
        return "\n".join(parts)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return json_text(value)


def json_text(value: Any) -> str:
    """Any JSON value as text: strings as they are, None as "", the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def mostly(items: list, test: Callable[[Any], bool], *, sample: int = 20) -> bool:
    """Whether at least half of the first `sample` items pass `test` (never for no items): how
    an importer recognises its list of records without reading a long file to its end."""
    head = items[:sample]
    return bool(head) and sum(1 for item in head if test(item)) * 2 >= len(head)


def require_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"expected a JSON object, got {json_type(value)}", where)
    return value


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


# Where an image sits in a multimodal message (LLaVA, LLaMA-Factory, ShareGPT-4V data): no words
# for a title.
_IMAGE_TOKENS = re.compile(r"<(?:image|video|audio)>", re.IGNORECASE)


def title_from(text: str, limit: int = 120) -> str:
    """One line of at most `limit` characters, for a title taken from a message (without the
    `<image>` tokens of multimodal data)."""
    line = " ".join(_IMAGE_TOKENS.sub(" ", text[: limit * 8]).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def text_of(value: Any) -> str:
    """A string field, or "" for anything that is not a string (None, numbers, objects)."""
    return value if isinstance(value, str) else ""


def join_text(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def small_value(value: Any, *, max_chars: int = 2000, depth: int = 2) -> Any:
    """`value` without its bulky parts, for trajectory metadata.

    Scalars stay; strings longer than `max_chars` and anything nested deeper than `depth` go
    (returned as None, and dropped from objects). Lists keep their first 20 small items.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= max_chars else None
    if depth <= 0:
        return None
    if isinstance(value, dict):
        kept = {}
        for key, child in value.items():
            small = small_value(child, max_chars=max_chars, depth=depth - 1)
            if small is not None or child is None:
                kept[str(key)] = small
        return kept
    if isinstance(value, list):
        items = [small_value(child, max_chars=max_chars, depth=depth - 1) for child in value[:20]]
        return [item for item in items if item is not None]
    return None


def number(value: Any) -> float | int | None:
    """An int or float (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


IMAGE_TOKEN = "<image>"


def attach_image_files(events: list[CanonicalEvent], images: Any) -> None:
    """LLaMA-Factory files name their images in a top-level `images` list, one per `<image>`
    token in the messages, in order: give each event the names of its own (`image_files`), so
    the page can say which picture stood there. A copy of the data, so the raw copy of the
    upload stays as sent."""
    if not isinstance(images, list):
        return
    names = [image if isinstance(image, str) else "" for image in images]
    used = 0
    for event in events:
        count = event.text.count(IMAGE_TOKEN)
        if not count or used >= len(names) or not isinstance(event.data, dict):
            continue
        event.data = {**event.data, "image_files": names[used : used + count]}
        used += count


def link_causes(events: list[CanonicalEvent], prefix: str = "") -> None:
    """Give id-less events ids and answer-less observations the action they follow.

    Formats without ids (ShareGPT, SWE-agent, legacy OpenHands rows) still pair an action with
    the observation right after it; viewers and exporters need that pairing as `cause`.
    """
    ids = {event.original_id for event in events if event.original_id}
    pending: list[str] = []
    for position, event in enumerate(events):
        if not event.original_id:
            candidate = f"{prefix}{position}"
            event.original_id = candidate if candidate not in ids else f"{prefix}#{position}"
            ids.add(event.original_id)
        if event.kind == "action":
            pending.append(event.original_id)
        elif event.kind == "observation":
            if not event.cause and pending:
                event.cause = pending.pop(0)
            elif event.cause in pending:
                pending.remove(event.cause)
        else:
            pending.clear()


def finalize(trajectory: CanonicalTrajectory) -> CanonicalTrajectory:
    """Check the importer's output and clip fields to what the models store."""
    finalize_header(trajectory)
    for event in trajectory.events:
        finalize_event(event)
    return trajectory


def finalize_header(trajectory: CanonicalTrajectory) -> None:
    """finalize() of the trajectory's own fields (a streamed trajectory's events are finalized
    one at a time, as they come)."""
    trajectory.title = clip(" ".join(trajectory.title.split()), MAX_TITLE)
    trajectory.agent = clip(trajectory.agent.strip(), MAX_AGENT)
    trajectory.model = clip(trajectory.model.strip(), MAX_MODEL)
    trajectory.agent_version = clip(trajectory.agent_version.strip(), MAX_AGENT_VERSION)
    trajectory.session_id = clip(trajectory.session_id, MAX_SESSION_ID)
    if trajectory.polarity not in ("positive", "negative"):
        trajectory.polarity = ""
    if trajectory.permissions not in ("public", "private"):
        trajectory.permissions = ""
    # Totals land in bigint / float columns: drop what they cannot hold.
    tokens = trajectory.metadata.get("total_tokens")
    if tokens is not None and not (isinstance(number(tokens), int) and 0 <= tokens < 2**63):
        del trajectory.metadata["total_tokens"]
    cost = trajectory.metadata.get("total_cost")
    if cost is not None and not (number(cost) is not None and math.isfinite(cost)):
        del trajectory.metadata["total_cost"]


def finalize_event(event: CanonicalEvent) -> None:
    if event.source not in SOURCES or event.kind not in KINDS:
        # An importer bug, not bad input; still never a 500.
        raise FormatError(f"cannot place an event of source '{event.source}', kind '{event.kind}'")
    event.type = clip(event.type or event.kind, MAX_TYPE)
    event.original_id = clip(event.original_id, MAX_ID)
    event.cause = clip(event.cause, MAX_ID)
