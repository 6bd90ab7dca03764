"""Cards for SWE-agent steps (action, observation, thought), an editor command as an edit."""

from __future__ import annotations

import shlex
from typing import Any

from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.base import (
    action_head,
    observation_head,
)
from apps.trajectories.rendering.presenters.tool_calls import EDIT_COMMANDS, tool_call
from apps.trajectories.rendering.values import as_str, parse_json_string

SWE_EDITOR_FLAGS = {"--old_str", "--new_str", "--file_text", "--insert_line", "--view_range"}


def swe_editor_call(action: str, open_file: str = "") -> dict[str, Any] | None:
    """`str_replace_editor str_replace /p --old_str 'a' --new_str 'b'` as the tool's arguments
    ({"command", "path", "old_str", ...}), or None when the action is another command. The
    windowed tools' `edit 'search' 'replace'` and `insert 'text'` edit the open file."""
    if not action.startswith(("str_replace_editor ", "edit ", "insert ")):
        return None
    try:
        words = shlex.split(action)
    except ValueError:
        return None
    if words[0] in ("edit", "insert"):
        if not open_file:
            return None
        if words[0] == "edit" and len(words) == 3:
            return {
                "command": "str_replace",
                "path": open_file,
                "old_str": words[1],
                "new_str": words[2],
            }
        if words[0] == "insert" and len(words) == 2:
            return {"command": "insert", "path": open_file, "new_str": words[1]}
        return None
    if len(words) < 3 or words[1] not in EDIT_COMMANDS:
        return None
    args: dict[str, Any] = {"command": words[1], "path": words[2]}
    rest = words[3:]
    while rest:
        flag = rest.pop(0)
        if flag not in SWE_EDITOR_FLAGS or not rest:
            return None
        value = rest.pop(0)
        if flag == "--view_range":
            numbers = [value, *rest[:1]]
            rest = rest[1:]
            args["view_range"] = numbers
        else:
            args[flag[2:]] = value
    return args


def present_swe_step(b: CardBuilder) -> None:
    data = b.data
    state = data.get("state")
    state = parse_json_string(state.strip()) if isinstance(state, str) else state
    if b.card.kind == "observation" or ("observation" in data and "action" not in data):
        observation_head(b, "Observation")
        if isinstance(state, dict) and state.get("working_dir"):
            b.badge(f"in {as_str(state.get('working_dir'))}")
        if isinstance(state, dict) and state.get("open_file") not in (None, "", "n/a"):
            b.badge(f"open: {as_str(state.get('open_file'))}")
        output = as_str(data.get("observation"))
        b.output(output)
        if not output.strip():
            b.note("(no output)")
        return
    action = as_str(data.get("action")).rstrip("\n")
    open_file = as_str(state.get("open_file")) if isinstance(state, dict) else ""
    edit = swe_editor_call(action, "" if open_file in ("", "n/a") else open_file)
    if edit is not None:
        # SWE-agent's editor tool, written as a command line: shown as OpenHands' edit card.
        b.markdown(as_str(data.get("thought") or data.get("response")))
        tool_call(b, "str_replace_editor", edit)
    else:
        action_head(b, "Action", "command")
        b.markdown(as_str(data.get("thought") or data.get("response")))
        b.code(action, language="bash")
    elapsed = data.get("execution_time")
    if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool):
        b.badge(f"{elapsed:.2f}s")
