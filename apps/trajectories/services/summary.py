"""The stored summary of a trajectory's events (models.EventSummary): counts by type and the
timeline strip, made in one pass over rows a caller already holds (ingest's prepared events,
re-import's) or over a few small columns read once (a missing or stale summary), and written in
one statement, so that a page view never counts or reads the events again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from apps.trajectories.models import EventSummary
from apps.trajectories.selectors.compare import (
    COMMAND_PATHS,
    COMPARE_MAX_STEPS,
    SUMMARY_CHARS,
    steps_from_rows,
    stored_rows,
)

# One letter per step for the timeline strip (viewer.js draws it): the card family its kind
# and type usually get.
TIMELINE_FAMILIES = {
    "run": "c",
    "run_ipython": "c",
    "edit": "e",
    "write": "e",
    "read": "f",
    "browse": "b",
    "browse_interactive": "b",
    "think": "t",
    "finish": "d",
    "error": "x",
}
# Where the formats keep an exit code and a screenshot, first found wins (as the SQL's Coalesce).
EXIT_CODE_PATHS = (
    ("extras", "metadata", "exit_code"),
    ("observation", "exit_code"),
    ("observation", "metadata", "exit_code"),
)
SCREENSHOT_PATHS = (("extras", "screenshot"), ("observation", "screenshot_data"))
# compare's command paths as keys ("data__args__command" -> ("args", "command")).
COMMAND_KEYS = tuple(tuple(path.split("__")[1:]) for path in COMMAND_PATHS)
SUMMARY_FIELDS = (
    "chain_fingerprint",
    "total",
    "types",
    "families",
    "errors",
    "screenshots",
    "compare_steps",
)


def family(kind: str, type_: str, source: str) -> str:
    if type_ in ("error", "AgentErrorEvent"):
        return "x"
    if kind == "message":
        return "u" if source == "user" else "a"
    if kind == "system":
        return "s"
    if kind == "observation":
        return "b" if type_.startswith("browse") else "o"
    return TIMELINE_FAMILIES.get(type_, "k")


def _as_text(value: Any) -> str | None:
    """A JSON value as `->>` reads it: strings as they are, anything else as its JSON."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _first(data: Any, paths: tuple[tuple[str, ...], ...]) -> str | None:
    for path in paths:
        value = data
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        text = _as_text(value)
        if text is not None:
            return text
    return None


def data_marks(data: Any) -> tuple[str | None, str | None]:
    """(exit code, screenshot) of an event's data, as the timeline reads them."""
    return _first(data, EXIT_CODE_PATHS), _first(data, SCREENSHOT_PATHS)


@dataclass
class Summary:
    """Built step by step with `add`, in position order."""

    chain_fingerprint: str = ""
    counts: Counter[str] = field(default_factory=Counter)
    letters: list[str] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    screenshots: list[int] = field(default_factory=list)
    compare_steps: list[list[str]] | None = None

    def add(
        self,
        position: int,
        kind: str,
        type_: str,
        source: str,
        exit_code: str | None,
        shot: str | None,
    ) -> None:
        self.counts[type_] += 1
        letter = family(kind, type_, source)
        self.letters.append(letter)
        if letter == "x" or (exit_code not in (None, "", "0", "-1") and kind == "observation"):
            self.errors.append(position + 1)
        if shot:
            self.screenshots.append(position + 1)

    def row(self, trajectory_id: int) -> EventSummary:
        return EventSummary(
            trajectory_id=trajectory_id,
            chain_fingerprint=self.chain_fingerprint,
            total=len(self.letters),
            types=sorted(
                ([type_, n] for type_, n in self.counts.items()), key=lambda row: (-row[1], row[0])
            ),
            families="".join(self.letters),
            errors=self.errors,
            screenshots=self.screenshots,
            compare_steps=self.compare_steps,
        )


class SummaryMaker:
    """A summary made event by event, as ingest prepares them (the events need not be held)."""

    def __init__(self) -> None:
        self.summary = Summary()
        self.heads: list[tuple[int, str, str, str, str, str | None]] = []

    def add(self, event: Any) -> None:
        """An event row with position, kind, type, source, text and data, in position order."""
        data = event.data
        self.summary.add(event.position, event.kind, event.type, event.source, *data_marks(data))
        if len(self.heads) < COMPARE_MAX_STEPS:
            command = _first(data, COMMAND_KEYS)
            self.heads.append(
                (
                    event.position,
                    event.kind,
                    event.type,
                    event.source,
                    (event.text or "")[:SUMMARY_CHARS],
                    None if command is None else command[:SUMMARY_CHARS],
                )
            )

    def done(self, chain_fingerprint: str) -> Summary:
        # What /compare/ aligns, made here from the events in hand (selectors/compare.py).
        self.summary.chain_fingerprint = chain_fingerprint
        self.summary.compare_steps = stored_rows(steps_from_rows(self.heads))
        return self.summary


def event_summary_save(*, trajectory_id: int, summary: Summary) -> EventSummary:
    """Write the summary (one upsert): the caller holds the events it was made from."""
    row = summary.row(trajectory_id)
    EventSummary.objects.bulk_create(
        [row],
        update_conflicts=True,
        unique_fields=["trajectory"],
        update_fields=list(SUMMARY_FIELDS),
    )
    return row
