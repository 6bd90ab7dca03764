"""Charts as server-rendered SVG: no JavaScript, no charting library, nothing inline that the
strict CSP would refuse (sizes and positions are SVG attributes, colours are classes in
site.css). Every chart has a <title> and is shown next to a table of the same numbers.

Pure functions: rows in, safe markup out. Labels are escaped (agent and model names are text
that sharers chose).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from django.utils.safestring import SafeString, mark_safe

WIDTH = 400  # viewBox units; the SVG scales to its column, a phone's included
BAR = 18
GAP = 6
LABEL = 170
LABEL_CHARS = 18


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def bars(rows: Sequence[Sequence[Any]], *, title: str, tone: str = "") -> SafeString:
    """Horizontal bars, one per [label, value]: long labels stay readable on a phone."""
    if not rows:
        return mark_safe("")
    top = max(float(value) for _, value in rows) or 1.0
    span = WIDTH - LABEL - 60
    height = len(rows) * (BAR + GAP) + GAP
    parts = [
        f'<svg class="chart chart-bars{" " + escape(tone) if tone else ""}" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>"
    ]
    for index, (label, value) in enumerate(rows):
        y = GAP + index * (BAR + GAP)
        width = max(float(value) / top * span, 1 if value else 0)
        text = str(label)
        # Short enough for the label column at a phone's larger type too (site.css).
        shown = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
        parts.append(
            f'<g><text x="{LABEL - 6}" y="{y + BAR - 5}" class="chart-label" text-anchor="end">'
            f"{escape(shown)}<title>{escape(text)}</title></text>"
            f'<rect x="{LABEL}" y="{y}" width="{width:.1f}" height="{BAR}" class="chart-bar" rx="2"></rect>'
            f'<text x="{LABEL + width + 4:.1f}" y="{y + BAR - 5}" class="chart-value">{_number(float(value))}</text></g>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def _columns_head(
    title: str, top: float, *, height: int, bottom: int, left: int, plot: float
) -> list[str]:
    """The opening of a column chart: the svg, its title, the axis and the top and 0 values."""
    return [
        f'<svg class="chart chart-columns" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet"><title>{escape(title)}</title>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{WIDTH - 2}" y2="{height - bottom}" class="chart-axis"></line>',
        f'<text x="{left - 4}" y="{height - bottom - plot + 4}" class="chart-value" text-anchor="end">{_number(top)}</text>',
        f'<text x="{left - 4}" y="{height - bottom}" class="chart-value" text-anchor="end">0</text>',
    ]


def linked_columns(rows: Sequence[Sequence[Any]], *, title: str) -> SafeString:
    """Vertical columns, one per [label, value, href, axis label] in order, each a link (to the
    page that lists what it counts), the axis label under every column: a histogram of a few
    bins."""
    if not rows:
        return mark_safe("")
    height, bottom, left = 170, 24, 34
    top = max(float(row[1]) for row in rows) or 1.0
    step = (WIDTH - left - 4) / len(rows)
    plot = height - bottom - 8
    parts = _columns_head(title, top, height=height, bottom=bottom, left=left, plot=plot)
    for index, (label, value, href, axis) in enumerate(rows):
        h = float(value) / top * plot
        x = left + index * step
        # The whole column's height is the link's target, so that an empty bin is clickable too.
        parts.append(
            f'<a href="{escape(str(href))}"><rect x="{x + 1:.1f}" y="{height - bottom - plot:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{plot:.1f}" class="chart-hit"></rect>'
            f'<rect x="{x + 1:.1f}" y="{height - bottom - h:.1f}" width="{max(step - 2, 1):.1f}" '
            f'height="{h:.1f}" class="chart-bar"></rect>'
            f"<title>{escape(str(label))}: {_number(float(value))}</title></a>"
            f'<text x="{x + step / 2:.1f}" y="{height - 8}" class="chart-label" text-anchor="middle">'
            f"{escape(str(axis))}</text>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def columns(rows: Sequence[Sequence[Any]], *, title: str) -> SafeString:
    """Vertical columns over time (one per [label, value], oldest first), labels every few."""
    if not rows:
        return mark_safe("")
    height, bottom, left = 170, 24, 34
    top = max(float(value) for _, value in rows) or 1.0
    step = (WIDTH - left - 4) / len(rows)
    plot = height - bottom - 8
    parts = _columns_head(title, top, height=height, bottom=bottom, left=left, plot=plot)
    every = max(1, len(rows) // 6)
    for index, (label, value) in enumerate(rows):
        h = float(value) / top * plot
        x = left + index * step
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{height - bottom - h:.1f}" width="{max(step - 2, 1):.1f}" '
            f'height="{h:.1f}" class="chart-bar"><title>{escape(str(label))}: {_number(float(value))}</title></rect>'
        )
        if index % every == 0:
            parts.append(
                f'<text x="{x + step / 2:.1f}" y="{height - 8}" class="chart-label" text-anchor="middle">'
                f"{escape(str(label)[5:])}</text>"
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def rates(rows: Sequence[dict[str, Any]], *, title: str) -> SafeString:
    """Horizontal bars of success rates on a 0–100 % axis, each with its 95 % interval drawn as
    a whisker across it; a row with an `href` is a link (to the browse page it counts)."""
    if not rows:
        return mark_safe("")
    span = WIDTH - LABEL - 60
    height = len(rows) * (BAR + GAP) + GAP
    parts = [
        f'<svg class="chart chart-bars chart-rates" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>"
    ]
    for index, row in enumerate(rows):
        y = GAP + index * (BAR + GAP)
        width = max(row["rate"] * span, 1)
        low, high = LABEL + row["low"] * span, LABEL + row["high"] * span
        middle = y + BAR / 2
        text = str(row["label"])
        shown = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
        said = (
            f"{text}: {row['resolved']:,} of {row['runs']:,} resolved, {row['rate']:.0%} "
            f"(95% interval {row['low']:.0%}–{row['high']:.0%})"
        )
        bar = (
            f"<g><title>{escape(said)}</title>"
            f'<text x="{LABEL - 6}" y="{y + BAR - 5}" class="chart-label" text-anchor="end">'
            f"{escape(shown)}</text>"
            f'<rect x="{LABEL}" y="{y}" width="{width:.1f}" height="{BAR}" class="chart-bar" rx="2"></rect>'
            f'<line x1="{low:.1f}" y1="{middle}" x2="{high:.1f}" y2="{middle}" class="chart-interval"></line>'
            f'<line x1="{low:.1f}" y1="{y + 4}" x2="{low:.1f}" y2="{y + BAR - 4}" class="chart-interval"></line>'
            f'<line x1="{high:.1f}" y1="{y + 4}" x2="{high:.1f}" y2="{y + BAR - 4}" class="chart-interval"></line>'
            f'<text x="{LABEL + span + 4}" y="{y + BAR - 5}" class="chart-value">{row["rate"]:.0%}</text></g>'
        )
        href = row.get("href")
        parts.append(f'<a href="{escape(href)}">{bar}</a>' if href else bar)
    parts.append("</svg>")
    return mark_safe("".join(parts))
