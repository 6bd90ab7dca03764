"""Exports of canonical events: OpenHands event arrays, OpenAI messages, ShareGPT conversations,
ATIF trajectories.

Pure Python, no Django: `export_events(fmt, events, meta=...)` returns UTF-8 JSON bytes.
One module per format (openhands.py, openai.py, sharegpt.py, atif.py); what they share (the tool calls
an event holds, the conversation both training formats are written from) is in common.py.

- openhands: a V0 event array (what OpenHands' own export and replay read). Events that came
  from OpenHands V0 are reproduced from their original fields; events of other formats are
  mapped onto id / timestamp / source / message / action|observation / args|extras / content.
- openai: {"messages": [...], "tools"?: [...]} for TRL / Axolotl: a system message first, user
  and assistant messages, each agent action an assistant tool call and each observation that
  answers one a `tool` message with the call's id.
- sharegpt: {"conversations": [{from, value}], "system"?, "tools"?} for LLaMA-Factory, whose
  loader drops any conversation that does not alternate human|observation with
  gpt|function_call and end on the latter.
- atif: Harbor's Agent Trajectory Interchange Format (atif.py): steps with their tool calls,
  results, reasoning and metrics; subagents embedded.

The two training formats hold the conversation the agent had, not the bookkeeping around it:
system events after the first message (V1 state updates, condensations), actions not taken by
the agent (OpenHands' recall), observations that answer no exported tool call (agent state
changes, null observations) are left out. ShareGPT cannot give a tool call a thought, nor hold
an agent message right before a tool call: those texts are dropped there (the openai export
keeps them).

`meta` is the trajectory's own fields (title, agent, model, source_format, metadata, ...);
only `metadata["tools"]` (and `metadata["images"]`) are read, for formats whose tool
definitions and image paths live outside the events, and the run's result
(apps/trajectories/outcome.py: final patch, resolved, instance, cost), which the openai and
sharegpt exports carry as a top-level "result" (the openhands export is a bare event array).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import orjson

from apps.trajectories.exporters.atif import to_atif
from apps.trajectories.exporters.openai import to_openai
from apps.trajectories.exporters.openhands import to_openhands
from apps.trajectories.exporters.sharegpt import to_sharegpt
from apps.trajectories.importers.base import CanonicalEvent

__all__ = [
    "EXPORT_FORMATS",
    "export_events",
    "to_atif",
    "to_openai",
    "to_openhands",
    "to_sharegpt",
]

EXPORT_FORMATS = ("openhands", "openai", "sharegpt", "atif")


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
    elif fmt == "atif":
        payload = to_atif(events, meta)
    else:
        payload = to_sharegpt(events, meta)
    try:
        return orjson.dumps(payload)
    except TypeError:
        # orjson refuses integers beyond 64 bits, which JSON (and a sender) may well use;
        # the standard library writes them exactly.
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")
