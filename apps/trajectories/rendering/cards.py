"""The card of one event: what the trajectory page shows for it, built from the event's data.

A Card is plain data plus pre-rendered, safe HTML blocks; `layout.card_html()` lays
it out. `CardBuilder` holds the helpers every format's presenter uses (Markdown, code, output,
diff, images, fields, JSON, task lists), each of which redacts, clips and escapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from apps.trajectories.dropped import IMAGE_REMOVED, IMAGE_WITHHELD, image_dropper
from apps.trajectories.redaction import redact_data
from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.values import (
    REMOVED_HTML,
    SECRET_KEY_NAMES,
    WITHHELD_HTML,
    as_str,
    format_offset,
    humanize,
    image_refs,
    parse_json_string,
    pretty_json,
)


@dataclass(frozen=True)
class ViewContext:
    """Who is looking and how: the same event renders differently for the owner and a visitor."""

    share_id: str
    marks: t.Marks
    started_at: datetime | None = None
    full_block: int | None = None  # render this block unclipped (the "show all" fragment)
    # Trajectory.dropped_images: references to them become IMAGE_REMOVED for visitors.
    dropped_images: frozenset[str] = frozenset()
    # image_rule.withheld_images: references become IMAGE_WITHHELD for visitors.
    withheld_images: frozenset[str] = frozenset()
    # Those of them withheld because OCR found something in them (the owner's caption says so).
    flagged_images: frozenset[str] = frozenset()

    def visitor_data(self, data: Any) -> Any:
        """Event data as a visitor may see it: dropped images' references replaced, then the
        redactions applied (structurally, keys included). Originals for owner and moderators."""
        if self.marks.show_original:
            return data
        if self.dropped_images or self.withheld_images:
            data = redact_data(data, image_dropper(self.dropped_images, self.withheld_images))
        if self.marks.active:
            data = redact_data(data, self.marks.plain)
        return data

    def visitor_text(self, text: str) -> str:
        if self.marks.show_original:
            return text
        if self.dropped_images or self.withheld_images:
            text = image_dropper(self.dropped_images, self.withheld_images)(text)
        return self.marks.plain(text)

    @property
    def image_base(self) -> str:
        return f"/t/{self.share_id}/images/"

    @property
    def show_original(self) -> bool:
        return self.marks.show_original


@dataclass
class Block:
    kind: str  # markdown | code | output | diff | images | fields | json | tasks | note
    html: SafeString
    label: str = ""  # our own words, never event text
    index: int = 0
    more_lines: int = 0  # total lines when the preview is clipped ("Show all N lines")
    collapsed: bool = False  # shown inside <details> with `summary`
    summary: str = ""
    tone: str = ""  # "bad" for errors


@dataclass
class Card:
    step: int
    position: int
    kind: str
    source: str
    type: str
    family: str = "meta"
    title: str = ""
    subtitle: SafeString = mark_safe("")
    badges: list[tuple[SafeString, str]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    timestamp: datetime | None = None
    offset: str = ""
    original_id: str = ""
    cause: str = ""
    cost: float | None = None
    tokens: int | None = None
    nested: str = ""  # a subagent's id: its steps are shown nested under the call that began it


class CardBuilder:
    """Builds one card. Every helper takes untrusted text and appends a safe block."""

    def __init__(self, ctx: ViewContext, event: Any):
        self.ctx = ctx
        self.event = event
        data = event.data if isinstance(event.data, dict) else {"value": event.data}
        # Structurally, keys included, before anything is taken out of it.
        self.data: dict[str, Any] = ctx.visitor_data(data)
        self.text: str = ctx.visitor_text(getattr(event, "text", "") or "")
        self.card = Card(
            step=event.position + 1,
            position=event.position,
            kind=event.kind,
            source=event.source,
            type=event.type,
            title=humanize(event.type),
            timestamp=event.timestamp,
            original_id=ctx.marks.plain(event.original_id or ""),
            cause=ctx.marks.plain(event.cause or ""),
        )
        if event.timestamp and ctx.started_at:
            self.card.offset = format_offset((event.timestamp - ctx.started_at).total_seconds())

    # ---- header -------------------------------------------------------------------------------

    def head(self, title: str, family: str, subtitle: str = "", *, code: bool = False) -> None:
        self.card.title = title
        self.card.family = family
        if subtitle:
            self.subtitle(subtitle, code=code)

    def subtitle(self, text: str, *, code: bool = False) -> None:
        line = text.strip().split("\n", 1)[0]
        if len(line) > 160:
            line = line[:159] + "…"
        body = t.inline(line, self.ctx.marks)
        self.card.subtitle = mark_safe(f"<code>{body}</code>" if code else body)

    def badge(self, text: str, tone: str = "") -> None:
        if text:
            self.card.badges.append((mark_safe(t.inline(text[:80], self.ctx.marks)), tone))

    # ---- blocks -------------------------------------------------------------------------------

    def _add(self, kind: str, markup: str, **kwargs: Any) -> Block:
        block = Block(
            kind=kind, html=mark_safe(t.finish(markup)), index=len(self.card.blocks), **kwargs
        )
        self.card.blocks.append(block)
        return block

    def _full(self) -> bool:
        return self.ctx.full_block == len(self.card.blocks)

    def markdown(
        self,
        text: str,
        *,
        label: str = "",
        collapsed: bool = False,
        summary: str = "",
        tone: str = "",
    ) -> None:
        text = as_str(text).strip()
        if not text:
            return
        marked = self.ctx.marks.mark(text)
        more = 0
        if len(marked) > 60_000 and not self._full():
            # Markdown cannot be cut mid-structure safely: long ones show as clipped plain text.
            cut = t.clip(marked, lines=200, chars=20_000)
            body = f'<pre class="text">{t.escape(cut.head)}</pre>'
            more = cut.total_lines
        else:
            body = t.markdown(marked[: t.FULL_CHARS], image_base=self.ctx.image_base)
        self._add(
            "markdown",
            f'<div class="md">{body}</div>',
            label=label,
            collapsed=collapsed,
            summary=summary,
            more_lines=more,
            tone=tone,
        )

    def _cut(self, text: object, **clip: int):
        """Marked text clipped for the card (in full on the "show all" block), or None if blank."""
        text = as_str(text)
        if not text.strip():
            return None
        marked = self.ctx.marks.mark(text.rstrip("\n"))
        if self._full():
            return t.clip(marked, lines=t.FULL_LINES, chars=t.FULL_CHARS)
        return t.clip(marked, **clip)

    def code(
        self,
        text: str,
        *,
        filename: str = "",
        language: str = "",
        label: str = "",
        collapsed: bool = False,
        summary: str = "",
    ) -> None:
        cut = self._cut(text)
        if cut is None:
            return
        body = t.highlight(cut.head, filename=filename, language=language)
        note = self._clip_note(cut)
        self._add(
            "code",
            f'<pre class="code hl">{body}</pre>{note}',
            label=label,
            more_lines=cut.total_lines if cut.clipped and not self._full() else 0,
            collapsed=collapsed,
            summary=summary,
        )

    def output(
        self,
        text: str,
        *,
        label: str = "",
        tone: str = "",
        tail: int = 10,
        collapsed: bool = False,
        summary: str = "",
    ) -> None:
        cut = self._cut(text, tail=tail)
        if cut is None:
            return
        parts = [f'<pre class="out">{t.escape(t.clean_terminal(cut.head))}</pre>']
        if cut.clipped and cut.tail:
            parts.append(
                f'<div class="clip-gap">… {cut.hidden_lines:,} more lines …</div>'
                f'<pre class="out">{t.escape(t.clean_terminal(cut.tail))}</pre>'
            )
        elif cut.clipped:
            parts.append(self._clip_note(cut))
        self._add(
            "output",
            "".join(parts),
            label=label,
            tone=tone,
            more_lines=cut.total_lines if cut.clipped and not self._full() else 0,
            collapsed=collapsed,
            summary=summary,
        )

    def diff(self, diff: str, *, label: str = "") -> None:
        diff = as_str(diff).strip("\n")
        if not diff.strip():
            return
        marked = self.ctx.marks.mark(diff)
        if self._full():
            cut = t.clip(marked, lines=t.FULL_LINES, chars=t.FULL_CHARS)
        else:
            cut = t.clip(marked, lines=60, chars=8000)
        added, removed = t.diff_stats(diff)
        stats = f'<div class="diff-stats"><span class="d-add">+{added}</span> <span class="d-del">−{removed}</span></div>'
        self._add(
            "diff",
            f'{stats}<pre class="diff">{t.diff_html(cut.head)}</pre>{self._clip_note(cut)}',
            label=label,
            more_lines=cut.total_lines if cut.clipped and not self._full() else 0,
        )

    def file_diff(self, old: str, new: str, *, path: str = "", label: str = "") -> None:
        self.diff(t.unified_diff(as_str(old), as_str(new), path=as_str(path)), label=label)

    def images(
        self,
        *values: Any,
        label: str = "",
        alt: str = "Image",
        collapsed: bool = False,
        summary: str = "",
    ) -> None:
        shas, missing = image_refs(*values)
        if not shas and not missing:
            return
        alt_text = t.escape(self.ctx.marks.plain(alt))
        items = []
        for number, sha in enumerate(shas, start=1):
            if sha == IMAGE_REMOVED:
                items.append(REMOVED_HTML)
                continue
            if sha == IMAGE_WITHHELD:
                items.append(WITHHELD_HTML)
                continue
            url = f"{self.ctx.image_base}{sha}"
            suffix = f" ({number})" if len(shas) > 1 else ""
            if sha in self.ctx.dropped_images:
                # Only the owner and moderators get here (visitors got IMAGE_REMOVED).
                items.append(
                    f'<figure class="shot-dropped"><a class="shot" href="{url}"><img src="{url}" '
                    f'alt="{alt_text}{suffix}" loading="lazy" decoding="async"></a>'
                    "<figcaption>Removed by a moderator: only you and moderators see it; "
                    "everyone else sees a placeholder.</figcaption></figure>"
                )
                continue
            if sha in self.ctx.withheld_images:
                # Only the owner and moderators get here (visitors got IMAGE_WITHHELD).
                why = (
                    "Text that may be a secret was found in it"
                    if sha in self.ctx.flagged_images
                    else "Not read for text (OCR is off)"
                )
                items.append(
                    f'<figure class="shot-dropped"><a class="shot" href="{url}"><img src="{url}" '
                    f'alt="{alt_text}{suffix}" loading="lazy" decoding="async"></a>'
                    f"<figcaption>{why}: only you and moderators see it until a moderator "
                    "clears it.</figcaption></figure>"
                )
                continue
            items.append(
                f'<a class="shot" href="{url}"><img src="{url}" alt="{alt_text}{suffix}" '
                f'loading="lazy" decoding="async"></a>'
            )
        if missing:
            items.append(
                f'<p class="muted">{missing} inline image{"s" if missing > 1 else ""} '
                "not stored</p>"
            )
        self._add(
            "images",
            f'<div class="shots">{"".join(items)}</div>',
            label=label,
            collapsed=collapsed,
            summary=summary,
        )

    def fields(
        self,
        mapping: dict[str, Any],
        *,
        label: str = "",
        skip: set[str] | frozenset = frozenset(),
        collapsed: bool = False,
        summary: str = "",
    ) -> None:
        rows = []
        for key, value in mapping.items():
            if key in skip or value in (None, "", [], {}):
                continue
            key_html = t.inline(str(key), self.ctx.marks)
            if (
                not self.ctx.show_original
                and isinstance(value, str)
                and len(value) >= 8
                and SECRET_KEY_NAMES.search(str(key))
            ):
                value_html = '<span class="muted">[hidden]</span>'
            elif isinstance(value, str) and "\n" not in value and len(value) <= 200:
                value_html = t.inline(value, self.ctx.marks)
            elif isinstance(value, (int, float, bool)):
                value_html = t.escape(as_str(value))
            else:
                shown = value if isinstance(value, str) else self.dump(value)
                cut = t.clip(self.ctx.marks.mark(shown), lines=20, chars=3000)
                more = (
                    f'\n<span class="muted">… {cut.total_lines:,} lines in all</span>'
                    if cut.clipped
                    else ""
                )
                value_html = f'<pre class="text">{t.escape(cut.head)}{more}</pre>'
            rows.append(f"<dt>{key_html}</dt><dd>{value_html}</dd>")
        if rows:
            self._add(
                "fields",
                f'<dl class="fields">{"".join(rows)}</dl>',
                label=label,
                collapsed=collapsed,
                summary=summary,
            )

    def json(
        self, value: Any, *, label: str = "", collapsed: bool = False, summary: str = ""
    ) -> None:
        if value in (None, "", [], {}):
            return
        value = parse_json_string(value)
        if isinstance(value, str):
            self.output(value, label=label, collapsed=collapsed, summary=summary)
            return
        self.code(
            self.dump(value), language="json", label=label, collapsed=collapsed, summary=summary
        )

    def dump(self, value: Any) -> str:
        """Pretty JSON of a value taken from self.data (already redacted for visitors)."""
        return pretty_json(value, hide_secrets=not self.ctx.show_original)

    def tasks(self, task_list: Any, *, label: str = "") -> None:
        if not isinstance(task_list, list) or not task_list:
            return
        items = []
        for task in task_list[:500]:
            if not isinstance(task, dict):
                items.append(f'<li class="task">{t.inline(as_str(task), self.ctx.marks)}</li>')
                continue
            status = as_str(task.get("status")) or "todo"
            status_class = re.sub(r"[^a-z_]", "", status.lower())[:20]
            mark = {"done": "✓", "in_progress": "◐", "todo": "○"}.get(status_class, "•")
            title = t.inline(
                as_str(task.get("title") or task.get("content") or task.get("description")),
                self.ctx.marks,
            )
            notes = as_str(task.get("notes"))
            notes_html = (
                f'<div class="task-notes">{t.inline(notes, self.ctx.marks)}</div>' if notes else ""
            )
            items.append(
                f'<li class="task task-{status_class}"><span class="task-mark" aria-hidden="true">{mark}</span> '
                f'<span class="task-title">{title}</span> '
                f'<span class="task-status">{t.inline(status, self.ctx.marks)}</span>{notes_html}</li>'
            )
        self._add("tasks", f'<ul class="tasks">{"".join(items)}</ul>', label=label)

    def note(self, text: str, *, tone: str = "") -> None:
        text = as_str(text).strip()
        if text:
            self._add("note", f'<p class="note">{t.inline(text, self.ctx.marks)}</p>', tone=tone)

    def url(self, value: Any) -> None:
        """The URL as the header's subtitle; a link only for http(s) (never javascript: etc.)."""
        url = as_str(value).strip()
        if not url:
            return
        shown = self.ctx.marks.plain(url)
        body = t.inline(url[:300], self.ctx.marks)
        if shown.lower().startswith(("http://", "https://")) and '"' not in shown:
            self.card.subtitle = mark_safe(
                f'<a href="{t.escape(shown)}" rel="nofollow noopener noreferrer ugc">{body}</a>'
            )
        else:
            self.card.subtitle = mark_safe(f"<code>{body}</code>")

    @staticmethod
    def _clip_note(cut: t.Clip) -> str:
        if not cut.clipped:
            return ""
        shown = cut.head.count("\n") + 1
        return f'<div class="clip-gap">… {cut.total_lines - shown:,} more lines …</div>'

    # ---- metrics ------------------------------------------------------------------------------

    def metrics(self, cost: Any = None, tokens: Any = None) -> None:
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
            self.card.cost = float(cost)
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
            self.card.tokens = tokens
