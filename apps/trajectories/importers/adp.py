"""Agent Data Protocol (ADP) standardized trajectories (neulab/agent-data-protocol, schema/).

A file is a JSON array (or JSON Lines) of trajectories `{schema_version, id, content[],
details, available_apis?}`; `content` is a sequence of items told apart by `class_`:
- actions: `api_action` (`function`, `kwargs`, `description`), `code_action` (`language`,
  `content`, `description`), `message_action` (`content`, `description`); any of them may carry
  `reasoning_content`, `reward` and a `tool_call_id`;
- observations: `text_observation` (`content`, `source` user/agent/environment, `name`),
  `image_observation` (`content`: the image's path, `source`, `annotations`),
  `web_observation` (`html`, `axtree`, `url`, `image_observation`, `viewport_size`); any of
  them may carry `reward` and the `tool_call_id` of the action it answers.

Events: a user text -> a user message; an observation answering an action (its `tool_call_id`,
or right after it, as ADP's own link back-fill reads them) -> an environment observation caused
by it; other environment text -> an environment observation; `reasoning_content` -> a thinking
message before its action; `api_action` -> an action of the function's name, `code_action` ->
an action of its language (the `description` is the thought); `message_action` -> an agent
message. A text observation named "system" is a system event, one named "error" a failed call's result
(what TrajHub's own ADP export writes for what ADP has no place for). `details` and `id` go to the metadata (and the
title, agent and model when TrajHub's export wrote them there). ADP has no session id, times or
tokens. An item of a class newer than this importer is left out with a warning.

Pure Python, no Django.
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    join_text,
    json_type,
    mostly,
    small_value,
    text_of,
    title_from,
)
from apps.trajectories.importers.openai_messages import call_text

NAME = "adp"
LABEL = "ADP standardized trajectories"

ACTIONS = {"api_action", "code_action", "message_action"}
OBSERVATIONS = {"text_observation", "image_observation", "web_observation"}
CLASSES = ACTIONS | OBSERVATIONS
USER_SOURCES = {"user", "user_msg"}  # "user_msg" in the schema's older releases
SYSTEM_NAME = "system"
# TrajHub's export gives an action that had no result an empty one of this name: ADP links
# every call to one result, and would otherwise pair the call with the next observation.
NO_RESULT = "no_result"
# ...and names the result of a call that failed "error" (ADP has no error flag).
ERROR_NAME = "error"


def is_item(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("class_"), str)


def detect(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("content"), list)
        and isinstance(doc.get("id"), (str, int))
        and ("schema_version" in doc or "details" in doc or bool(doc["content"]))
        and mostly(doc["content"], lambda item: is_item(item) and item["class_"] in CLASSES)
    )


class _Reader:
    def __init__(self) -> None:
        self.events: list[CanonicalEvent] = []
        self.warnings: list[dict[str, str]] = []
        self.actions: dict[str, str] = {}  # tool_call_id -> the action event's id
        self.unanswered: list[str] = []  # actions (event ids) awaiting an observation

    def add(self, event: CanonicalEvent) -> None:
        self.events.append(event)


def convert(doc: Any) -> CanonicalTrajectory:
    if not isinstance(doc, dict):
        raise FormatError(f"expected an ADP trajectory (an object), got {json_type(doc)}")
    content = doc.get("content")
    if not isinstance(content, list):
        raise FormatError(f"'content' is {json_type(content)}, expected an array", "content")
    reader = _Reader()
    for index, item in enumerate(content):
        where = f"content[{index}]"
        if not is_item(item):
            raise FormatError(f"expected an item with a 'class_', got {json_type(item)}", where)
        kind = item["class_"]
        if kind in ACTIONS:
            _action(reader, item, index, where)
        elif kind in OBSERVATIONS:
            _observation(reader, item, index, where)
        else:
            reader.warnings.append(
                {"where": where, "message": f"left out: an item of unknown class {kind!r}"}
            )
    details = doc.get("details")
    details = details if isinstance(details, dict) else {}
    if doc.get("details") is not None and not isinstance(doc.get("details"), dict):
        raise FormatError(
            f"'details' is {json_type(doc['details'])}, expected an object", "details"
        )
    prompt = next((e.text for e in reader.events if e.source == "user" and e.kind == "message"), "")
    metadata: dict[str, Any] = {"id": str(doc["id"]) if doc.get("id") is not None else ""}
    if text_of(doc.get("schema_version")):
        metadata["schema_version"] = doc["schema_version"]
    kept = small_value(details, max_chars=20_000, depth=3)
    if kept:
        metadata["details"] = kept
    result = _result(details)
    if result:
        metadata.update(result)
    if isinstance(doc.get("available_apis"), list):
        metadata["available_apis"] = small_value(doc["available_apis"])
    return CanonicalTrajectory(
        source_format=NAME,
        events=reader.events,
        title=title_from(text_of(details.get("title")) or prompt),
        agent=text_of(details.get("agent")),
        model=text_of(details.get("model")),
        agent_version=text_of(details.get("agent_version")),
        metadata=metadata,
        warnings=reader.warnings,
    )


def _result(details: dict[str, Any]) -> dict[str, Any]:
    """The run's outcome TrajHub's export wrote into `details["result"]` (JSON text)."""
    raw = details.get("result")
    if not isinstance(raw, str):
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(value, dict):
        return {}
    kept = {
        "git_patch": value.get("patch"),
        "resolved": value.get("resolved"),
        "instance_id": value.get("instance_id"),
        "exit_status": value.get("exit_status"),
        "error": value.get("error"),
    }
    return {key: item for key, item in kept.items() if item not in (None, "")}


def _action(reader: _Reader, item: dict[str, Any], index: int, where: str) -> None:
    kind = item["class_"]
    reasoning = text_of(item.get("reasoning_content"))
    call_id = item.get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise FormatError(f"'tool_call_id' is {json_type(call_id)}, expected a string", where)
    ident = call_id or str(index)
    if ident in reader.actions or any(e.original_id == ident for e in reader.events):
        ident = f"{ident}#{index}"
    if reasoning.strip():
        reader.add(
            CanonicalEvent(
                "agent", "message", "thinking", reasoning, {"reasoning_of": index}, f"{index}.r"
            )
        )
    description = text_of(item.get("description"))
    if kind == "message_action":
        text = _string(item, "content", where)
        if text or not reasoning.strip():  # TrajHub's export: reasoning that preceded no action
            reader.add(CanonicalEvent("agent", "message", "message", text, item, ident))
        return
    if kind == "api_action":
        function = _string(item, "function", where)
        if not function:
            raise FormatError("an api_action without a 'function' name", where)
        kwargs = item.get("kwargs")
        if not isinstance(kwargs, dict):
            raise FormatError(f"'kwargs' is {json_type(kwargs)}, expected an object", where)
        text = join_text(description, call_text(function, orjson.dumps(kwargs).decode()))
        type_ = function
    else:
        code = _string(item, "content", where)
        type_ = _string(item, "language", where) or "code"
        text = join_text(description, code)
    reader.add(CanonicalEvent("agent", "action", type_, text, item, ident))
    if call_id:
        reader.actions[call_id] = ident
    reader.unanswered.append(ident)


def _observation(reader: _Reader, item: dict[str, Any], index: int, where: str) -> None:
    kind = item["class_"]
    call_id = item.get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise FormatError(f"'tool_call_id' is {json_type(call_id)}, expected a string", where)
    source = text_of(item.get("source")) or "environment"
    name = item.get("name")
    if kind == "web_observation":
        page = text_of(item.get("axtree")) or text_of(item.get("html"))
        text = join_text(text_of(item.get("url")), page)
    elif kind == "image_observation":
        text = join_text("[image]", _string(item, "content", where))
    else:
        text = _string(item, "content", where)
    cause = ""
    if call_id:
        cause = reader.actions.get(call_id, "")
        if not cause:
            raise FormatError(
                f"answers tool call {call_id!r}, which no action before it made", where
            )
    elif name != SYSTEM_NAME and reader.events:
        # ADP's own link back-fill: an observation right after an action answers it.
        previous = reader.events[-1]
        if previous.kind == "action" and previous.original_id in reader.unanswered:
            cause = previous.original_id
    if cause:
        if cause in reader.unanswered:
            reader.unanswered.remove(cause)
        if name == NO_RESULT and not text:
            return  # TrajHub's export: the action had no result (ADP wants one per call)
        action = next(e for e in reversed(reader.events) if e.original_id == cause)
        data = {**item, "is_error": True} if name == ERROR_NAME else item
        event = CanonicalEvent(
            "environment", "observation", action.type, text, data, str(index), None, cause
        )
    elif name == SYSTEM_NAME:
        origin = source if source in ("agent", "environment") else "user"
        event = CanonicalEvent(origin, "system", "system", text, item, str(index))
    elif name == "message":  # TrajHub's export of a message that is neither user's nor agent's
        event = CanonicalEvent("environment", "message", "message", text, item, str(index))
    elif source in USER_SOURCES:
        event = CanonicalEvent("user", "message", "message", text, item, str(index))
    elif source == "agent":
        event = CanonicalEvent("agent", "message", "message", text, item, str(index))
    else:
        event = CanonicalEvent("environment", "observation", kind, text, item, str(index))
    reader.add(event)


def _string(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(f"'{key}' is {json_type(value)}, expected a string", where)
    return value
