"""Event presenters: one module per format, mirroring `importers/`, and the registry that
picks one. `shape_of(data)` recognises the format from an event's own fields (so a new
importer's events show their fields even before they get a card of their own); `PRESENTERS`
maps each shape to the function that fills a CardBuilder. `base` holds what several share.
"""

from __future__ import annotations

import re
from typing import Any

from apps.trajectories.rendering.presenters import (
    agent_sessions,
    base,
    openai_messages,
    openhands_v0,
    openhands_v1,
    sharegpt,
    sweagent,
)
from apps.trajectories.rendering.presenters.openhands_v0_observations import OBSERVATIONS

_NAME = re.compile(r"^[a-z][a-z_]*$")
SWE_STEP_KEYS = {"response", "execution_time", "state", "query", "extra_info"}


def shape_of(data: dict[str, Any], type_: str = "") -> str:
    """Which presenter fits this event's data (and type, for events with no fields of their
    own): openhands | v1 | session | chat | sharegpt | swe | generic."""
    action, observation = data.get("action"), data.get("observation")
    if isinstance(action, str) and _NAME.match(action) and not (SWE_STEP_KEYS & data.keys()):
        if "args" in data or action in openhands_v0.ACTIONS:
            return "openhands"
    if isinstance(observation, str) and _NAME.match(observation) and "action" not in data:
        if "extras" in data or "cause" in data or observation in OBSERVATIONS:
            return "openhands"
    if isinstance(data.get("kind"), str) and (
        "action" in data
        or "observation" in data
        or "llm_message" in data
        or data["kind"].endswith(("Event", "Observation"))
    ):
        return "v1"
    if agent_sessions.is_session_event(data) or (not data and type_ in agent_sessions.TYPES):
        return "session"
    if isinstance(data.get("role"), str):
        return "chat"
    if "from" in data and "value" in data or set(data) == {"system"}:
        return "sharegpt"
    if isinstance(action, str) or isinstance(observation, str):
        return "swe"
    if type_ in ("thinking", "reasoning") or (
        set(data) <= {"step_id"} and type_ in agent_sessions.TYPES
    ):
        return "session"  # thinking of any format folds the same way
    return "generic"


PRESENTERS = {
    "openhands": openhands_v0.present,
    "v1": openhands_v1.present_v1,
    "session": agent_sessions.present_session,
    "chat": openai_messages.present_chat,
    "sharegpt": sharegpt.present_sharegpt,
    "swe": sweagent.present_swe_step,
    "generic": base.generic,
}
