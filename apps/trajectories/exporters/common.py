"""What the exports share: the tool calls an event holds, and the conversation (turns) that the
openai and sharegpt exports are both written from. Pure Python, no Django.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from apps.trajectories.importers.base import CanonicalEvent, as_text, text_of
from apps.trajectories.importers.openhands_v0 import ACTION_TOP_KEYS, TOP_KEYS
from apps.trajectories.importers.sharegpt import parse_calls

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


# --- what an event is ------------------------------------------------------------------------


def event_data(event: CanonicalEvent) -> dict:
    """The event's original fields ({} when it has none)."""
    return event.data if isinstance(event.data, dict) else {}


def is_v0(data: dict) -> bool:
    """Original fields of an OpenHands V0 event (also from share payloads and eval rows)."""
    return (isinstance(data.get("action"), str) != isinstance(data.get("observation"), str)) and (
        "role" not in data and "from" not in data and "kind" not in data
    )


def v0_fields(data: dict, key: str) -> dict:
    """A V0 event's `args` or `extras` (a flat legacy event's own fields)."""
    value = data.get(key)
    if isinstance(value, dict):
        return value
    if key in data:
        return {}
    # Keys of the V0 event envelope: the rest of a flat legacy event is its args / extras.
    envelope = TOP_KEYS if key == "extras" else ACTION_TOP_KEYS
    return {k: v for k, v in data.items() if k not in envelope}


def parse_json_object(text: str) -> dict | None:
    """The JSON object in `text`, or None when it holds none."""
    try:
        value = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def dumps(value: Any) -> str:
    """Compact JSON text of `value` (the standard library for what orjson refuses)."""
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
    data = event_data(event)
    # OpenAI messages (importers/openai_messages.py): the call as sent.
    tool_call = data.get("tool_call")
    if data.get("role") == "assistant" and isinstance(tool_call, dict):
        function = obj if isinstance(obj := tool_call.get("function"), dict) else tool_call
        arguments = function.get("arguments")
        return [
            Call(
                id=text_of(tool_call.get("id")),
                name=text_of(function.get("name")) or event.type,
                arguments=arguments if isinstance(arguments, str) else dumps(arguments or {}),
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
                    arguments=arguments if isinstance(arguments, str) else dumps(arguments or {}),
                    thought=thought,
                )
            ]
        action = obj if isinstance(obj := data.get("action"), dict) else {}
        fields = {k: v for k, v in action.items() if k != "kind"}
        return [
            Call(
                id=text_of(data.get("tool_call_id")),
                name=text_of(data.get("tool_name")) or event.type,
                arguments=dumps(fields),
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
                arguments=dumps({"command": as_text(data.get("action")).strip()}),
                thought=as_text(data.get("thought")).strip(),
            )
        ]
    # OpenHands V0.
    if is_v0(data) and isinstance(data.get("action"), str):
        return [_v0_call(event, data)]
    given = _given_call(event, data)
    if given is not None:
        return [given]
    return [Call(id="", name=event.type or "tool", arguments=dumps({"input": event.text}))]


def _given_call(event: CanonicalEvent, data: dict) -> Call | None:
    """Claude Code (input), Codex CLI, Gemini CLI and ATIF (arguments): the tool and its
    arguments as the model gave them, under the call's own id."""
    tool = text_of(data.get("tool"))
    arguments = next(
        (data[k] for k in ("arguments", "input") if isinstance(data.get(k), dict)), None
    )
    if not tool or arguments is None:
        return None
    call_id = text_of(data.get("tool_call_id")) or event.original_id
    return Call(id=call_id, name=tool, arguments=dumps(arguments))


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return dumps(arguments if arguments is not None else {})


def _v0_call(event: CanonicalEvent, data: dict) -> Call:
    args = v0_fields(data, "args")
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
    return Call(id="", name=V0_TOOLS.get(action, action), arguments=dumps(fields), thought=thought)


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
    data = event_data(event)
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
        data = event_data(event)
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


def images_of(meta: dict) -> list | None:
    """The image list of the trajectory's metadata, or None when it has none."""
    metadata = obj if isinstance(obj := meta.get("metadata"), dict) else {}
    images = metadata.get("images")
    return images if isinstance(images, list) and images else None
