"""Exports of canonical events: OpenHands event arrays, OpenAI messages, ShareGPT conversations.

Pure Python, no Django: `export_events(fmt, events, meta=...)` returns UTF-8 JSON bytes.

- openhands: a V0 event array (what OpenHands' own export and replay read). Events that came
  from OpenHands V0 are reproduced from their original fields; events of other formats are
  mapped onto id / timestamp / source / message / action|observation / args|extras / content.
- openai: {"messages": [...], "tools"?: [...]} for TRL / Axolotl: a system message first, user
  and assistant messages, each agent action an assistant tool call and each observation that
  answers one a `tool` message with the call's id.
- sharegpt: {"conversations": [{from, value}], "system"?, "tools"?} for LLaMA-Factory, whose
  loader drops any conversation that does not alternate human|observation with
  gpt|function_call and end on the latter.

The two training formats hold the conversation the agent had, not the bookkeeping around it:
system events after the first message (V1 state updates, condensations), actions not taken by
the agent (OpenHands' recall), observations that answer no exported tool call (agent state
changes, null observations) are left out. ShareGPT cannot give a tool call a thought, nor hold
an agent message right before a tool call: those texts are dropped there (the openai export
keeps them).

`meta` is the trajectory's own fields (title, agent, model, source_format, metadata, ...);
only `metadata["tools"]` (and `metadata["images"]`) are read, for formats whose tool
definitions and image paths live outside the events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from apps.trajectories.importers.base import CanonicalEvent, as_text, text_of
from apps.trajectories.importers.openhands_v0 import ACTION_TOP_KEYS, TOP_KEYS
from apps.trajectories.importers.sharegpt import parse_calls

EXPORT_FORMATS = ("openhands", "openai", "sharegpt")

# OpenHands' tool for each V0 action, when an event does not record the call itself.
V0_TOOLS = {
    "run": "execute_bash",
    "run_ipython": "execute_ipython_cell",
    "read": "str_replace_editor",
    "write": "str_replace_editor",
    "edit": "str_replace_editor",
    "browse": "browser",
    "browse_interactive": "browser",
    "think": "think",
    "finish": "finish",
    "task_tracking": "task_tracker",
}
# Runtime bookkeeping in V0 args that is no argument the model gave.
V0_NOISE_ARGS = {
    "thought",
    "security_risk",
    "confirmation_state",
    "is_confirmed",
    "hidden",
    "blocking",
    "is_static",
    "cwd",
    "keep_prompt",
    "action_risk",
    "impl_source",
    "translated_ipython_code",
    "include_extra",
    "kernel_init_code",
    "return_axtree",
    "images_urls",
}
V0_ACTIONS = {
    "run",
    "run_ipython",
    "read",
    "write",
    "edit",
    "browse",
    "browse_interactive",
    "think",
    "finish",
    "call_tool_mcp",
}


def export_events(fmt: str, events: Iterable[CanonicalEvent], *, meta: dict) -> bytes:
    """The events of one trajectory in export format `fmt` (one of EXPORT_FORMATS), as JSON."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    events = list(events)
    meta = meta if isinstance(meta, dict) else {}
    if fmt == "openhands":
        payload: Any = to_openhands(events)
    elif fmt == "openai":
        payload = to_openai(events, meta)
    else:
        payload = to_sharegpt(events, meta)
    try:
        return orjson.dumps(payload)
    except TypeError:
        # orjson refuses integers beyond 64 bits, which JSON (and a sender) may well use;
        # the standard library writes them exactly.
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")


# --- what an event is ------------------------------------------------------------------------


def _data(event: CanonicalEvent) -> dict:
    return event.data if isinstance(event.data, dict) else {}


def is_v0(data: dict) -> bool:
    """Original fields of an OpenHands V0 event (also from share payloads and eval rows)."""
    return (isinstance(data.get("action"), str) != isinstance(data.get("observation"), str)) and (
        "role" not in data and "from" not in data and "kind" not in data
    )


def _v0_fields(data: dict, key: str) -> dict:
    value = data.get(key)
    if isinstance(value, dict):
        return value
    if key in data:
        return {}
    # Keys of the V0 event envelope: the rest of a flat legacy event is its args / extras.
    envelope = TOP_KEYS if key == "extras" else ACTION_TOP_KEYS
    return {k: v for k, v in data.items() if k not in envelope}


def _parse_json_object(text: str) -> dict | None:
    try:
        value = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False)


