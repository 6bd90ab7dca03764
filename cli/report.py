"""How `trajhub` shows what it found before a share is stored: the sessions on this machine,
and the site's preview of an upload (what the scan would redact, which files' contents the
session includes). Text only; the commands in trajhub.py print it."""

from __future__ import annotations

import time
from typing import Any

from cli.sessions import Session


def size_text(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"


def when_text(stamp: float, now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def sessions_table(found: list[Session]) -> str:
    """One line per session, newest first: short id, agent, time, size, project, first prompt."""
    lines = [f"{'ID':<10}{'AGENT':<13}{'WHEN':<18}{'SIZE':>9}  PROJECT / FIRST PROMPT"]
    for session in found:
        lines.append(
            f"{session.id[:8]:<10}{session.agent:<13}{when_text(session.time):<18}"
            f"{size_text(session.size):>9}  {session.project or '(unknown project)'}"
        )
        if session.first_prompt:
            lines.append(f"{'':<52}{session.first_prompt}")
    return "\n".join(lines) + "\n"


def preview_text(answer: dict[str, Any], name: str) -> str:
    """The preview of one upload: format and counts, each value the scan would redact and
    the files whose contents the session holds, sensitive ones marked."""
    out = [
        f"{name}: {answer.get('format_label') or answer.get('format')}, "
        f"{answer.get('trajectories')} trajectory(ies), {answer.get('events')} events"
    ]
    for item in answer.get("items") or []:
        redactions = item.get("redactions") or {}
        values = redactions.get("values") or []
        if values:
            out.append(f"The scan would redact {redactions.get('total', len(values))} value(s):")
            for value in values:
                where = ", ".join(_place(place) for place in value.get("places", [])[:3])
                more = value["count"] - min(3, len(value.get("places", [])))
                out.append(
                    f"  {value['placeholder']:<24} {value['kind']} {value['masked']}, "
                    f"{value['count']}× ({where}{f', +{more}' if more > 0 else ''})"
                )
            if redactions.get("decision") == "held":
                out.append(
                    "  Some of these are held for a moderator before anyone else sees the share."
                )
        else:
            out.append("The scan found nothing to redact.")
        files = item.get("files") or []
        if files:
            flagged = [entry for entry in files if entry.get("sensitive")]
            out.append(f"The session includes the contents of {len(files)} file(s):")
            for entry in files[:15]:
                mark = "  ! " if entry.get("sensitive") else "    "
                out.append(f"{mark}{entry['path']}")
            if len(files) > 15:
                out.append(f"    … and {len(files) - 15} more")
            if flagged:
                out.append(
                    "  ! usually holds secrets: leave it out with --exclude PATH "
                    "(its contents are replaced by a note)"
                )
    for error in answer.get("errors") or []:
        out.append(f"  error at {error.get('where') or 'body'}: {error.get('message')}")
    return "\n".join(out) + "\n"


def _place(place: dict[str, Any]) -> str:
    event = place.get("event")
    return place.get("path", "") if event is None else f"event {event}"
