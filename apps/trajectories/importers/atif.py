"""ATIF, Harbor's Agent Trajectory Interchange Format (`trajectory.json`, Terminal-Bench's runs).

One object `{schema_version: "ATIF-v1.x", session_id, trajectory_id, agent{name, version,
model_name, tool_definitions, extra}, steps[], notes, final_metrics, extra,
subagent_trajectories}`; a JSON array of them (what ADP's exporter writes) is one trajectory
each. A step is `{step_id, timestamp, source: system|user|agent, message (text or content
parts), model_name, reasoning_content, tool_calls[{tool_call_id, function_name, arguments}],
observation{results[{source_call_id, content, subagent_trajectory_ref}]}, metrics{prompt_tokens,
completion_tokens, cached_tokens, cost_usd}, is_copied_context, extra}`.

Events, per step: a system step -> a system event; a user step -> a user message; an agent
step -> its reasoning (an agent message of type "thinking"), its message, one action per tool
call, then one observation per result, caused by the call of the same step it names (ids need
not be unique across steps: ADP's converter gives every call "call_1", so each action's id is
made unique and the step's own call is the one linked). Per-step metrics and model stay on the
step's first event; the final metrics give the totals. An embedded subagent trajectory becomes a
nested run (`data["subagent"]`, as the Claude Code importer writes it) right after the result
that refers to it. `extra.event_type` on a step (TrajHub's own ATIF export writes it) restores
the event's type. The run's session id is never kept (DESIGN.md); the trajectory id is not
either (the share gets its own).

A Harbor trial folder, zipped (`<trial>/agent/trajectory.json` next to the trial's
`<trial>/result.json`), is read by `from_archive`: the trajectory, with what the trial's result
says of it under `harbor_trial_result` (the verifier's rewards, `{"reward": 1.0}`, the task's
name), which outcome.py reads as the run's outcome.

Pure Python, no Django.
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    json_text,
    number,
    parse_timestamp,
    small_value,
    text_of,
    title_from,
)

NAME = "atif"
LABEL = "ATIF trajectory (Harbor)"

SOURCES = {"system", "user", "agent"}
METRIC_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")
MAX_NESTING = 8  # subagents of subagents: deeper than any run, shallow enough for the stack


def detect(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("schema_version"), str)
        and doc["schema_version"].startswith("ATIF-")
        and isinstance(doc.get("steps"), list)
    )


def convert(doc: Any) -> CanonicalTrajectory:
    if not detect(doc):
        raise FormatError('expected an ATIF trajectory: {"schema_version": "ATIF-v1.x", "steps"}')
    agent = _object(doc.get("agent"))
    events = _Steps(prefix="").read(doc, depth=0)
    prompts = [e.text for e in events if e.source == "user" and e.kind == "message"]
    metadata: dict[str, Any] = {"schema_version": doc["schema_version"]}
    tools = agent.get("tool_definitions")
    if isinstance(tools, list) and tools:
        metadata["tools"] = tools
    for key in ("notes", "continued_trajectory_ref"):
        if text_of(doc.get(key)):
            metadata[key] = doc[key]
    for key in ("extra",):
        value = small_value(doc.get(key), depth=3)
        if isinstance(value, dict) and value:
            metadata[key] = value
    if isinstance(agent.get("extra"), dict) and agent["extra"]:
        metadata["agent_extra"] = small_value(agent["extra"], depth=3)
    _final_metrics(doc.get("final_metrics"), events, metadata)
    _trial_result(doc.get(TRIAL_RESULT_KEY), metadata)
    return CanonicalTrajectory(
        source_format=NAME,
        events=events,
        title=title_from(prompts[0] if prompts else ""),
        agent=text_of(agent.get("name")),
        model=text_of(agent.get("model_name")),
        agent_version=text_of(agent.get("version")),
        metadata=metadata,
    )


# Where from_archive puts the trial's result.json beside the trajectory it belongs to.
TRIAL_RESULT_KEY = "harbor_trial_result"


def from_archive(entries: list[Any], decode: Any) -> dict[str, Any] | None:
    """A zipped Harbor trial folder: its one ATIF `trajectory.json` with the trial's
    `result.json` (in the trajectory's folder or the one above it, Harbor's `agent/`), or None
    when the zip is not one (a zip of the trajectory alone is read as any one-file zip)."""
    folders: dict[str, Any] = {}
    trajectories = []
    for entry in entries:
        folder, _, name = entry.name.rpartition("/")
        if name == "trajectory.json":
            trajectories.append(entry)
        elif name == "result.json":
            folders[folder] = entry
    if len(trajectories) != 1:
        return None
    (entry,) = trajectories
    folder = entry.name.rpartition("/")[0]
    result = folders.get(folder) or folders.get(folder.rpartition("/")[0] if "/" in folder else "")
    if result is None:
        return None
    doc = _json_entry(entry, decode)
    if not detect(doc):
        return None
    trial = _json_entry(result, decode)
    verifier = _object(trial.get("verifier_result"))
    kept: dict[str, Any] = {}
    rewards = verifier.get("rewards")
    if isinstance(rewards, dict):
        kept["rewards"] = small_value(rewards, depth=1)
    for key in ("task_name", "trial_name"):
        if text_of(trial.get(key)):
            kept[key] = text_of(trial[key])[:300]
    exception = _object(trial.get("exception_info"))
    if text_of(exception.get("exception_type")):
        kept["exception"] = text_of(exception["exception_type"])[:200]
    return {**doc, TRIAL_RESULT_KEY: kept}


def _json_entry(entry: Any, decode: Any) -> Any:
    try:
        value, lines = decode(entry.data)
    except FormatError as exc:
        raise exc.at(f"entry {entry.name!r}") from None
    if lines:
        raise FormatError("expected one JSON document", f"entry {entry.name!r}")
    return value


def _trial_result(trial: Any, metadata: dict[str, Any]) -> None:
    """What a Harbor trial's result.json said (from_archive): the verifier's rewards, read by
    outcome.py; the task's name as the instance, as evaluation rows name theirs."""
    trial = _object(trial)
    rewards = trial.get("rewards")
    if isinstance(rewards, dict) and rewards:
        metadata["verifier_rewards"] = small_value(rewards, depth=1)
    if text_of(trial.get("task_name")):
        metadata.setdefault("instance_id", text_of(trial["task_name"]))
    if text_of(trial.get("exception")):
        metadata["error"] = text_of(trial["exception"])


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _final_metrics(final: Any, events: list[CanonicalEvent], metadata: dict[str, Any]) -> None:
    """Totals from `final_metrics`, else summed over the steps' metrics."""
    totals: dict[str, Any] = {}
    if isinstance(final, dict):
        kept = {k: v for k, v in final.items() if number(v) is not None}
        if kept:
            metadata["final_metrics"] = kept
        totals = {
            "prompt_tokens": number(final.get("total_prompt_tokens")),
            "completion_tokens": number(final.get("total_completion_tokens")),
            "cost_usd": number(final.get("total_cost_usd")),
        }
    if not any(value is not None for value in totals.values()):
        sums: dict[str, Any] = {}
        for event in events:
            metrics = event.data.get("metrics") if "subagent" not in event.data else None
            for key in ("prompt_tokens", "completion_tokens", "cost_usd"):
                value = number((metrics or {}).get(key))
                if value is not None:
                    sums[key] = sums.get(key, 0) + value
        totals = sums
    tokens = [totals.get(k) for k in ("prompt_tokens", "completion_tokens")]
    if any(isinstance(t, int) for t in tokens):
        metadata["total_tokens"] = sum(t for t in tokens if isinstance(t, int))
    if totals.get("cost_usd") is not None:
        metadata["total_cost"] = float(totals["cost_usd"])


