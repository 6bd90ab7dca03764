"""The canonical form every importer produces. Pure Python: no Django here.

An importer turns decoded JSON into CanonicalTrajectory objects, or raises FormatError saying
what is wrong and where. Limits (events, depth, field size) are enforced by the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

SOURCES = ("user", "agent", "environment")
KINDS = ("message", "action", "observation", "system")


class FormatError(ValueError):
    """Input that no importer (or the chosen one) can read. `where` points at the culprit."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def at(self, prefix: str) -> FormatError:
        """The same error, located inside `prefix` (e.g. "line 3")."""
        where = f"{prefix}, {self.where}" if self.where else prefix
        return FormatError(self.message, where)


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


@dataclass
class ImportItem:
    """One trajectory of a file, or the error that kept it out. `where`: "line 3", "[5]", ""."""

    where: str
    trajectory: CanonicalTrajectory | None = None
    error: FormatError | None = None


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


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 strings or epoch seconds; naive values are UTC; anything else is None."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, tz=timezone.utc)
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=timezone.utc)
            return parsed
    except (ValueError, OverflowError, OSError):
        return None
    return None


def as_text(value: Any) -> str:
    """Text of a content field that may be a string, a list of parts, or something else."""
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
                elif part.get("type") in ("image_url", "image"):
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return str(value)


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
