"""ShareGPT conversations: {conversations: [{from, value}], tools?, system?} (LLaMA-Factory), and
the original ShareGPT site's {items: [{from, value}], title?, model?}.

A JSON array of them is one trajectory per conversation (the registry splits it). One event per
message: human -> user message, gpt -> agent message, function_call -> agent action (its type
is the function's name), observation -> environment observation of the call before it,
system -> system. Messages have no ids: an event's id is its message index.
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    attach_image_files,
    json_type,
    link_causes,
    mostly,
    text_of,
    title_from,
)
from apps.trajectories.importers.openai_messages import call_text

NAME = "sharegpt"
LABEL = "ShareGPT conversation"

USER = {"human", "user"}
AGENT = {"gpt", "assistant", "chatgpt", "bard", "bing", "model", "bot"}
CALL = {"function_call", "tool_call"}
RESULT = {"observation", "tool", "function", "function_response", "tool_response"}
SYSTEM = {"system"}
ROLES = USER | AGENT | CALL | RESULT | SYSTEM


def messages_of(doc: Any) -> list | None:
    if isinstance(doc, dict):
        for key in ("conversations", "items"):
            if isinstance(doc.get(key), list):
                return doc[key]
    return None


def detect(doc: Any) -> bool:
    messages = messages_of(doc)
    if not messages:
        # An empty conversation is still one (it then fails with "no events").
        return messages == [] and "conversations" in doc
    return mostly(messages, lambda m: isinstance(m, dict) and "from" in m and "value" in m)


def convert(doc: Any) -> CanonicalTrajectory:
    messages = messages_of(doc)
    if messages is None:
        raise FormatError(
            f'expected {{"conversations": [{{"from", "value"}}, ...]}}, got {json_type(doc)}'
        )
    assert isinstance(doc, dict)
    events: list[CanonicalEvent] = []
    system = doc.get("system")
    if isinstance(system, str) and system.strip():
        events.append(
            CanonicalEvent(
                source="agent",
                kind="system",
                type="system",
                text=system,
                data={"system": system},
                original_id="system",
            )
        )
    for index, message in enumerate(messages):
        events.append(convert_message(message, index))
    link_causes(events)
    types = {event.original_id: event.type for event in events if event.kind == "action"}
    for event in events:
        if event.kind == "observation" and event.cause in types:
            event.type = types[event.cause]
    trajectory = CanonicalTrajectory(source_format=NAME, events=events)
    trajectory.title = text_of(doc.get("title")).strip()
    if not trajectory.title:
        first = next((e for e in events if e.source == "user" and e.kind == "message"), None)
        trajectory.title = title_from(first.text) if first else ""
    trajectory.model = text_of(doc.get("model"))
    attach_image_files(trajectory.events, doc.get("images"))
    for key in ("tools", "images", "videos", "audios", "id"):
        if doc.get(key) not in (None, "", [], "[]"):
            trajectory.metadata[key] = doc[key]
    return trajectory


def convert_message(message: Any, index: int) -> CanonicalEvent:
    where = f"message {index}"
    if not isinstance(message, dict):
        raise FormatError(f"message is {json_type(message)}, not an object", where)
    speaker = message.get("from")
    if not isinstance(speaker, str):
        raise FormatError("message has no 'from'", where)
    role = speaker.strip().lower()
    if role not in ROLES:
        raise FormatError(
            f"unknown speaker {speaker!r} (expected human, gpt, function_call, observation "
            "or system)",
            where,
        )
    if "value" not in message:
        raise FormatError("message has no 'value'", where)
    value = message["value"]
    text = value if isinstance(value, str) else as_text(value) if value is not None else ""
    common: dict[str, Any] = {"text": text, "data": message, "original_id": str(index)}
    if role in USER:
        return CanonicalEvent(source="user", kind="message", type="message", **common)
    if role in AGENT:
        return CanonicalEvent(source="agent", kind="message", type="message", **common)
    if role in SYSTEM:
        return CanonicalEvent(source="agent", kind="system", type="system", **common)
    if role in CALL:
        calls = parse_calls(value)
        if calls:
            common["text"] = "\n".join(
                call_text(call["name"], _dump(call.get("arguments"))) for call in calls
            )
        return CanonicalEvent(source="agent", kind="action", type=call_name(value), **common)
    return CanonicalEvent(source="environment", kind="observation", type="observation", **common)


def parse_calls(value: Any) -> list[dict]:
    """The calls of a function_call value: {"name", "arguments"} or a list of them."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return []
    calls = value if isinstance(value, list) else [value]
    return [call for call in calls if isinstance(call, dict) and isinstance(call.get("name"), str)]


def call_name(value: Any) -> str:
    calls = parse_calls(value)
    return (calls[0]["name"] if calls else "") or "function_call"


def _dump(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return orjson.dumps(arguments).decode()
    except TypeError:
        return str(arguments)