@dataclass
class Call:
    """One tool call of an action: as the model made it where the event records that."""

    id: str
    name: str
    arguments: str  # JSON text, as in OpenAI's function.arguments
    thought: str = ""


def calls_of(event: CanonicalEvent) -> list[Call]:
    data = _data(event)
    # OpenAI messages (importers/openai_messages.py): the call as sent.
    tool_call = data.get("tool_call")
    if data.get("role") == "assistant" and isinstance(tool_call, dict):
        function = obj if isinstance(obj := tool_call.get("function"), dict) else tool_call
        arguments = function.get("arguments")
        return [
            Call(
                id=text_of(tool_call.get("id")),
                name=text_of(function.get("name")) or event.type,
                arguments=arguments if isinstance(arguments, str) else _dumps(arguments or {}),
                thought=as_text(data.get("content")),
            )
        ]
    # OpenHands V1 ActionEvent.
    if data.get("kind") == "ActionEvent":
        thought = as_text(data.get("thought"))
        if isinstance(tool_call, dict) and text_of(tool_call.get("name")):
            arguments = tool_call.get("arguments")
            return [
                Call(
                    id=text_of(tool_call.get("id")) or text_of(data.get("tool_call_id")),
                    name=tool_call["name"],
                    arguments=arguments if isinstance(arguments, str) else _dumps(arguments or {}),
                    thought=thought,
                )
            ]
        action = obj if isinstance(obj := data.get("action"), dict) else {}
        fields = {k: v for k, v in action.items() if k != "kind"}
        return [
            Call(
                id=text_of(data.get("tool_call_id")),
                name=text_of(data.get("tool_name")) or event.type,
                arguments=_dumps(fields),
                thought=thought,
            )
        ]
    # ShareGPT function_call: {"name", "arguments"} or a list of them (parallel calls).
    if data.get("from") in ("function_call", "tool_call"):
        calls = parse_calls(data.get("value"))
        if calls:
            return [
                Call(id="", name=call["name"], arguments=_arguments_text(call.get("arguments")))
                for call in calls
            ]
    # SWE-agent: the history's tool call where there is one, else the command line.
    if "tool_calls" in data and isinstance(data.get("tool_calls"), list) and data["tool_calls"]:
        first = data["tool_calls"][0]
        if isinstance(first, dict) and isinstance(first.get("function"), dict):
            function = first["function"]
            return [
                Call(
                    id=text_of(first.get("id")),
                    name=text_of(function.get("name")) or event.type,
                    arguments=_arguments_text(function.get("arguments")),
                    thought=as_text(data.get("thought")).strip(),
                )
            ]
    if "response" in data or (
        "thought" in data and isinstance(data.get("action"), str) and "role" in data
    ):
        return [
            Call(
                id="",
                name="bash",
                arguments=_dumps({"command": as_text(data.get("action")).strip()}),
                thought=as_text(data.get("thought")).strip(),
            )
        ]
    # OpenHands V0.
    if is_v0(data) and isinstance(data.get("action"), str):
        return [_v0_call(event, data)]
    return [Call(id="", name=event.type or "tool", arguments=_dumps({"input": event.text}))]


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return _dumps(arguments if arguments is not None else {})


def _v0_call(event: CanonicalEvent, data: dict) -> Call:
    args = _v0_fields(data, "args")
    thought = as_text(args.get("thought"))
    meta = data.get("tool_call_metadata")
    if isinstance(meta, dict) and text_of(meta.get("function_name")):
        call_id = text_of(meta.get("tool_call_id"))
        arguments = _response_arguments(meta.get("model_response"), call_id)
        if arguments is not None:
            return Call(
                id=call_id, name=meta["function_name"], arguments=arguments, thought=thought
            )
    action = data["action"]
    if action == "call_tool_mcp":
        name = text_of(args.get("name")) or "mcp"
        arguments = args.get("arguments")
        return Call(id="", name=name, arguments=_arguments_text(arguments or {}), thought=thought)
    fields = {k: v for k, v in args.items() if k not in V0_NOISE_ARGS and v is not None}
    if action in ("read", "write", "edit") and "command" not in fields:
        fields = {"command": "view" if action == "read" else "create", **fields}
    return Call(id="", name=V0_TOOLS.get(action, action), arguments=_dumps(fields), thought=thought)


