"""What stands between a correction or comment and its readers: moderation's scanner, the hold
rules, and the redacted text everyone but its author and moderators reads.

The shown text is the author's text with each scan finding replaced by a placeholder
(`<EMAIL>`, `<GITHUB_TOKEN>`), then passed through the trajectory's redaction map, so that a
value redacted in the trajectory is redacted in the feedback too, now and after every later
redaction: `shown_map` records the digest of the map it was made with, and a reader whose
trajectory's map has another digest gets it made again (`shown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils import timezone

from apps.moderation.scanning import scanner as engine
from apps.moderation.services.scan import scanner_from_settings
from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.redactions import full_redactions, index_usable, map_digest

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.feedback.models import StepNote
    from apps.trajectories.models import Trajectory


@lru_cache(maxsize=1)
def _scanner() -> engine.Scanner:
    return scanner_from_settings()


def scan_findings(text: str) -> list[dict[str, Any]]:
    """The scan's findings in `text` as stored on a note: kind and span."""
    return [
        {"kind": found.kind, "start": found.start, "end": found.end}
        for found in _scanner().scan(text)
    ]


def without_findings(text: str, findings: list[dict[str, Any]]) -> str:
    """`text` with each finding's span replaced by its kind's placeholder."""
    parts: list[str] = []
    cursor = 0
    for found in sorted(findings, key=lambda item: item["start"]):
        start, end = int(found["start"]), int(found["end"])
        if start < cursor:
            continue
        parts.append(text[cursor:start])
        parts.append(f"<{str(found['kind']).upper()}>")
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def trajectory_map(trajectory: Trajectory) -> tuple[dict[str, str], str]:
    """The trajectory's whole redaction map (string entries) and its digest."""
    full = full_redactions(trajectory)
    return (
        {key: value for key, value in full.items() if isinstance(key, str) and key},
        map_digest(full),
    )


def current_map_digest(trajectory: Trajectory) -> str:
    """The digest of the trajectory's map, from its redaction index where current (no need to
    read a map of 300,000 entries to know it is unchanged)."""
    if index_usable(trajectory):
        index = trajectory.redaction_index
        if isinstance(index, dict) and isinstance(index.get("map"), str):
            return index["map"]
    return map_digest(full_redactions(trajectory))


@dataclass(frozen=True)
class Shown:
    text: str
    original: str
    map: str


def make_shown(
    *, text: str, original: str, findings: list[dict[str, Any]], trajectory: Trajectory
) -> Shown:
    """The redacted text (and original) of a note, with the digest of the map used."""
    redactions, digest = trajectory_map(trajectory)
    redact = redactor(redactions)
    return Shown(
        text=redact(without_findings(text, findings)),
        original=redact(original),
        map=digest,
    )


def shown(note: StepNote, trajectory: Trajectory, *, digest: str | None = None) -> Shown:
    """What anyone but the note's author and moderators reads of it: the stored redacted text
    while the trajectory's map is the one it was made with, else made again with today's."""
    digest = digest if digest is not None else current_map_digest(trajectory)
    if note.shown_map and note.shown_map == digest:
        return Shown(text=note.shown_text, original=note.shown_original, map=digest)
    return make_shown(
        text=note.text, original=note.original, findings=note.findings, trajectory=trajectory
    )


def hold_reason(*, findings: list[dict[str, Any]], user: User | None) -> str:
    """Why a note waits for a moderator ("" : it is shown at once)."""
    if findings:
        kinds = sorted({str(found["kind"]) for found in findings})
        return "the scan found " + ", ".join(kinds)
    days = settings.TRAJHUB_FEEDBACK_HOLD_NEW_ACCOUNTS_DAYS
    if days and user is not None and user.date_joined > timezone.now() - timedelta(days=days):
        return f"written by an account younger than {days} day{'s' if days != 1 else ''}"
    return ""
