"""The openai export: {"messages": [...], "tools"?: [...]} for TRL / Axolotl.

A system message first, user and assistant messages, each agent action an assistant tool call
and each observation that answers one a `tool` message with the call's id.
"""

from __future__ import annotations

from typing import Any

from apps.trajectories.exporters.common import (
    Conversation,
    conversation,
    event_data,
    images_of,
    is_v0,
    tool_definitions,
    v0_fields,
)
from apps.trajectories.importers.base import CanonicalEvent, as_text
from apps.trajectories.outcome import run_outcome


def _user_content(event: CanonicalEvent) -> Any:
    """Text, or content parts where the message carried images."""
    data = event_data(event)
    if data.get("role") == "user" and isinstance(data.get("content"), list):
        return data["content"]
    message = data.get("llm_message") if data.get("kind") == "MessageEvent" else None
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        # OpenHands V1: TextContent / ImageContent parts.
        parts: list[dict] = []
        for part in message["content"]:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            urls = part.get("image_urls")
            for url in urls if isinstance(urls, list) else []:
                if isinstance(url, str) and url:
                    parts.append({"type": "image_url", "image_url": {"url": url}})
        if any(part["type"] == "image_url" for part in parts):
            return parts
    if is_v0(data) and data.get("action") == "message":
        args = v0_fields(data, "args")
        urls = args.get("image_urls") or args.get("images_urls")
        if isinstance(urls, list) and any(isinstance(url, str) and url for url in urls):
            parts = [{"type": "text", "text": as_text(args.get("content"))}]
            parts.extend(
                {"type": "image_url", "image_url": {"url": url}}
                for url in urls
                if isinstance(url, str) and url
            )
            return parts
    return event.text


def to_openai(events: list[CanonicalEvent], meta: dict, talk: Conversation | None = None) -> dict:
    """`talk`: conversation(events) when the caller has it already (the release build makes
    one for both this and the other chat format)."""
    talk = talk if talk is not None else conversation(events)
    messages: list[dict] = []
    if talk.system:
        messages.append({"role": "system", "content": talk.system})
    for turn in talk.turns:
        if turn.role == "user":
            assert turn.event is not None
            messages.append({"role": "user", "content": _user_content(turn.event)})
        elif turn.role == "assistant":
            messages.append({"role": "assistant", "content": turn.text})
        elif turn.role == "calls":
            thought = "\n\n".join(call.thought for call in turn.calls if call.thought)
            messages.append(
                {
                    "role": "assistant",
                    "content": thought,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                        for call in turn.calls
                    ],
                }
            )
        else:
            messages.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.text})
    payload: dict[str, Any] = {"messages": messages}
    tools = tool_definitions(events, meta)
    if tools:
        payload["tools"] = tools
    images = images_of(meta)
    if images:
        payload["images"] = images
    result = run_outcome(meta.get("metadata"))
    if result:
        # The run's outcome (final patch, resolved, instance): a key the trainers' loaders
        # ignore, so the file stays loadable and the patch is not lost.
        payload["result"] = result.as_dict()
    return payload