def _response_arguments(response: Any, call_id: str) -> str | None:
    """The arguments of call `call_id` in the LiteLLM response OpenHands kept with the action."""
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        return None
    for choice in response["choices"]:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict) or text_of(call.get("id")) != call_id:
                continue
            function = call.get("function")
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                return function["arguments"]
    return None


def _response_group(event: CanonicalEvent) -> str:
    """What ties actions that one model response produced together (parallel tool calls)."""
    data = _data(event)
    if data.get("role") == "assistant" and "message" in data:
        return f"message:{data['message']}"
    if isinstance(data.get("llm_response_id"), str):
        return f"response:{data['llm_response_id']}"
    meta = data.get("tool_call_metadata")
    if isinstance(meta, dict) and isinstance(meta.get("model_response"), dict):
        response_id = meta["model_response"].get("id")
        if isinstance(response_id, str) and response_id:
            return f"response:{response_id}"
    return ""


# --- the conversation (shared by the openai and sharegpt exports) ----------------------------


@dataclass
class Turn:
    role: str  # user | assistant | calls | tool
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str = ""
    name: str = ""
    group: str = ""
    event: CanonicalEvent | None = None


@dataclass
class Conversation:
    system: str
    turns: list[Turn]


def conversation(events: list[CanonicalEvent]) -> Conversation:
    system: list[str] = []
    turns: list[Turn] = []
    started = False
    used_ids: set[str] = set()
    calls_by_event: dict[str, list[Call]] = {}
    open_calls: list[Call] = []  # made since the last message, not answered yet
    for position, event in enumerate(events):
        if event.kind == "system":
            if not started and event.text:
                system.append(event.text)
            continue
        started = True
        if event.kind == "message":
            role = "assistant" if event.source == "agent" else "user"
            turns.append(Turn(role=role, text=event.text, event=event))
            open_calls = []
        elif event.kind == "action":
            if event.source != "agent":
                continue
            calls = calls_of(event)
            for number, call in enumerate(calls):
                if not call.id or call.id in used_ids:
                    base = f"call_{event.original_id or position}"
                    call.id = base if number == 0 else f"{base}_{number}"
                    while call.id in used_ids:
                        call.id += "_"
                used_ids.add(call.id)
            calls_by_event[event.original_id] = list(calls)
            group = _response_group(event)
            last = turns[-1] if turns else None
            if last is not None and last.role == "calls" and group and last.group == group:
                last.calls.extend(calls)
            else:
                turns.append(Turn(role="calls", calls=calls, group=group, event=event))
            open_calls.extend(calls)
        elif event.kind == "observation":
            target = None
            if event.cause and event.cause in calls_by_event:
                target = next((c for c in calls_by_event[event.cause] if c in open_calls), None)
            elif not event.cause and open_calls and turns and turns[-1].role in ("calls", "tool"):
                target = open_calls[0]
            if target is None:
                continue
            open_calls.remove(target)
            turns.append(
                Turn(role="tool", text=event.text, call_id=target.id, name=target.name, event=event)
            )
    return Conversation(system="\n\n".join(system), turns=turns)


def tool_definitions(events: list[CanonicalEvent], meta: dict) -> list[dict]:
    """OpenAI-style tool definitions from the system event or the trajectory metadata."""
    found: Any = None
    for event in events:
        if event.kind != "system":
            continue
        data = _data(event)
        args = obj if isinstance(obj := data.get("args"), dict) else {}
        for candidate in (args.get("tools"), data.get("tools")):
            if isinstance(candidate, list) and candidate:
                found = candidate
                break
        if found:
            break
    if found is None:
        metadata = obj if isinstance(obj := meta.get("metadata"), dict) else {}
        found = metadata.get("tools")
    if isinstance(found, str):
        try:
            found = orjson.loads(found)
        except orjson.JSONDecodeError:
            return []
    if not isinstance(found, list):
        return []
    tools = []
    for tool in found:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):
            tools.append({"type": tool.get("type") or "function", "function": tool["function"]})
        elif isinstance(tool.get("name"), str):
            parameters = next(
                (tool[key] for key in ("parameters", "input_schema", "inputSchema") if key in tool),
                None,
            )
            function = {"name": tool["name"], "description": text_of(tool.get("description"))}
            if isinstance(parameters, dict):
                function["parameters"] = parameters
            tools.append({"type": "function", "function": function})
    return tools


def _images(meta: dict) -> list | None:
    metadata = obj if isinstance(obj := meta.get("metadata"), dict) else {}
    images = metadata.get("images")
    return images if isinstance(images, list) and images else None


