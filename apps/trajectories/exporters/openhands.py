"""The openhands export: a V0 event array (what OpenHands' own export and replay read).

Events that came from OpenHands V0 are reproduced from their original fields; events of other
formats are mapped onto id / timestamp / source / message / action|observation / args|extras /
content.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apps.trajectories.exporters.common import (
    calls_of,
    event_data,
    is_v0,
    parse_json_object,
    v0_fields,
)
from apps.trajectories.importers.base import CanonicalEvent, text_of

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


def _timestamp(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat()


def to_openhands(events: list[CanonicalEvent]) -> list[dict]:
    used: set[int] = set()
    for event in events:
        data = event_data(event)
        if is_v0(data) and isinstance(data.get("id"), int) and not isinstance(data["id"], bool):
            used.add(data["id"])
    ids: dict[str, int] = {}
    next_id = max(used) + 1 if used else 0
    out: list[dict] = []
    calls: dict[str, dict] = {}  # exported id -> args of mapped actions, for their observations
    for event in events:
        data = event_data(event)
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
        args = v0_fields(data, "args")
        return {k: v for k, v in data.items() if k not in args} | {"args": args}
    if isinstance(data.get("observation"), str) and "extras" not in data:
        extras = v0_fields(data, "extras")
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
    data = event_data(event)
    tools = data.get("tools")
    return tools if isinstance(tools, list) else []


def _v0_action(event: CanonicalEvent) -> tuple[str, dict]:
    call = calls_of(event)[0]
    arguments = parse_json_object(call.arguments) or {}
    data = event_data(event)
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
