"""OpenHands V0 trajectory export: a bare JSON array of events, or {"trajectory": [...]}.

Action events carry `action` + `args`, observations `observation` + `content` + `extras`
(shared/OPENHANDS.md 2.2-2.5). Older files use other field names (`images_urls`,
`is_confirmed`, extras `exit_code`) and the 2024 resolver wrote *flat* events with args/extras
inlined and no id; all of them read the same here. The whole original event is kept in `data`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from apps.trajectories.importers.base import (
    SOURCES,
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    join_text,
    json_type,
    link_causes,
    mostly,
    number,
    parse_timestamp,
    text_of,
    title_from,
)

NAME = "openhands_v0"
LABEL = "OpenHands event array"

# Actions that are conversation messages or the system prompt rather than tool calls.
MESSAGE_ACTIONS = {"message"}
SYSTEM_ACTIONS = {"system"}
# Keys of the event envelope; in flat legacy events everything else is an arg / an extra.
TOP_KEYS = {
    "id",
    "timestamp",
    "source",
    "message",
    "cause",
    "action",
    "observation",
    "content",
    "args",
    "extras",
    "timeout",
    "success",
    "tool_call_metadata",
    "llm_metrics",
}
ACTION_TOP_KEYS = TOP_KEYS - {"content"}
# The "model" OpenHands records in llm_metrics before it knows the configured one.
PLACEHOLDER_MODELS = {"", "default"}


def is_event(item: Any) -> bool:
    """An action (`action` is a string) or an observation (`observation` is), not both."""
    if not isinstance(item, dict) or "role" in item:  # chat messages (SWE-agent) have roles
        return False
    return isinstance(item.get("action"), str) != isinstance(item.get("observation"), str)


def is_init(item: Any) -> bool:
    """The pre-v0.12.1 websocket `initialize` message: settings (model, agent), not an event."""
    return isinstance(item, dict) and item.get("action") == "initialize"


def is_websocket_noise(item: Any) -> bool:
    """Items of the pre-v0.12.1 websocket list that are not events: {token, status},
    {error, message}, third-party {"user": ...} / {"step": 3}, the initialize message."""
    if not isinstance(item, dict) or (is_event(item) and not is_init(item)):
        return False
    keys = set(item)
    return (
        is_init(item)
        or "token" in keys
        or "status" in keys
        or ("error" in keys and keys <= {"error", "message", "id", "timestamp", "source"})
        or keys in ({"user"}, {"step"})
    )


def events_of(doc: Any) -> list | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("trajectory"), list):
        return doc["trajectory"]
    return None


def looks_like_events(items: list) -> bool:
    """Most of the first items are V0 events (actions or observations)."""
    return mostly(items, lambda i: is_event(i) or is_websocket_noise(i), sample=50) and any(
        is_event(item) for item in items[:50]
    )


def detect(doc: Any) -> bool:
    events = events_of(doc)
    return looks_like_events(events) if events else False


def convert(doc: Any) -> CanonicalTrajectory:
    events = events_of(doc)
    if events is None:
        raise FormatError(
            f'expected a JSON array of OpenHands events or {{"trajectory": [...]}}, '
            f"got {json_type(doc)}"
        )
    return build_trajectory(events, source_format=NAME)


def build_trajectory(
    items: list,
    *,
    source_format: str,
    skip_non_events: bool = False,
    offset: int = 0,
    strip_keys: tuple[str, ...] = (),
) -> CanonicalTrajectory:
    """Canonical trajectory from a list of V0 event dicts (also used by the share-payload and
    evaluation-row importers).

    Known non-events of the old websocket list are always skipped; with `skip_non_events`
    every object that is not an event is. `strip_keys` are removed from every kept event
    (the share payload's `token`). `offset` numbers events in error messages.
    """
    builder = _Builder(source_format, skip_non_events, offset, strip_keys)
    canonical = [
        event for index, item in enumerate(items) if (event := builder.add(index, item)) is not None
    ]
    if canonical and not any(event.original_id for event in canonical):
        # Flat legacy events have no ids: pair each observation with the action before it.
        link_causes(canonical)
    builder.trajectory.events = canonical
    return builder.finish()


def stream_trajectory(
    items: Iterable[Any],
    *,
    source_format: str,
    skip_non_events: bool = False,
    strip_keys: tuple[str, ...] = (),
) -> tuple[CanonicalTrajectory, Iterator[CanonicalEvent]]:
    """build_trajectory for items read one at a time: the trajectory (its `events` stay empty)
    and its events, each handed on as soon as it is made, so that the item it came from can
    be let go. The trajectory's agent, model, title and totals are filled in once the events
    are exhausted.

    The same events as build_trajectory: events without ids are held back until one with an
    id shows that causes are not to be linked, or the end shows that they are (flat legacy
    events, which have none)."""
    builder = _Builder(source_format, skip_non_events, 0, strip_keys)

    def events() -> Iterator[CanonicalEvent]:
        held: list[CanonicalEvent] = []
        any_id = False
        for index, item in enumerate(items):
            event = builder.add(index, item)
            if event is None:
                continue
            if not any_id and not event.original_id:
                held.append(event)
                continue
            if not any_id:
                any_id = True
                yield from held
                held.clear()
            yield event
        if held:
            link_causes(held)
            yield from held
            held.clear()
        builder.finish()

    return builder.trajectory, events()


class _Builder:
    """Turns V0 items into canonical events one at a time, noting what the trajectory's header
    needs (the `initialize` settings, warnings, metadata) as it goes."""

    def __init__(
        self,
        source_format: str,
        skip_non_events: bool,
        offset: int,
        strip_keys: tuple[str, ...],
    ):
        self.skip_non_events = skip_non_events
        self.offset = offset
        self.strip_keys = strip_keys
        self.settings: dict[str, Any] = {}
        self.trajectory = CanonicalTrajectory(source_format=source_format, events=[], warnings=[])
        self.metadata = MetadataFiller()

    def add(self, index: int, item: Any) -> CanonicalEvent | None:
        where = f"event {index + self.offset}"
        if not isinstance(item, dict):
            raise FormatError(f"event is {json_type(item)}, not an object", where)
        if is_init(item):
            args = item.get("args")
            if isinstance(args, dict):
                settings = self.settings
                settings["agent"] = settings.get("agent") or text_of(args.get("AGENT"))
                settings["model"] = settings.get("model") or text_of(args.get("LLM_MODEL"))
            return None
        if not is_event(item):
            if is_websocket_noise(item):
                return None
            if self.skip_non_events:
                # Kept out, and the sharer is told (before, {"bogus": 1} went without a word).
                self.trajectory.warnings.append(
                    {"where": where, "message": f"left out: {missing_fields(item)}"}
                )
                return None
            raise FormatError(missing_fields(item), where)
        if self.strip_keys and any(key in item for key in self.strip_keys):
            item = {key: value for key, value in item.items() if key not in self.strip_keys}
        event = convert_event(item, where)
        self.metadata.add(item)
        return event

    def finish(self) -> CanonicalTrajectory:
        trajectory = self.trajectory
        self.metadata.done(trajectory)
        trajectory.agent = trajectory.agent or self.settings.get("agent", "") or "OpenHands"
        trajectory.model = trajectory.model or self.settings.get("model", "")
        return trajectory


def missing_fields(item: dict) -> str:
    action, observation = item.get("action"), item.get("observation")
    if isinstance(action, str) and isinstance(observation, str):
        return "event has both 'action' and 'observation'"
    if action is not None and not isinstance(action, str):
        return f"'action' is {json_type(action)}, expected a string"
    if observation is not None and not isinstance(observation, str):
        return f"'observation' is {json_type(observation)}, expected a string"
    return "event has neither 'action' nor 'observation'"


def fields_of(item: dict, key: str, where: str) -> dict:
    """`args` / `extras` of an event; for flat legacy events, the non-envelope keys."""
    if key in item:
        value = item[key]
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise FormatError(f"'{key}' is {json_type(value)}, expected an object", where)
        return value
    # Flat: an action's `content` is its own (a message's text), an observation's is top-level.
    envelope = TOP_KEYS if key == "extras" else ACTION_TOP_KEYS
    return {k: v for k, v in item.items() if k not in envelope}


def convert_event(item: dict, where: str) -> CanonicalEvent:
    original_id = item.get("id")
    cause = item.get("cause")
    source = item.get("source") if item.get("source") in SOURCES else ""
    common: dict[str, Any] = {
        "original_id": "" if original_id is None or original_id == -1 else str(original_id),
        "timestamp": parse_timestamp(item.get("timestamp")),
        "cause": "" if cause is None or isinstance(cause, (dict, list)) else str(cause),
        "data": item,
    }
    if isinstance(item.get("action"), str):
        action = item["action"]
        args = fields_of(item, "args", where)
        if action in MESSAGE_ACTIONS:
            kind = "message"
            # Without a source (old exports), an agent's message is the one awaiting a reply.
            default_source = "agent" if args.get("wait_for_response") is True else "user"
        elif action in SYSTEM_ACTIONS:
            kind, default_source = "system", "agent"
        else:
            kind, default_source = "action", "agent"
        return CanonicalEvent(
            source=source or default_source,
            kind=kind,
            type=action or "action",
            text=action_text(action, args, item),
            **common,
        )
    observation = item["observation"]
    extras = fields_of(item, "extras", where)
    return CanonicalEvent(
        source=source or "environment",
        kind="observation",
        type=observation or "observation",
        text=observation_text(observation, item, extras),
        **common,
    )


def image_note(urls: Any) -> str:
    count = sum(1 for url in urls if isinstance(url, str) and url) if isinstance(urls, list) else 0
    return "\n".join("[image]" for _ in range(count))


def action_text(action: str, args: dict, item: dict) -> str:
    thought = as_text(args.get("thought"))
    message = text_of(item.get("message"))
    if action in ("message", "system"):
        content = as_text(args.get("content")) or message
        images = image_note(args.get("image_urls") or args.get("images_urls"))
        return join_text(content, images) if action == "message" else content
    if action == "run":
        primary = as_text(args.get("command"))
    elif action == "run_ipython":
        primary = as_text(args.get("code"))
    elif action in ("read", "write", "edit"):
        body = (
            args.get("new_str")
            or args.get("file_text")
            or args.get("content")
            or (args.get("command") if args.get("command") not in ("view", None) else "")
            or ""
        )
        primary = "\n".join(part for part in (as_text(args.get("path")), as_text(body)) if part)
    elif action == "browse":
        primary = as_text(args.get("url"))
    elif action == "browse_interactive":
        primary = as_text(args.get("browser_actions"))
    elif action == "call_tool_mcp":
        arguments = args.get("arguments")
        shown = arguments if isinstance(arguments, str) else _compact(arguments)
        primary = " ".join(part for part in (as_text(args.get("name")), shown) if part)
    elif action == "finish":
        primary = (
            as_text(args.get("final_thought"))
            or _compact(args.get("outputs"))
            or (message if message != "All done! What's next on the agenda?" else "")
        )
    elif action == "think":
        return thought or message
    elif action == "recall":
        primary = as_text(args.get("query")) or message
    elif action == "condensation":
        primary = as_text(args.get("summary")) or message
    else:
        primary = message
    return join_text(thought, primary)


def _compact(value: Any) -> str:
    if value in (None, "", {}, []):
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def observation_text(observation: str, item: dict, extras: dict) -> str:
    content = as_text(item.get("content"))
    images = image_note(extras.get("image_urls")) if observation == "run_ipython" else ""
    if content:
        return join_text(content, images)
    if observation == "agent_state_changed":
        state = text_of(extras.get("agent_state"))
        return f"Agent state: {state}" if state else ""
    if observation == "null":
        return ""
    return join_text(text_of(item.get("message")), images)


def fill_metadata(trajectory: CanonicalTrajectory, items: list[dict]) -> None:
    """Agent, version, model, title and totals from the events that carry them."""
    filler = MetadataFiller()
    for item in items:
        filler.add(item)
    filler.done(trajectory)


class MetadataFiller:
    """fill_metadata one event at a time: what it needs of the events seen so far (the first
    model names, the last metrics), never the events themselves."""

    def __init__(self) -> None:
        self.agent = ""
        self.agent_version = ""
        self.title = ""
        self.configured_model = ""
        self.response_model = ""
        self.last_metrics: dict | None = None

    def add(self, item: dict) -> None:
        args = obj if isinstance(obj := item.get("args"), dict) else {}
        action = item.get("action")
        if action == "system":
            self.agent = self.agent or text_of(args.get("agent_class"))
            self.agent_version = self.agent_version or text_of(args.get("openhands_version"))
        if not self.configured_model:
            self.configured_model = metrics_model(item)
        if not self.response_model:
            self.response_model = response_model_of(item)
        if (
            not self.title
            and action == "message"
            and item.get("source", "user") == "user"
            and args.get("wait_for_response") is not True
        ):
            self.title = title_from(as_text(args.get("content")) or text_of(item.get("message")))
        metrics = item.get("llm_metrics")
        if isinstance(metrics, dict):
            self.last_metrics = metrics

    def done(self, trajectory: CanonicalTrajectory) -> None:
        trajectory.agent = trajectory.agent or self.agent
        trajectory.agent_version = trajectory.agent_version or self.agent_version
        trajectory.title = trajectory.title or self.title
        # The configured name (llm_metrics) over the provider's echo (model_response).
        trajectory.model = trajectory.model or self.configured_model or self.response_model
        if self.last_metrics is not None:
            add_totals(trajectory.metadata, self.last_metrics)
        if trajectory.agent_version:
            trajectory.metadata.setdefault("openhands_version", trajectory.agent_version)


def add_totals(metadata: dict, metrics: dict) -> None:
    """total_tokens / total_cost from an OpenHands `Metrics.get()` dict."""
    usage = metrics.get("accumulated_token_usage")
    if isinstance(usage, dict):
        tokens = [
            value
            for key in ("prompt_tokens", "completion_tokens")
            if isinstance(value := number(usage.get(key)), int)
        ]
        if tokens:
            metadata.setdefault("total_tokens", sum(tokens))
    cost = number(metrics.get("accumulated_cost"))
    if cost is not None:
        metadata.setdefault("total_cost", float(cost))


def metrics_model(item: dict) -> str:
    metrics = item.get("llm_metrics")
    if isinstance(metrics, dict):
        usage = metrics.get("accumulated_token_usage")
        if isinstance(usage, dict):
            model = text_of(usage.get("model"))
            if model not in PLACEHOLDER_MODELS:
                return model
    return ""


def response_model_of(item: dict) -> str:
    meta = item.get("tool_call_metadata")
    if isinstance(meta, dict):
        response = meta.get("model_response")
        if isinstance(response, dict):
            return text_of(response.get("model"))
    return ""