# --- openai ----------------------------------------------------------------------------------


def _user_content(event: CanonicalEvent) -> Any:
    """Text, or content parts where the message carried images."""
    data = _data(event)
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
        args = _v0_fields(data, "args")
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


def to_openai(events: list[CanonicalEvent], meta: dict) -> dict:
    talk = conversation(events)
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
    images = _images(meta)
    if images:
        payload["images"] = images
    return payload


# --- sharegpt --------------------------------------------------------------------------------

INPUT_SIDE = {"human", "observation"}


def to_sharegpt(events: list[CanonicalEvent], meta: dict) -> dict:
    talk = conversation(events)
    turns: list[dict] = []
    for turn in talk.turns:
        if turn.role == "user":
            role, value = "human", turn.text
        elif turn.role == "assistant":
            role, value = "gpt", turn.text
        elif turn.role == "calls":
            calls = [
                {"name": call.name, "arguments": _parse_json_object(call.arguments) or {}}
                for call in turn.calls
            ]
            role, value = "function_call", _dumps(calls[0] if len(calls) == 1 else calls)
        else:
            role, value = "observation", turn.text
        _append_alternating(turns, role, value)
    # LLaMA-Factory wants the first turn from the human side and the last from the model's.
    while turns and turns[0]["from"] not in INPUT_SIDE:
        turns.pop(0)
    while turns and turns[-1]["from"] in INPUT_SIDE:
        turns.pop()
    payload: dict[str, Any] = {"conversations": turns}
    if talk.system:
        payload["system"] = talk.system
    tools = tool_definitions(events, meta)
    if tools:
        payload["tools"] = _dumps([tool["function"] for tool in tools])
    images = _images(meta)
    if images:
        payload["images"] = images
    return payload


def _append_alternating(turns: list[dict], role: str, value: str) -> None:
    """Add a turn, merging it into the last one when both are on the same side."""
    if not turns or (turns[-1]["from"] in INPUT_SIDE) != (role in INPUT_SIDE):
        turns.append({"from": role, "value": value})
        return
    last = turns[-1]
    if last["from"] == role == "function_call":
        # Parallel calls: one function_call turn holding the list.
        previous = orjson.loads(last["value"])
        current = orjson.loads(value)
        merged = (previous if isinstance(previous, list) else [previous]) + (
            current if isinstance(current, list) else [current]
        )
        last["value"] = _dumps(merged)
    elif last["from"] == role:
        last["value"] = "\n\n".join(part for part in (last["value"], value) if part)
    elif role in INPUT_SIDE:
        # A tool result then the user speaking (or the reverse): one human turn with both.
        last["value"] = "\n\n".join(part for part in (last["value"], value) if part)
        last["from"] = "human"
    elif role == "function_call":
        # An agent message right before a tool call: the call stays, the text has no place.
        last["from"], last["value"] = role, value
    # else: a message right after an unanswered call; the call stays.


# --- openhands -------------------------------------------------------------------------------


