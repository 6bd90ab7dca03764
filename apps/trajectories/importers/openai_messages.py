"""OpenAI-style chat messages: {messages: [{role, content, tool_calls?, tool_call_id?}], tools?}.

Also LLaMA-Factory's "openai" layout (with `images` paths) and a bare JSON array of messages.
System/developer -> system event; user -> user message; assistant -> agent message, or one
action per tool call (type = the function's name; the assistant's text is the first call's
thought); tool -> environment observation whose cause is its tool_call_id. Image parts are
noted as "[image]" in the text and kept in `data`.
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
    join_text,
    json_type,
    link_causes,
    mostly,
    text_of,
    title_from,
)

NAME = "openai_messages"
LABEL = "OpenAI chat messages"

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
# Keys that say an array item is an agent event of another format, not a chat message.
FOREIGN_KEYS = {"action", "observation", "kind", "from"}


def is_message(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("role"), str)
        and item["role"] in ROLES
        and not (FOREIGN_KEYS & item.keys())
        and ("content" in item or "tool_calls" in item or "function_call" in item)
    )


def messages_of(doc: Any) -> list | None:
    if isinstance(doc, dict):
        for key in ("messages", "conversations"):
            if isinstance(doc.get(key), list):
                return doc[key]
        return None
    if isinstance(doc, list):
        return doc
    return None


def detect(doc: Any) -> bool:
    messages = messages_of(doc)
    if not messages:
        return messages == [] and isinstance(doc, dict) and "messages" in doc
    if isinstance(doc, list):
        # A bare array only when it is clearly a conversation: every item a chat message.
        return all(is_message(item) for item in messages[:20])
    return mostly(messages, is_message)


def convert(doc: Any) -> CanonicalTrajectory:
    messages = messages_of(doc)
    if messages is None:
        raise FormatError(
            f'expected {{"messages": [{{"role", "content"}}, ...]}}, got {json_type(doc)}'
        )
    events: list[CanonicalEvent] = []
    call_types: dict[str, str] = {}
    last_function = ""
    for index, message in enumerate(messages):
        where = f"message {index}"
        if not isinstance(message, dict):
            raise FormatError(f"message is {json_type(message)}, not an object", where)
        role = message.get("role")
        if not isinstance(role, str):
            raise FormatError("message has no 'role'", where)
        text = as_text(message.get("content"))
        if role in ("system", "developer"):
            events.append(_event("agent", "system", "system", text, message, str(index)))
        elif role == "user":
            events.append(_event("user", "message", "message", text, message, str(index)))
        elif role == "assistant":
            calls = tool_calls(message, where)
            if not calls:
                events.append(_event("agent", "message", "message", text, message, str(index)))
            for number, (call_id, name, arguments, call) in enumerate(calls):
                original_id = call_id or f"{index}.{number}"
                call_types[original_id] = name
                last_function = original_id
                data: dict[str, Any] = {"role": "assistant", "tool_call": call, "message": index}
                if number == 0:
                    data["content"] = message.get("content")
                    data.update(
                        (key, value)
                        for key, value in message.items()
                        if key not in ("role", "content", "tool_calls", "function_call")
                    )
                thought = text if number == 0 else ""
                events.append(
                    _event(
                        "agent",
                        "action",
                        name,
                        join_text(thought, call_text(name, arguments)),
                        data,
                        original_id,
                    )
                )
        elif role in ("tool", "function"):
            cause = text_of(message.get("tool_call_id"))
            if role == "function" and not cause:
                cause = last_function
            name = call_types.get(cause) or text_of(message.get("name")) or "tool"
            event = _event("environment", "observation", name, text, message, str(index))
            event.cause = cause
            events.append(event)
        else:
            raise FormatError(
                f"unknown role {role!r} (expected system, user, assistant or tool)", where
            )
    link_causes(events)
    trajectory = CanonicalTrajectory(source_format=NAME, events=events)
    first = next((e for e in events if e.source == "user" and e.kind == "message"), None)
    trajectory.title = title_from(first.text) if first else ""
    if isinstance(doc, dict):
        trajectory.model = text_of(doc.get("model"))
        attach_image_files(trajectory.events, doc.get("images"))
        for key in ("tools", "images", "videos", "audios", "id"):
            if doc.get(key) not in (None, "", [], "[]"):
                trajectory.metadata[key] = doc[key]
    return trajectory


def _event(
    source: str, kind: str, type_: str, text: str, data: dict, original_id: str
) -> CanonicalEvent:
    return CanonicalEvent(
        source=source, kind=kind, type=type_, text=text, data=data, original_id=original_id
    )


def tool_calls(message: dict, where: str) -> list[tuple[str, str, str, dict]]:
    """(id, function name, arguments, the call) of each tool call of an assistant message."""
    calls = message.get("tool_calls")
    found = []
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                raise FormatError(f"a tool call is {json_type(call)}, not an object", where)
            function = obj if isinstance(obj := call.get("function"), dict) else call
            name = text_of(function.get("name"))
            if not name:
                raise FormatError("a tool call has no function name", where)
            found.append((text_of(call.get("id")), name, _arguments(function), call))
    elif calls is not None:
        raise FormatError(f"'tool_calls' is {json_type(calls)}, expected an array", where)
    legacy = message.get("function_call")
    if not found and isinstance(legacy, dict) and text_of(legacy.get("name")):
        found.append(("", legacy["name"], _arguments(legacy), legacy))
    return found


def _arguments(function: dict) -> str:
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return ""
    try:
        return orjson.dumps(arguments).decode()
    except TypeError:
        return str(arguments)


def call_text(name: str, arguments: str) -> str:
    """What a call does, readably: the command or code itself when that is its one argument."""
    try:
        parsed = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict):
        for key in ("command", "code", "cmd", "query", "url"):
            if isinstance(parsed.get(key), str) and len(parsed) <= 3:
                return f"{name}: {parsed[key]}"
    return f"{name}({arguments})"
