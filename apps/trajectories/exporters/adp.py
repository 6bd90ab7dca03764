"""The adp export: an ADP standardized trajectory (neulab/agent-data-protocol, schema 1.3.1).

`{schema_version, id, content[], details}`, checked by adp_schema.py (written from the
published schema). What each event becomes:
- a user message -> `text_observation` (source "user"); an agent message -> `message_action`;
  thinking -> the `reasoning_content` of the action after it (or of an empty message_action
  when no action follows);
- each tool call of an agent action -> an `api_action` (the tool's name and arguments, the
  thought as `description`), with a `tool_call_id`; its result -> a `text_observation` (source
  "environment", named "error" when the call failed) with the same id. ADP ties every call to exactly one result, and ties an
  observation that directly follows a call to it: a call that got no result gets an empty one
  named "no_result" right after it (the importer leaves it out again), and an observation that
  answers nothing waits until the call before it has its result;
- system events (the system prompt, context, compaction summaries) -> a `text_observation`
  named "system"; other environment observations -> `text_observation`s; environment
  messages -> `text_observation`s named "message";
- events that came from ADP give back their own item (a `code_action` stays one).
Actions not taken by the agent are left out, as the other training exports leave them out, and
so is a subagent's run (Claude Code's Task): another agent's steps, which this agent never saw
but as its call's result; ADP has no nesting to hold them.
`details` holds the title, agent, model, source format and the run's result as text (ADP's
older releases take only text there). Pure Python, no Django.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from apps.trajectories.exporters.adp_schema import FIELDS
from apps.trajectories.exporters.common import Call, calls_of, dumps, event_data, parse_json_object
from apps.trajectories.importers.adp import ACTIONS, CLASSES, ERROR_NAME, NO_RESULT, SYSTEM_NAME
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.outcome import run_outcome

SCHEMA_VERSION = "1.3.1"
CALLS = {"api_action", "code_action"}


class _Writer:
    def __init__(self, answered: Counter[str]) -> None:
        self.content: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []  # observations waiting for a call's result
        self.reasoning: list[str] = []
        self.answered = answered  # action event id -> how many observations answer it
        self.ids: set[str] = set()
        self.open: dict[str, list[str]] = {}  # action event id -> its calls' ids, unanswered

    def emit(self, item: dict[str, Any]) -> None:
        last = self.content[-1] if self.content else None
        is_observation = item["class_"] not in ACTIONS
        if is_observation and "tool_call_id" not in item and last and last["class_"] in CALLS:
            self.held.append(item)
            return
        self.content.append(item)
        if is_observation and "tool_call_id" in item and self.held:
            self.content.extend(self.held)
            self.held.clear()

    def action(self, item: dict[str, Any]) -> None:
        if self.reasoning and not item.get("reasoning_content"):
            item["reasoning_content"] = "\n\n".join(self.reasoning)
        self.reasoning.clear()
        self.emit(item)

    def flush_reasoning(self) -> None:
        if self.reasoning:
            self.action({"class_": "message_action", "content": "", "description": None})

    def call_id(self, wanted: str, event: CanonicalEvent, number: int) -> str:
        ident = wanted or f"call_{event.original_id}" + (f"_{number}" if number else "")
        while ident in self.ids:
            ident += "_"
        self.ids.add(ident)
        return ident


def to_adp(events: list[CanonicalEvent], meta: dict) -> dict:
    answered = Counter(
        event.cause for event in events if event.kind == "observation" and event.cause
    )
    writer = _Writer(answered)
    for event in events:
        if "subagent" in event_data(event):
            continue  # another agent's run, not what this agent saw
        if event.kind == "message" and event.source == "agent" and event.type == "thinking":
            writer.reasoning.append(event.text)
        elif event.kind == "action":
            if event.source == "agent":
                _action(writer, event)
        else:
            writer.flush_reasoning()
            _other(writer, event)
    writer.flush_reasoning()
    writer.content.extend(writer.held)
    return {
        "schema_version": SCHEMA_VERSION,
        "id": str(meta.get("id") or ""),
        "content": writer.content,
        "details": _details(meta),
    }


def _adp_item(event: CanonicalEvent) -> dict[str, Any] | None:
    data = event_data(event)
    kind = data.get("class_")
    if kind in CLASSES:
        # Only the item's own fields (not what the importer added, such as is_error).
        fields = FIELDS[kind]
        return {key: value for key, value in data.items() if key == "class_" or key in fields}
    return None


def _action(writer: _Writer, event: CanonicalEvent) -> None:
    own = _adp_item(event)
    if own is not None and own["class_"] in CALLS:
        calls = [(own, own.get("tool_call_id") or "")]
    else:
        calls = [(_api_action(call), call.id) for call in calls_of(event)]
    ids = []
    for number, (item, wanted) in enumerate(calls):
        item["tool_call_id"] = writer.call_id(wanted, event, number)
        ids.append(item["tool_call_id"])
        writer.action(item)
        if number >= writer.answered[event.original_id]:
            # No result will come for it (ADP wants one per call, right here).
            writer.emit(_no_result(item["tool_call_id"]))
            ids.pop()
    if ids:
        writer.open[event.original_id] = ids


def _api_action(call: Call) -> dict[str, Any]:
    arguments = parse_json_object(call.arguments)
    kwargs = arguments if arguments is not None else {"arguments": call.arguments}
    return {
        "class_": "api_action",
        "function": call.name,
        "kwargs": kwargs,
        "description": call.thought or None,
    }


def _no_result(call_id: str) -> dict[str, Any]:
    return {
        "class_": "text_observation",
        "content": "",
        "name": NO_RESULT,
        "source": "environment",
        "tool_call_id": call_id,
    }


def _other(writer: _Writer, event: CanonicalEvent) -> None:
    own = _adp_item(event)
    if event.kind == "observation" and event.cause in writer.open and writer.open[event.cause]:
        call_id = writer.open[event.cause].pop(0)
        item = own if own is not None and own["class_"] != "message_action" else None
        if item is None:
            name = ERROR_NAME if event_data(event).get("is_error") is True else None
            item = {"class_": "text_observation", "content": event.text, "name": name}
            item["source"] = "environment"
        item["tool_call_id"] = call_id
        writer.emit(item)
        return
    if own is not None and "tool_call_id" not in own:
        (writer.action if own["class_"] in ACTIONS else writer.emit)(own)
        return
    if event.kind == "system":
        source = event.source if event.source in ("agent", "environment") else "user"
        writer.emit(_text(event.text, source, SYSTEM_NAME))
    elif event.kind == "message" and event.source == "agent":
        writer.action({"class_": "message_action", "content": event.text, "description": None})
    elif event.kind == "message" and event.source == "user":
        writer.emit(_text(event.text, "user", None))
    elif event.kind == "message":
        writer.emit(_text(event.text, "environment", "message"))
    else:
        writer.emit(_text(event.text, "environment", None))


def _text(content: str, source: str, name: str | None) -> dict[str, Any]:
    return {"class_": "text_observation", "content": content, "name": name, "source": source}


def _details(meta: dict) -> dict[str, str]:
    details: dict[str, str] = {}
    for key in ("title", "agent", "model", "agent_version", "source_format", "url"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            details[key] = value
    result = run_outcome(meta.get("metadata"))
    if result:
        details["result"] = dumps(result.as_dict())
    return details