def _timestamp(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat()


def to_openhands(events: list[CanonicalEvent]) -> list[dict]:
    used: set[int] = set()
    for event in events:
        data = _data(event)
        if is_v0(data) and isinstance(data.get("id"), int) and not isinstance(data["id"], bool):
            used.add(data["id"])
    ids: dict[str, int] = {}
    next_id = max(used) + 1 if used else 0
    out: list[dict] = []
    calls: dict[str, dict] = {}  # exported id -> args of mapped actions, for their observations
    for event in events:
        data = _data(event)
        if is_v0(data):
            out.append(_v0_event(data))
            if isinstance(data.get("id"), int):
                ids.setdefault(event.original_id, data["id"])
            continue
        if event.original_id.isdigit() and int(event.original_id) not in used:
            new_id = int(event.original_id)
        else:
            while next_id in used:
                next_id += 1
            new_id = next_id
        used.add(new_id)
        if event.original_id:
            ids.setdefault(event.original_id, new_id)
        mapped = _mapped_event(event, new_id, ids, calls)
        out.append(mapped)
        if "action" in mapped:
            calls[str(new_id)] = mapped
    return out


def _v0_event(data: dict) -> dict:
    """The original event; flat legacy ones get their args / extras nested, as OpenHands reads."""
    if isinstance(data.get("action"), str) and "args" not in data:
        args = _v0_fields(data, "args")
        return {k: v for k, v in data.items() if k not in args} | {"args": args}
    if isinstance(data.get("observation"), str) and "extras" not in data:
        extras = _v0_fields(data, "extras")
        nested = {k: v for k, v in data.items() if k not in extras} | {"extras": extras}
        nested.setdefault("content", "")
        return nested
    return data


def _mapped_event(
    event: CanonicalEvent, new_id: int, ids: dict[str, int], calls: dict[str, dict]
) -> dict:
    base: dict[str, Any] = {"id": new_id}
    timestamp = _timestamp(event.timestamp)
    if timestamp is not None:
        base["timestamp"] = timestamp
    base["source"] = event.source
    if event.kind == "message":
        return base | {
            "message": event.text,
            "action": "message",
            "args": {
                "content": event.text,
                "image_urls": None,
                "wait_for_response": event.source == "agent",
            },
        }
    if event.kind == "system":
        return base | {
            "message": event.text,
            "action": "system",
            "args": {"content": event.text, "tools": _system_tools(event)},
        }
    if event.kind == "action":
        action, args = _v0_action(event)
        return base | {"message": event.text, "action": action, "args": args}
    cause = ids.get(event.cause)
    if cause is None and event.cause.isdigit():
        cause = int(event.cause)
    observation, extras = _v0_observation(
        event, calls.get(str(cause)) if cause is not None else None
    )
    mapped = base | {
        "message": "",
        "observation": observation,
        "content": event.text,
        "extras": extras,
    }
    if cause is not None:
        mapped["cause"] = cause
    return mapped


def _system_tools(event: CanonicalEvent) -> list:
    data = _data(event)
    tools = data.get("tools")
    return tools if isinstance(tools, list) else []


def _v0_action(event: CanonicalEvent) -> tuple[str, dict]:
    call = calls_of(event)[0]
    arguments = _parse_json_object(call.arguments) or {}
    data = _data(event)
    if data.get("kind") == "ActionEvent" and isinstance(data.get("action"), dict):
        # The SDK's parsed action holds every argument, defaults included.
        arguments = {k: v for k, v in data["action"].items() if k != "kind"} | arguments
    thought = call.thought
    kind = event.type
    command = arguments.get("command")
    if kind == "run" or (kind not in V0_ACTIONS and call.name in ("bash", "execute_bash")):
        return "run", {
            "command": command if isinstance(command, str) else event.text,
            "is_input": False,
            "thought": thought,
        }
    if kind in ("edit", "read", "write") and isinstance(arguments.get("path"), str):
        args = {k: v for k, v in arguments.items() if k != "kind"}
        return ("read" if kind == "read" else "edit"), args | {"thought": thought}
    if kind == "run_ipython" and isinstance(arguments.get("code"), str):
        return "run_ipython", {"code": arguments["code"], "thought": thought}
    if kind == "browse" and isinstance(arguments.get("url"), str):
        return "browse", {"url": arguments["url"], "thought": thought}
    if kind == "finish":
        final = text_of(arguments.get("message")) or text_of(arguments.get("final_thought"))
        return "finish", {"final_thought": final or event.text, "outputs": {}, "thought": thought}
    if kind == "think":
        return "think", {"thought": text_of(arguments.get("thought")) or event.text}
    # Any other tool: OpenHands' generic tool call.
    return "call_tool_mcp", {"name": call.name, "arguments": arguments, "thought": thought}


# Observation types that say what happened whatever the action was.
OUTCOME_OBSERVATIONS = {
    "error",
    "user_rejected",
    "agent_state_changed",
    "null",
    "success",
    "condense",
    "recall",
    "delegate",
    "task_tracking",
}


def _v0_observation(event: CanonicalEvent, action: dict | None) -> tuple[str, dict]:
    kind = action.get("action") if action else ""
    args = action.get("args", {}) if action else {}
    if event.type in OUTCOME_OBSERVATIONS:
        return event.type, {}
    if kind == "run":
        return "run", {"command": args.get("command", ""), "metadata": {}}
    if kind in ("edit", "read"):
        return kind, {"path": args.get("path", "")}
    if kind == "run_ipython":
        return "run_ipython", {"code": args.get("code", "")}
    if kind == "browse":
        return "browse", {"url": args.get("url", "")}
    if kind == "think":
        return "think", {}
    name = args.get("name") if kind == "call_tool_mcp" else event.type
    return "mcp", {"name": name or event.type, "arguments": args.get("arguments", {})}