def _message(value: Any, where: str) -> tuple[str, list[str]]:
    """A step's message (or a result's content): its text, and the paths of its images."""
    if value is None or isinstance(value, str):
        return value or "", []
    if not isinstance(value, list):
        raise FormatError("expected text or a list of content parts", where)
    texts: list[str] = []
    images: list[str] = []
    for part in value:
        if not isinstance(part, dict):
            raise FormatError("a content part is not an object", where)
        if part.get("type") in ("image", "audio"):
            source = _object(part.get("source"))
            path = text_of(source.get("path")) or text_of(source.get("url"))
            if path:
                images.append(path)
            texts.append(f"[{part['type']}]")
        else:
            texts.append(as_text([part]))
    return "\n".join(t for t in texts if t), images


def _summary(arguments: dict[str, Any]) -> str:
    for key in ("command", "cmd", "code", "file_path", "path", "query", "url"):
        if text_of(arguments.get(key)):
            return arguments[key]
    return orjson.dumps(arguments).decode() if arguments else ""


class _Steps:
    """One trajectory's steps (and its embedded subagents') as events."""

    def __init__(self, prefix: str, subagent: dict[str, str] | None = None) -> None:
        self.prefix = prefix
        self.subagent = subagent
        self.events: list[CanonicalEvent] = []
        self.ids: set[str] = set()
        # After which observation a subagent's run goes: trajectory id -> the call's id.
        self.refs: dict[str, tuple[CanonicalEvent, str]] = {}

    def add(self, event: CanonicalEvent) -> CanonicalEvent:
        if self.subagent is not None:
            event.data = {**event.data, "subagent": self.subagent}
        self.events.append(event)
        return event

    def unique(self, wanted: str, step_id: Any) -> str:
        ident = f"{self.prefix}{wanted}"
        if ident in self.ids or not wanted:
            ident = f"{self.prefix}{wanted or 'call'}@{step_id}"
            while ident in self.ids:
                ident += "'"
        self.ids.add(ident)
        return ident

    def read(self, doc: dict[str, Any], depth: int) -> list[CanonicalEvent]:
        for index, step in enumerate(doc["steps"]):
            where = f"steps[{index}]"
            if not isinstance(step, dict):
                raise FormatError("expected a step object", where)
            if not isinstance(step.get("source"), str) or step["source"] not in SOURCES:
                raise FormatError(
                    f"source must be system, user or agent, not {json_text(step.get('source'))}",
                    where,
                )
            self._step(step, where)
        subagents = doc.get("subagent_trajectories")
        if isinstance(subagents, list) and subagents:
            if depth >= MAX_NESTING:
                raise FormatError(f"subagents nested deeper than {MAX_NESTING} levels")
            return self._with_subagents(subagents, depth)
        return self.events

    def _step(self, step: dict[str, Any], where: str) -> None:
        source = step["source"]
        stamp = parse_timestamp(step.get("timestamp"))
        text, images = _message(step.get("message"), f"{where}.message")
        extra = _object(step.get("extra"))
        event_type = text_of(extra.get("event_type"))
        base: dict[str, Any] = {"image_paths": images} if images else {}
        if step.get("is_copied_context") is True:
            base["copied_context"] = True
        first = len(self.events)
        answers = step.get("observation") is not None and not step.get("tool_calls")
        if source != "agent" and answers and not text.strip() and not images:
            pass  # a step that only carries results (of no call, or the environment's)
        elif source == "system":
            self.add(CanonicalEvent("user", "system", event_type or "system", text, base))
        elif source == "user":
            kind = "system" if event_type and event_type != "message" else "message"
            self.add(CanonicalEvent("user", kind, event_type or "message", text, base))
        else:
            reasoning = text_of(step.get("reasoning_content"))
            if reasoning.strip():
                self.add(CanonicalEvent("agent", "message", "thinking", reasoning, {}))
            if text.strip() or images:
                self.add(CanonicalEvent("agent", "message", "message", text, base))
        calls = self._calls(step, source, where, stamp)
        self._results(step, calls, where, stamp)
        for event in self.events[first:]:
            event.timestamp = stamp
        if len(self.events) > first:
            head = self.events[first]
            facts: dict[str, Any] = {"step_id": step.get("step_id")}
            if text_of(step.get("model_name")):
                facts["model"] = step["model_name"]
            metrics = step.get("metrics")
            if isinstance(metrics, dict):
                kept = {k: metrics[k] for k in METRIC_KEYS if number(metrics.get(k)) is not None}
                if kept:
                    facts["metrics"] = kept
            head.data = {**head.data, **facts}

    def _calls(
        self, step: dict[str, Any], source: str, where: str, stamp: Any
    ) -> dict[str, CanonicalEvent]:
        calls = step.get("tool_calls")
        if calls is None:
            return {}
        if not isinstance(calls, list):
            raise FormatError("tool_calls is not a list", where)
        if calls and source != "agent":
            raise FormatError("tool calls on a step whose source is not agent", where)
        found: dict[str, CanonicalEvent] = {}
        for index, call in enumerate(calls):
            at = f"{where}.tool_calls[{index}]"
            if not isinstance(call, dict) or not text_of(call.get("function_name")):
                raise FormatError("expected a tool call with a function_name", at)
            arguments = call.get("arguments")
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, dict):
                raise FormatError("arguments is not an object", at)
            name = call["function_name"]
            wanted = text_of(call.get("tool_call_id"))
            data = {"tool": name, "arguments": arguments, "tool_call_id": wanted}
            ident = self.unique(wanted, step.get("step_id"))
            event = CanonicalEvent("agent", "action", name, _summary(arguments), data, ident, stamp)
            self.add(event)
            found.setdefault(wanted, event)
        return found

    def _results(
        self, step: dict[str, Any], calls: dict[str, CanonicalEvent], where: str, stamp: Any
    ) -> None:
        observation = step.get("observation")
        if observation is None:
            return
        results = observation.get("results") if isinstance(observation, dict) else None
        if not isinstance(results, list):
            raise FormatError("observation has no results list", where)
        for index, result in enumerate(results):
            at = f"{where}.observation.results[{index}]"
            if not isinstance(result, dict):
                raise FormatError("expected a result object", at)
            call_id = text_of(result.get("source_call_id"))
            call = calls.get(call_id) if call_id else None
            if call_id and call is None:
                raise FormatError(f"source_call_id '{call_id}' names no tool call of this step", at)
            text, images = _message(result.get("content"), f"{at}.content")
            data: dict[str, Any] = {"source_call_id": call_id} if call_id else {}
            if images:
                data["image_paths"] = images
            cause = call.original_id if call is not None else ""
            type_ = call.type if call is not None else "observation"
            event = CanonicalEvent(
                "environment", "observation", type_, text, data, "", stamp, cause
            )
            self.add(event)
            refs = result.get("subagent_trajectory_ref")
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and text_of(ref.get("trajectory_id")):
                    self.refs.setdefault(ref["trajectory_id"], (event, cause))

    def _with_subagents(self, subagents: list[Any], depth: int) -> list[CanonicalEvent]:
        nested: dict[int, list[CanonicalEvent]] = {}  # after which event (its id()), whose run
        tail: list[CanonicalEvent] = []
        for index, sub in enumerate(subagents):
            if not detect(sub):
                raise FormatError("expected an ATIF trajectory", f"subagent_trajectories[{index}]")
            name = text_of(sub.get("trajectory_id")) or f"subagent-{index}"
            after, parent = self.refs.get(name, (None, ""))
            run = _Steps(f"{self.prefix}{name}/", {"agent_id": name, "parent": parent})
            try:
                events = run.read(sub, depth + 1)
            except FormatError as exc:
                raise exc.at(f"subagent_trajectories[{index}]") from None
            if self.subagent is not None:  # a subagent's subagent stays inside the outer run
                for event in events:
                    event.data = {**event.data, "subagent": self.subagent}
            if after is None:
                tail.extend(events)
            else:
                nested.setdefault(id(after), []).extend(events)
        merged: list[CanonicalEvent] = []
        for event in self.events:
            merged.append(event)
            merged.extend(nested.get(id(event), []))
        return merged + tail
