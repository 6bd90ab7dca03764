"""Event → card presentation for the trajectory page.

`present_event(event, ctx)` returns the Card of one stored Event (or anything with the same
attributes); the format is recognised from the event's data, so a new importer's events show
their fields even before they get a card of their own. `event_json_html` is the "Show JSON"
view. Everything returned is safe HTML: event text is escaped, Markdown sanitized by nh3,
redactions applied for visitors and highlighted for the owner and moderators.
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.cards import Block, Card, CardBuilder, ViewContext
from apps.trajectories.rendering.layout import card_html
from apps.trajectories.rendering.presenters import PRESENTERS, shape_of
from apps.trajectories.rendering.presenters.base import generic
from apps.trajectories.rendering.text import Marks
from apps.trajectories.rendering.values import pretty_json

__all__ = [
    "Block",
    "Card",
    "Marks",
    "ViewContext",
    "card_html",
    "event_json_html",
    "present_event",
]

logger = logging.getLogger(__name__)


def present_event(event: Any, ctx: ViewContext) -> Card:
    builder = CardBuilder(ctx, event)
    try:
        PRESENTERS[shape_of(builder.data, builder.card.type)](builder)
    except Exception:
        # A card is decoration over stored data: an event we cannot lay out shows its fields.
        logger.warning(
            "could not present event %s as a card", getattr(event, "pk", "?"), exc_info=True
        )
        builder = CardBuilder(ctx, event)
        generic(builder)
    if not builder.card.blocks and builder.text.strip() and builder.card.family not in ("state",):
        builder.output(builder.text, tail=0)
    return builder.card


def event_json_html(event: Any, ctx: ViewContext) -> SafeString:
    """The event's original fields as escaped, pretty JSON (images as references)."""
    data = ctx.visitor_data(event.data)
    marks = ctx.marks
    text = pretty_json(data, hide_secrets=not marks.show_original)
    return mark_safe(f'<pre class="json">{t.finish(t.escape(marks.mark(text)))}</pre>')
