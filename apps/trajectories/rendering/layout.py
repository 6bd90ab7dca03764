"""The HTML of one card: `card_html(card, base)` lays out a Card's <li>."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.cards import Card


def _attr(value: Any) -> str:
    return t.escape(str(value), quote=True)


def card_html(card: Card, base: str) -> str:
    """The <li> of one card. Built in Python rather than a template: a 2,000-step page renders
    hundreds of cards per request and this is several times faster (bench/bench_page.py).
    Everything interpolated is escaped here, except the blocks' html, subtitle and badges,
    which are SafeStrings built by CardBuilder from escaped text."""
    step = card.step
    classes = f"ev fam-{_attr(card.family)}" + (" is-obs" if card.kind == "observation" else "")
    if card.nested:
        classes += " is-sub"
    data = [
        f'id="step-{step}"',
        f'data-step="{step}"',
        f'data-type="{_attr(card.type)}"',
        f'data-source="{_attr(card.source)}"',
    ]
    if card.original_id:
        data.append(f'data-id="{_attr(card.original_id)}"')
    if card.cause:
        data.append(f'data-cause="{_attr(card.cause)}"')
    if card.nested:
        data.append(f'data-subagent="{_attr(card.nested)}"')
    if card.cost:
        data.append(f'data-cost="{card.cost:.6f}"')
    if card.tokens:
        data.append(f'data-tokens="{card.tokens}"')
    if card.offset:
        data.append(f'data-offset="{_attr(card.offset)}"')
    head = [
        f'<a class="ev-step" href="#step-{step}" title="Link to step {step}">#{step}</a>',
        f'<span class="ev-title">{t.escape(card.title)}</span>',
    ]
    if card.subtitle:
        head.append(f'<span class="ev-sub">{card.subtitle}</span>')
    for text, tone in card.badges:
        tone_class = f" tone-{_attr(tone)}" if tone else ""
        head.append(f'<span class="badge{tone_class}">{text}</span>')
    meta = []
    if card.cost:
        meta.append(f'<span class="ev-cost" title="Cost so far">${card.cost:.4f}</span>')
    meta.append(f'<span class="ev-type">{t.escape(card.type)}</span>')
    if card.timestamp:
        moment = card.timestamp.astimezone(UTC)
        shown = t.escape(card.offset) if card.offset else moment.strftime("%H:%M:%S")
        meta.append(
            f'<time datetime="{moment.isoformat()}" title="{moment:%Y-%m-%d %H:%M:%S} UTC">{shown}</time>'
        )
    blocks = []
    for block in card.blocks:
        tone_class = f" tone-{_attr(block.tone)}" if block.tone else ""
        parts = [
            f'<div class="blk blk-{_attr(block.kind)}{tone_class}" data-block="{block.index}">'
        ]
        if block.collapsed:
            parts.append(f'<details class="fold"><summary>{t.escape(block.summary)}</summary>')
        if block.label:
            parts.append(f'<div class="blk-label">{t.escape(block.label)}</div>')
        parts.append(f'<div class="blk-body">{block.html}</div>')
        if block.more_lines:
            src = f"{base}events/{step}/blocks/{block.index}"
            parts.append(
                f'<details class="more" data-src="{src}"><summary>Show all {block.more_lines:,} '
                f'lines</summary><div class="more-body"><a href="{src}">Open the full text</a>'
                "</div></details>"
            )
        if block.collapsed:
            parts.append("</details>")
        parts.append("</div>")
        blocks.append("".join(parts))
    json_src = f"{base}events/{step}/json"
    return (
        f'<li class="{classes}" {" ".join(data)}>\n'
        f'<header class="ev-head">{" ".join(head)}\n<span class="ev-meta">{" ".join(meta)}</span></header>\n'
        f'<div class="ev-body">{"".join(blocks)}</div>\n'
        f'<details class="ev-json" data-src="{json_src}"><summary>Show JSON</summary>'
        f'<div class="json-body"><a href="{json_src}">Open the JSON of step {step}</a></div></details>\n'
        "</li>\n"
    )
