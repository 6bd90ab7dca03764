"""The sharegpt export: {"conversations": [{from, value}], "system"?, "tools"?} for LLaMA-Factory.

Its loader drops any conversation that does not alternate human|observation with
gpt|function_call and end on the latter. ShareGPT cannot give a tool call a thought, nor hold an
agent message right before a tool call: those texts are dropped there (the openai export keeps
them).
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.exporters.common import (
    Conversation,
    conversation,
    dumps,
    images_of,
    parse_json_object,
    tool_definitions,
)
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.outcome import run_outcome

INPUT_SIDE = {"human", "observation"}


def to_sharegpt(events: list[CanonicalEvent], meta: dict, talk: Conversation | None = None) -> dict:
    """`talk`: conversation(events) when the caller has it already (the release build makes
    one for both this and the other chat format)."""
    talk = talk if talk is not None else conversation(events)
    turns: list[dict] = []
    for turn in talk.turns:
        if turn.role == "user":
            role, value = "human", turn.text
        elif turn.role == "assistant":
            role, value = "gpt", turn.text
        elif turn.role == "calls":
            calls = [
                {"name": call.name, "arguments": parse_json_object(call.arguments) or {}}
                for call in turn.calls
            ]
            role, value = "function_call", dumps(calls[0] if len(calls) == 1 else calls)
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
        payload["tools"] = dumps([tool["function"] for tool in tools])
    images = images_of(meta)
    if images:
        payload["images"] = images
    result = run_outcome(meta.get("metadata"))
    if result:
        # The run's outcome (final patch, resolved, instance): a key the trainers' loaders
        # ignore, so the file stays loadable and the patch is not lost.
        payload["result"] = result.as_dict()
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
        last["value"] = dumps(merged)
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
