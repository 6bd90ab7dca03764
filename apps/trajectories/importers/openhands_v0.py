"""OpenHands V0 trajectory export: a bare JSON array of events, or {"trajectory": [...]}.

Action events carry `action` + `args`, observations `observation` + `content` + `extras`
(see shared/OPENHANDS.md 2.2-2.4). The whole original event is kept in `data`.
"""

from __future__ import annotations

from typing import Any

from apps.trajectories.importers.base import (
    SOURCES,
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    json_type,
    parse_timestamp,
)

NAME = "openhands_v0"
LABEL = "OpenHands event array"

# Actions that are conversation messages or the system prompt rather than tool calls.
MESSAGE_ACTIONS = {"message"}
SYSTEM_ACTIONS = {"system", "initialize"}


def is_event(item: Any) -> bool:
    return isinstance(item, dict) and (
        isinstance(item.get("action"), str) or isinstance(item.get("observation"), str)
    )


def events_of(doc: Any) -> list | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("trajectory"), list):
        return doc["trajectory"]
    return None


def detect(doc: Any) -> bool:
    events = events_of(doc)
    if not events:
        return False
    sample = events[:50]
    return sum(1 for item in sample if is_event(item)) * 2 >= len(sample)


def convert(doc: Any) -> CanonicalTrajectory:
    events = events_of(doc)
    if events is None:
        raise FormatError("expected a JSON array of OpenHands events or {\"trajectory\": [...]}")
    return build_trajectory(events, source_format=NAME)


def build_trajectory(
    items: list, *, source_format: str, skip_non_events: bool = False
) -> CanonicalTrajectory:
    """Canonical trajectory from a list of V0 event dicts (shared with the share-payload importer)."""
    canonical: list[CanonicalEvent] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            if skip_non_events:
                continue
            raise FormatError(f"event is {json_type(item)}, not an object", f"event {index}")
        if not is_event(item):
            if skip_non_events:
                continue
            raise FormatError("event has neither 'action' nor 'observation'", f"event {index}")
        canonical.append(convert_event(item, index))
    trajectory = CanonicalTrajectory(source_format=source_format, events=canonical)
    fill_metadata(trajectory, [item for item in items if is_event(item)])
    return trajectory


def _args(item: dict, key: str, where: str) -> dict:
    value = item.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FormatError(f"'{key}' is {json_type(value)}, expected an object", where)
    return value


def convert_event(item: dict, index: int) -> CanonicalEvent:
    where = f"event {index}"
    original_id = item.get("id")
    source = item.get("source") if item.get("source") in SOURCES else ""
    cause = item.get("cause")
    common = {
        "original_id": "" if original_id is None else str(original_id),
        "timestamp": parse_timestamp(item.get("timestamp")),
        "cause": "" if cause is None else str(cause),
        "data": item,
    }
    if isinstance(item.get("action"), str):
        action = item["action"]
        args = _args(item, "args", where)
        if action in MESSAGE_ACTIONS:
            kind = "message"
        elif action in SYSTEM_ACTIONS:
            kind = "system"
        else:
            kind = "action"
        return CanonicalEvent(
            source=source or ("user" if action == "message" else "agent"),
            kind=kind,
            type=action,
            text=action_text(action, args, item),
            **common,
        )
    observation = item["observation"]
    extras = _args(item, "extras", where)
    return CanonicalEvent(
        source=source or "environment",
        kind="observation",
        type=observation,
        text=observation_text(observation, item, extras),
        **common,
    )


def action_text(action: str, args: dict, item: dict) -> str:
    thought = as_text(args.get("thought"))
    if action in ("message", "system"):
        primary = as_text(args.get("content")) or as_text(item.get("message"))
    elif action == "run":
        primary = as_text(args.get("command"))
    elif action == "run_ipython":
        primary = as_text(args.get("code"))
    elif action in ("read", "write", "edit"):
        body = (
            args.get("new_str")
            or args.get("file_text")
            or args.get("content")
            or args.get("command")
            or ""
        )
        primary = "\n".join(part for part in (as_text(args.get("path")), as_text(body)) if part)
    elif action == "browse":
        primary = as_text(args.get("url"))
    elif action == "browse_interactive":
        primary = as_text(args.get("browser_actions"))
    elif action == "finish":
        primary = as_text(args.get("final_thought")) or as_text(args.get("outputs") or "")
    elif action == "think":
        return thought or as_text(item.get("message"))
    else:
        primary = as_text(item.get("message"))
    return "\n\n".join(part for part in (thought, primary) if part)


def observation_text(observation: str, item: dict, extras: dict) -> str:
    content = as_text(item.get("content"))
    if content:
        return content
    if observation == "agent_state_changed":
        return f"Agent state: {extras.get('agent_state', '')}".strip()
    return as_text(item.get("message"))


def fill_metadata(trajectory: CanonicalTrajectory, items: list[dict]) -> None:
    """Agent, version, model, title and totals from the events that carry them."""
    for item in items:
        args = item.get("args") if isinstance(item.get("args"), dict) else {}
        if item.get("action") == "system":
            trajectory.agent = trajectory.agent or as_text(args.get("agent_class"))
            trajectory.agent_version = trajectory.agent_version or as_text(
                args.get("openhands_version")
            )
        if item.get("action") == "initialize":
            trajectory.agent = trajectory.agent or as_text(args.get("AGENT"))
            trajectory.model = trajectory.model or as_text(args.get("LLM_MODEL"))
        if not trajectory.model:
            trajectory.model = model_of(item)
        if not trajectory.title and item.get("action") == "message" and item.get("source") == "user":
            trajectory.title = title_from(as_text(args.get("content")) or as_text(item.get("message")))
    for item in reversed(items):
        metrics = item.get("llm_metrics")
        if isinstance(metrics, dict):
            usage = metrics.get("accumulated_token_usage")
            if isinstance(usage, dict):
                tokens = sum(
                    value
                    for key in ("prompt_tokens", "completion_tokens")
                    if isinstance(value := usage.get(key), int)
                )
                trajectory.metadata.setdefault("total_tokens", tokens)
            cost = metrics.get("accumulated_cost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool):
                trajectory.metadata.setdefault("total_cost", float(cost))
            break
    if trajectory.agent_version:
        trajectory.metadata.setdefault("openhands_version", trajectory.agent_version)
    if trajectory.agent_version and not trajectory.agent:
        trajectory.agent = "OpenHands"
    if not trajectory.agent:
        trajectory.agent = "OpenHands"


def model_of(item: dict) -> str:
    metrics = item.get("llm_metrics")
    if isinstance(metrics, dict):
        usage = metrics.get("accumulated_token_usage")
        if isinstance(usage, dict) and isinstance(usage.get("model"), str) and usage["model"]:
            return usage["model"]
    meta = item.get("tool_call_metadata")
    if isinstance(meta, dict):
        response = meta.get("model_response")
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            return response["model"]
    return ""


def title_from(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
