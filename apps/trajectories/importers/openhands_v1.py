"""OpenHands V1 (software-agent-sdk) events: objects with a `kind` (shared/OPENHANDS.md 2.6).

Accepted as a bare list, as {"history": [...]} / {"events": [...]}, or as an evaluation row of
OpenHands/benchmarks whose history holds them. Action and observation kinds are mapped onto the
V0 vocabulary (ExecuteBashAction -> run, FileEditorAction -> edit, ...) so that V0 and V1
trajectories read, search and export alike; the V1 kind stays in `data`.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from apps.trajectories.importers import openhands_eval
from apps.trajectories.importers.base import (
    SOURCES,
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    join_text,
    json_type,
    mostly,
    parse_timestamp,
    text_of,
    title_from,
)

NAME = "openhands_v1"
LABEL = "OpenHands V1 (agent SDK) events"

EVENT_KINDS = {
    "ActionEvent",
    "ObservationEvent",
    "MessageEvent",
    "SystemPromptEvent",
    "AgentErrorEvent",
    "UserRejectObservation",
    "PauseEvent",
    "InterruptEvent",
    "Condensation",
    "CondensationEvent",
    "CondensationRequest",
    "CondensationRequestEvent",
    "CondensationSummaryEvent",
    "ConversationStateUpdateEvent",
    "ConversationErrorEvent",
    "TokenEvent",
}

ACTION_TYPES = {
    "ExecuteBashAction": "run",
    "TerminalAction": "run",
    "BashAction": "run",
    "FileEditorAction": "edit",
    "StrReplaceEditorAction": "edit",
    "PlanningFileEditorAction": "edit",
    "FinishAction": "finish",
    "ThinkAction": "think",
    "MCPToolAction": "call_tool_mcp",
    "MCPAction": "call_tool_mcp",
    "TaskTrackerAction": "task_tracking",
    "BrowserNavigateAction": "browse",
    "DelegateAction": "delegate",
}
OBSERVATION_TYPES = {
    "ExecuteBashObservation": "run",
    "TerminalObservation": "run",
    "BashObservation": "run",
    "FileEditorObservation": "edit",
    "StrReplaceEditorObservation": "edit",
    "PlanningFileEditorObservation": "edit",
    "FinishObservation": "finish",
    "ThinkObservation": "think",
    "MCPToolObservation": "mcp",
    "MCPObservation": "mcp",
    "TaskTrackerObservation": "task_tracking",
    "DelegateObservation": "delegate",
}
# Events that are not part of the conversation the agent had: state, control, bookkeeping.
SYSTEM_TYPES = {
    "PauseEvent": "pause",
    "InterruptEvent": "interrupt",
    "Condensation": "condensation",
    "CondensationEvent": "condensation",
    "CondensationRequest": "condensation_request",
    "CondensationRequestEvent": "condensation_request",
    "CondensationSummaryEvent": "condensation_summary",
    "ConversationStateUpdateEvent": "state_update",
    "ConversationErrorEvent": "error",
    "TokenEvent": "tokens",
}


def is_event(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("kind")
    if not isinstance(kind, str):
        return False
    return kind in EVENT_KINDS or (
        kind.endswith(("Event", "Observation")) and ("source" in item or "id" in item)
    )


def events_of(doc: Any) -> list | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in ("history", "events"):
            if isinstance(doc.get(key), list):
                return doc[key]
    return None


def detect(doc: Any) -> bool:
    events = events_of(doc)
    if not events:
        return False
    return mostly(events, is_event, sample=50)


def convert(doc: Any) -> CanonicalTrajectory:
    items = events_of(doc)
    if items is None:
        raise FormatError(
            f'expected an array of OpenHands V1 events (or {{"history": [...]}}), '
            f"got {json_type(doc)}"
        )
    action_ids: dict[str, str] = {}  # tool_call_id -> the ActionEvent's id
    events: list[CanonicalEvent] = []
    trajectory = CanonicalTrajectory(source_format=NAME, events=events, agent="OpenHands")
    for index, item in enumerate(items):
        where = f"event {index}"
        if not isinstance(item, dict):
            raise FormatError(f"event is {json_type(item)}, not an object", where)
        kind = item.get("kind")
        if not isinstance(kind, str) or not kind:
            raise FormatError("event has no 'kind'", where)
        event = convert_event(item, kind, where, action_ids)
        if event.kind == "action" and isinstance(item.get("tool_call_id"), str):
            action_ids[item["tool_call_id"]] = event.original_id
        events.append(event)
        if kind == "ConversationStateUpdateEvent":
            read_state(trajectory, item)
    types = {event.original_id: event.type for event in events if event.kind == "action"}
    for event in events:
        if (
            event.kind == "observation"
            and event.type == "edit"
            and types.get(event.cause) == "read"
        ):
            event.type = "read"
    if isinstance(doc, dict) and doc.get("history") is items:
        openhands_eval.apply_row(trajectory, doc)
        trajectory.source_format = NAME
    if not trajectory.title:
        for event in events:
            if event.source == "user" and event.kind == "message" and event.text:
                trajectory.title = title_from(event.text)
                break
    return trajectory


def convert_event(item: dict, kind: str, where: str, action_ids: dict[str, str]) -> CanonicalEvent:
    original_id = item.get("id")
    source = item.get("source") if item.get("source") in SOURCES else ""
    common: dict[str, Any] = {
        "original_id": "" if original_id is None else str(original_id),
        "timestamp": parse_timestamp(item.get("timestamp")),
        "data": item,
    }
    if kind == "ActionEvent":
        action = _object(item, "action", where)
        action_kind = text_of(action.get("kind"))
        action_type = ACTION_TYPES.get(action_kind) or _type_of(action_kind, "Action", item)
        if action_type == "edit" and action.get("command") == "view":
            action_type = "read"  # the file editor's view reads, as V0's read action did
        return CanonicalEvent(
            source=source or "agent",
            kind="action",
            type=action_type,
            text=join_text(thought_text(item), action_summary(action, item)),
            **common,
        )
    if kind == "ObservationEvent":
        observation = _object(item, "observation", where)
        observation_kind = text_of(observation.get("kind"))
        return CanonicalEvent(
            source=source or "environment",
            kind="observation",
            type=OBSERVATION_TYPES.get(observation_kind)
            or _type_of(observation_kind, "Observation", item),
            text=observation_summary(observation),
            cause=_cause(item, action_ids),
            **common,
        )
    if kind == "MessageEvent":
        message = _object(item, "llm_message", where)
        role = text_of(message.get("role"))
        text = join_text(as_text(message.get("content")), as_text(item.get("extended_content")))
        return CanonicalEvent(
            source=source or ("agent" if role == "assistant" else "user"),
            kind="system" if role == "system" else "message",
            type="system" if role == "system" else "message",
            text=text,
            **common,
        )
    if kind == "SystemPromptEvent":
        return CanonicalEvent(
            source=source or "agent",
            kind="system",
            type="system",
            text=join_text(
                as_text(item.get("system_prompt")), as_text(item.get("dynamic_context"))
            ),
            **common,
        )
    if kind == "AgentErrorEvent":
        return CanonicalEvent(
            source=source or "agent",
            kind="observation",
            type="error",
            text=text_of(item.get("error")),
            cause=_cause(item, action_ids),
            **common,
        )
    if kind == "UserRejectObservation":
        return CanonicalEvent(
            source=source or "environment",
            kind="observation",
            type="user_rejected",
            text=text_of(item.get("rejection_reason")) or "User rejected the action",
            cause=_cause(item, action_ids),
            **common,
        )
    return CanonicalEvent(
        source=source or ("user" if kind in ("PauseEvent", "InterruptEvent") else "environment"),
        kind="system",
        type=SYSTEM_TYPES.get(kind) or _type_of(kind, "Event", item),
        text=system_text(kind, item),
        **common,
    )


def _object(item: dict, key: str, where: str) -> dict:
    value = item.get(key)
    if not isinstance(value, dict):
        raise FormatError(f"'{key}' is {json_type(value)}, expected an object", where)
    return value


def _cause(item: dict, action_ids: dict[str, str]) -> str:
    action_id = item.get("action_id")
    if isinstance(action_id, (str, int)) and not isinstance(action_id, bool):
        return str(action_id)
    tool_call_id = item.get("tool_call_id")
    if isinstance(tool_call_id, str):
        return action_ids.get(tool_call_id, "")
    return ""


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _type_of(kind: str, suffix: str, item: dict) -> str:
    """`BrowserClickAction` -> browse_interactive; other kinds -> snake_case without suffix."""
    if kind.startswith("Browser"):
        return "browse" if suffix == "Observation" else "browse_interactive"
    base = kind[: -len(suffix)] if kind.endswith(suffix) else kind
    if not base:
        return text_of(item.get("tool_name")) or suffix.lower()
    return _CAMEL.sub("_", base).lower()


def thought_text(item: dict) -> str:
    return as_text(item.get("thought"))


def action_summary(action: dict, item: dict) -> str:
    kind = text_of(action.get("kind"))
    if "command" in action and kind in ("ExecuteBashAction", "TerminalAction", "BashAction"):
        return as_text(action.get("command"))
    if kind in ("FileEditorAction", "StrReplaceEditorAction", "PlanningFileEditorAction"):
        head = " ".join(
            part for part in (text_of(action.get("command")), text_of(action.get("path"))) if part
        )
        body = as_text(action.get("new_str")) or as_text(action.get("file_text"))
        return "\n".join(part for part in (head, body) if part)
    if kind == "FinishAction":
        return as_text(action.get("message"))
    if kind == "ThinkAction":
        return as_text(action.get("thought"))
    for key in ("command", "url", "code", "message", "text", "query"):
        if isinstance(action.get(key), str) and action[key]:
            return action[key]
    tool_call = item.get("tool_call")
    if isinstance(tool_call, dict) and isinstance(tool_call.get("arguments"), str):
        name = text_of(tool_call.get("name"))
        return " ".join(part for part in (name, tool_call["arguments"]) if part)
    fields = {key: value for key, value in action.items() if key != "kind"}
    return orjson.dumps(fields).decode() if fields else ""


def observation_summary(observation: dict) -> str:
    text = ""
    for key in ("content", "output", "text", "message", "error", "result"):
        value = observation.get(key)
        if isinstance(value, (str, list)):
            text = as_text(value)
            if text:
                break
    if observation.get("screenshot_data"):
        text = join_text(text, "[image]")
    return text


def system_text(kind: str, item: dict) -> str:
    if kind in ("Condensation", "CondensationEvent"):
        summary = text_of(item.get("summary"))
        forgotten = item.get("forgotten_event_ids")
        if summary:
            return summary
        if isinstance(forgotten, list):
            return f"Forgetting {len(forgotten)} events"
        return ""
    if kind == "CondensationSummaryEvent":
        return text_of(item.get("summary"))
    if kind in ("CondensationRequest", "CondensationRequestEvent"):
        return "Condensation of the conversation history requested"
    if kind == "PauseEvent":
        return "Conversation paused"
    if kind == "InterruptEvent":
        return text_of(item.get("reason")) or "Conversation interrupted"
    if kind == "ConversationErrorEvent":
        return ": ".join(
            part for part in (text_of(item.get("code")), text_of(item.get("detail"))) if part
        )
    if kind == "ConversationStateUpdateEvent":
        key = text_of(item.get("key"))
        value = item.get("value")
        if key == "full_state":
            return "Conversation state"
        if isinstance(value, (str, int, float, bool)) or value is None:
            return f"{key}: {value}" if key else ""
        return f"{key} updated" if key else ""
    return ""


def read_state(trajectory: CanonicalTrajectory, item: dict) -> None:
    """A full-state snapshot names the agent's model."""
    if item.get("key") != "full_state" or not isinstance(item.get("value"), dict):
        return
    agent = item["value"].get("agent")
    if isinstance(agent, dict):
        llm = agent.get("llm")
        if isinstance(llm, dict) and not trajectory.model:
            trajectory.model = text_of(llm.get("model"))
