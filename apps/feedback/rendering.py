"""The HTML of corrections and comments next to their steps, built in Python like the viewer's
cards (trajectories/rendering/layout.py): a chunk of 100 steps with feedback on every one is
hundreds of notes, and a template include per note cost several times more (bench_page.py).
Every text interpolated is escaped here; the template feedback/_notes.html renders the same
markup for the step's own page."""

from __future__ import annotations

import html
from collections.abc import Iterable

from apps.feedback.selectors import NoteView, StepFeedback

# Inline next to a step, at most this many of each kind; the step's page has them all.
INLINE_MAX = 5


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _head(note: NoteView, label: str) -> str:
    parts = [
        f"<strong>{label}</strong> by {_e(note.author)}",
        f'<time datetime="{note.updated_at.isoformat()}" class="muted">'
        f"{note.updated_at.day} {note.updated_at:%b %Y}</time>",
    ]
    if note.state != "shown":
        parts.append(f'<span class="badge state-{_e(note.state)}">{_e(note.state_label)}</span>')
    if note.rejected_by_owner:
        parts.append('<span class="badge bad">Rejected by the owner</span>')
    if note.outdated:
        parts.append('<span class="badge">Outdated: the step changed since</span>')
    return f'<header class="fb-note-head">{" ".join(parts)}</header>'


def _body(note: NoteView) -> str:
    if not note.diff:
        return f'<p class="fb-text">{_e(note.text)}</p>'
    lines = []
    for sign, line in note.diff:
        kind = {"+": " is-add", "-": " is-del", "@": " is-hunk"}.get(sign, "")
        shown = line if sign == "@" else sign + line
        lines.append(f'<span class="fb-diff-line{kind}">{_e(shown)}</span>\n')
    return f'<pre class="fb-diff">{"".join(lines)}</pre>'


def _note(note: NoteView) -> str:
    kind = "correction" if note.kind == "correction" else "comment"
    classes = f"fb-note fb-{kind}"
    if note.rejected_by_owner:
        classes += " is-rejected"
    if note.outdated:
        classes += " is-outdated"
    label = "Correction" if kind == "correction" else "Comment"
    return (
        f'<article class="{classes}" id="note-{_e(note.id)}">{_head(note, label)}'
        f"{_body(note)}</article>"
    )


def notes_html(rows: Iterable[StepFeedback], base: str) -> str:
    """One <section class="fb-notes" data-step> per step with notes."""
    out: list[str] = []
    for row in rows:
        parts = [_note(note) for note in row.corrections[:INLINE_MAX]]
        parts += [_note(note) for note in row.comments[:INLINE_MAX]]
        hidden = max(len(row.corrections) - INLINE_MAX, 0) + max(len(row.comments) - INLINE_MAX, 0)
        if hidden:
            parts.append(
                f'<p class="small"><a href="{_e(base)}steps/{row.step}/feedback">'
                f"{hidden} more on the step's feedback page</a></p>"
            )
        out.append(
            f'<section class="fb-notes" data-step="{row.step}" '
            f'aria-label="Readers\' feedback on step {row.step}">{"".join(parts)}</section>'
        )
    return "".join(out)
