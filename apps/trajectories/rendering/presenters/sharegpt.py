"""Cards for ShareGPT turns (human / gpt / function_call / observation / system)."""

from __future__ import annotations

from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.base import (
    chat_content,
)
from apps.trajectories.rendering.presenters.tool_calls import tool_call
from apps.trajectories.rendering.values import as_str, humanize, lines_of, parse_json_string

SHAREGPT_USER = {"human", "user"}
SHAREGPT_AGENT = {"gpt", "assistant", "bot", "chatgpt", "model"}


def present_sharegpt(b: CardBuilder) -> None:
    data = b.data
    if "from" not in data and isinstance(data.get("system"), str):
        # The conversation's top-level `system` (the importer's first event).
        speaker, value = "system", data["system"]
    else:
        speaker = as_str(data.get("from")).lower()
        value = data.get("value")
    if speaker in SHAREGPT_USER:
        b.head("User", "user")
        chat_content(b, value)
    elif speaker in SHAREGPT_AGENT:
        b.head("Agent", "agent")
        chat_content(b, value)
    elif speaker == "system":
        text = as_str(value)
        b.head("System prompt", "system")
        b.output(text, collapsed=True, summary=f"System prompt ({lines_of(text)})", tail=0)
    elif speaker in ("function_call", "tool_call"):
        call = parse_json_string(value)
        name = as_str(call.get("name")) if isinstance(call, dict) else ""
        tool_call(b, name or "tool", call.get("arguments") if isinstance(call, dict) else value)
    elif speaker in ("observation", "tool", "function"):
        b.head("Tool result", "output")
        parsed = parse_json_string(value)
        if isinstance(parsed, (dict, list)):
            b.json(parsed)
        else:
            b.output(as_str(value))
    else:
        b.head(humanize(speaker or "message"), "meta")
        b.markdown(as_str(value))
