"""What anchors feedback to a step, and what a correction of a step's action starts from.

A step's fingerprint is a digest of what a reader judged: its source, kind, type and text. A
re-import that renders the same step the same way keeps it; one that changes what the step says
(another command, a new observation) does not, and the feedback given on it becomes outdated.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from django.db.models import Q

# Keys of an action's arguments that hold what the agent did, in the order a reader would
# edit them: a command, code, a file's new text, a URL, browser actions, tool arguments.
ACTION_KEYS = (
    "command",
    "code",
    "new_str",
    "file_text",
    "content",
    "url",
    "browser_actions",
    "arguments",
    "query",
)
# An editor's sub-command, not what it writes: read past it to the new text.
EDITOR_COMMANDS = frozenset({"view", "create", "str_replace", "insert", "undo_edit", "write"})


def fingerprint(event: Any) -> str:
    """32 hex characters naming the step's content (not its ids or timestamps)."""
    body = orjson.dumps([event.source, event.kind, event.type, event.text or ""])
    return hashlib.blake2b(body, digest_size=16).hexdigest()


AGENT_KINDS = ("action", "message")


def is_agent_step(event: Any) -> bool:
    """Only the agent's own steps (its actions and messages, not the observations some formats
    also file under the agent) can be "where it went wrong" or corrected."""
    return event.source == "agent" and event.kind in AGENT_KINDS


def agent_step_q() -> Q:
    """is_agent_step as a filter on events."""
    return Q(source="agent", kind__in=AGENT_KINDS)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _tool_arguments(data: dict[str, Any]) -> str:
    """A tool call's arguments (OpenHands' tool_call_metadata, OpenAI-style tool_calls)."""
    metadata = data.get("tool_call_metadata")
    if isinstance(metadata, dict):
        response = metadata.get("model_response")
        choices = response.get("choices") if isinstance(response, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            calls = (choices[0].get("message") or {}).get("tool_calls")
            if isinstance(calls, list) and calls and isinstance(calls[0], dict):
                return _as_text((calls[0].get("function") or {}).get("arguments"))
    calls = data.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        return _as_text((calls[0].get("function") or {}).get("arguments"))
    return ""


def action_text(event: Any) -> str:
    """The part of an agent step a correction edits in place: the command, the code, the
    tool call's arguments; the step's text when it has none of them. Unredacted: the caller
    redacts it (a correction always starts from the redacted step)."""
    data = event.data if isinstance(event.data, dict) else {}
    for holder in (data.get("args"), data.get("action"), data):
        if isinstance(holder, dict):
            for key in ACTION_KEYS:
                value = holder.get(key)
                if value in (None, "", [], {}):
                    continue
                if key == "command" and value in EDITOR_COMMANDS:
                    continue
                return _as_text(value)
    return _tool_arguments(data) or (event.text or "")
