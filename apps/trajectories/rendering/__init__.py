"""Event → card presentation for the trajectory page.

`present_event(event, ctx)` returns the Card of one stored Event (or anything with the same
attributes); the format is recognised from the event's data, so a new importer's events show
their fields even before they get a card of their own. `event_json_html` is the "Show JSON"
view. Everything returned is safe HTML: event text is escaped, Markdown sanitized by nh3,
redactions applied for visitors and highlighted for the owner and moderators.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from apps.trajectories.rendering import formats, openhands
from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.cards import (
    Block,
    Card,
    CardBuilder,
    ViewContext,
    card_html,
    pretty_json,
)
from apps.trajectories.rendering.text import Marks

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

_NAME = re.compile(r"^[a-z][a-z_]*$")
SWE_STEP_KEYS = {"response", "execution_time", "state", "query", "extra_info"}


def shape_of(data: dict[str, Any]) -> str:
    """Which presenter fits this event's data: openhands | v1 | chat | sharegpt | swe | generic."""
    action, observation = data.get("action"), data.get("observation")
    if isinstance(action, str) and _NAME.match(action) and not (SWE_STEP_KEYS & data.keys()):
        if "args" in data or action in openhands.ACTIONS:
            return "openhands"
    if isinstance(observation, str) and _NAME.match(observation) and "action" not in data:
        if "extras" in data or "cause" in data or observation in openhands.OBSERVATIONS:
            return "openhands"
    if isinstance(data.get("kind"), str) and (
        "action" in data
        or "observation" in data
        or "llm_message" in data
        or data["kind"].endswith(("Event", "Observation"))
    ):
        return "v1"
    if isinstance(data.get("role"), str):
        return "chat"
    if "from" in data and "value" in data or set(data) == {"system"}:
        return "sharegpt"
    if isinstance(action, str) or isinstance(observation, str):
        return "swe"
    return "generic"


PRESENTERS = {
    "openhands": openhands.present,
    "v1": formats.present_v1,
    "chat": formats.present_chat,
    "sharegpt": formats.present_sharegpt,
    "swe": formats.present_swe_step,
    "generic": formats.generic,
}


def present_event(event: Any, ctx: ViewContext) -> Card:
    builder = CardBuilder(ctx, event)
    try:
        PRESENTERS[shape_of(builder.data)](builder)
    except Exception:
        # A card is decoration over stored data: an event we cannot lay out shows its fields.
        logger.warning(
            "could not present event %s as a card", getattr(event, "pk", "?"), exc_info=True
        )
        builder = CardBuilder(ctx, event)
        formats.generic(builder)
    if not builder.card.blocks and builder.text.strip() and builder.card.family not in ("state",):
        builder.output(builder.text, tail=0)
    return builder.card


def event_json_html(event: Any, ctx: ViewContext) -> SafeString:
    """The event's original fields as escaped, pretty JSON (images as references)."""
    data = ctx.visitor_data(event.data)
    marks = ctx.marks
    text = pretty_json(data, hide_secrets=not marks.show_original)
    return mark_safe(f'<pre class="json">{t.finish(t.escape(marks.mark(text)))}</pre>')
