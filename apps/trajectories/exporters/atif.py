"""The atif export: Harbor's Agent Trajectory Interchange Format (ATIF-v1.7), one object.

Steps from the events, in order: a user message is a user step; system events (and what the
environment says outside a tool result) are system steps; an agent message opens an agent step
whose `reasoning_content` is the thinking just before it; the agent's actions are that step's
`tool_calls` (or a new agent step's, once the step has results), and each observation caused by
a call is an `observation.results` entry of the step holding the call (`source_call_id`), so
every result names a call of its own step, as the schema requires. Per-step metrics come from
the turn's usage where the importer kept it; `final_metrics` from the trajectory's totals. A
subagent's run (`data["subagent"]`) is an embedded trajectory of `subagent_trajectories`,
referred to from the result of the call that started it. The trajectory id is the share's; the
agent's own session id is never written (importers do not keep it).

`extra.event_type` on a user or system step keeps the event's type (context, a compaction
summary, a command), which TrajHub's ATIF importer reads back: importing an export gives the same
steps, tool calls and results. Pure Python, no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apps.trajectories.exporters.common import calls_of, event_data, parse_json_object
from apps.trajectories.exporters.common import tool_definitions as definitions_of
from apps.trajectories.importers.base import CanonicalEvent, number, text_of
from apps.trajectories.outcome import run_outcome

SCHEMA_VERSION = "ATIF-v1.7"
# Token counts of a turn, as each importer keeps them -> ATIF's Metrics.
_GEMINI_TOKENS = {
    "input": "prompt_tokens",
    "output": "completion_tokens",
    "cached": "cached_tokens",
}
_METRIC_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")
# The trajectory's `usage` totals, by importer -> (the keys summed into ATIF's prompt tokens,
# which count cached ones too; those summed into its completion tokens; the cached key).
_USAGE_TOTALS = {
    # Claude's input_tokens leave out what was written to and read from the cache.
    "claude_code": (
        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
        ("output_tokens",),
        "cache_read_input_tokens",
    ),
    "codex_cli": (("input_tokens",), ("output_tokens",), "cached_input_tokens"),
    "gemini_cli": (("input",), ("output", "thoughts"), "cached"),
}
_SAFE_ID = re.compile(r"[^A-Za-z0-9._:@/-]+")


@dataclass
class _Builder:
    steps: list[dict[str, Any]] = field(default_factory=list)
    current: dict[str, Any] | None = None  # the agent step that takes the next tool calls
    reasoning: list[CanonicalEvent] = field(default_factory=list)  # thinking not yet placed
    calls: dict[str, tuple[dict[str, Any], list[str]]] = field(default_factory=dict)
    open_calls: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def step(
        self, source: str, event: CanonicalEvent, message: str = "", typed: bool = True
    ) -> dict[str, Any]:
        if source != "agent":
            self.flush()
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source}
        if event.timestamp is not None:
            step["timestamp"] = event.timestamp.isoformat()
        step["message"] = message
        if event_data(event).get("copied_context") is True:
            step["is_copied_context"] = True
        if source == "agent":
            if self.reasoning:
                step["reasoning_content"] = "\n\n".join(e.text for e in self.reasoning)
                _metrics(step, self.reasoning[0])  # the turn's figures sit on its first event
                self.reasoning = []
            if "metrics" not in step:
                _metrics(step, event)
        elif typed and event.type not in ("message", "system"):
            step["extra"] = {"event_type": event.type}
        self.steps.append(step)
        return step

    def flush(self) -> None:
        """Thinking that no agent step followed: an agent step of its own."""
        if self.reasoning:
            reasoning, self.reasoning = self.reasoning, []
            step = {
                "step_id": len(self.steps) + 1,
                "source": "agent",
                "message": "",
                "reasoning_content": "\n\n".join(e.text for e in reasoning),
            }
            _metrics(step, reasoning[0])
            self.steps.append(step)
        self.current = None

    def action(self, event: CanonicalEvent) -> None:
        step = self.current
        if step is None or "observation" in step or self.reasoning:
            step = self.current = self.step("agent", event)
        elif "metrics" not in step:
            _metrics(step, event)
        calls = step.setdefault("tool_calls", [])
        taken = {call["tool_call_id"] for call in calls}
        ids: list[str] = []
        for number_, (name, arguments, wanted) in enumerate(_calls(event)):
            ident = wanted or f"call_{len(self.steps)}_{len(calls) + 1}"
            while ident in taken:
                ident = f"{ident}_{number_ + 1}"
            taken.add(ident)
            calls.append({"tool_call_id": ident, "function_name": name, "arguments": arguments})
            ids.append(ident)
            self.open_calls.append((step, ident))
        if event.original_id:
            self.calls[event.original_id] = (step, ids)

    def observation(self, event: CanonicalEvent) -> dict[str, Any]:
        target = None
        found = self.calls.get(event.cause) if event.cause else None
        if found is not None:
            step, ids = found
            answered = {r.get("source_call_id") for r in _results(step)}
            ident = next((i for i in ids if i not in answered), ids[0] if ids else None)
            target = (step, ident)
        elif not event.cause and self.open_calls:
            target = self.open_calls[0]
        if target is not None and target in self.open_calls:
            self.open_calls.remove(target)
        if target is None or target[1] is None:
            step = self.current or self.step("system", event, typed=False)
            result: dict[str, Any] = {"content": event.text}
        else:
            step = target[0]
            result = {"source_call_id": target[1], "content": event.text}
        _results(step).append(result)
        return result


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    return step.setdefault("observation", {"results": []})["results"]


def _metrics(step: dict[str, Any], event: CanonicalEvent) -> None:
    data = event_data(event)
    metrics: dict[str, Any] = {}
    tokens = data.get("tokens")
    if isinstance(tokens, dict):  # Gemini CLI: a turn's tokens
        for key, name in _GEMINI_TOKENS.items():
            if isinstance(number(tokens.get(key)), int):
                metrics[name] = tokens[key]
        if "completion_tokens" in metrics and isinstance(number(tokens.get("thoughts")), int):
            # Gemini counts the thinking apart from the answer; ATIF's completion is both.
            metrics["completion_tokens"] += tokens["thoughts"]
    kept = data.get("metrics")
    if isinstance(kept, dict):  # an ATIF import's own
        metrics.update({k: kept[k] for k in _METRIC_KEYS if number(kept.get(k)) is not None})
    if metrics:
        step["metrics"] = metrics
    if text_of(data.get("model")):
        step["model_name"] = data["model"]


def _calls(event: CanonicalEvent) -> list[tuple[str, dict[str, Any], str]]:
    """(name, arguments, id) of each tool call of an action."""
    data = event_data(event)
    tool = text_of(data.get("tool"))
    for key in ("arguments", "input"):
        # Claude Code (input), Codex CLI, Gemini CLI and ATIF imports (arguments): as given.
        if tool and isinstance(data.get(key), dict):
            wanted = text_of(data.get("tool_call_id")) or event.original_id
            return [(tool, data[key], _safe(wanted))]
    found = []
    for call in calls_of(event):
        arguments = parse_json_object(call.arguments)
        if arguments is None:
            arguments = {"input": call.arguments}
        found.append((call.name, arguments, _safe(call.id or event.original_id)))
    return found


def _safe(ident: str) -> str:
    return _SAFE_ID.sub("_", ident)[:100]


def _steps(events: list[CanonicalEvent]) -> tuple[list[dict[str, Any]], dict[str, dict]]:
    """The steps of one run, and the result each call id's result entry is (for subagents)."""
    builder = _Builder()
    results: dict[str, dict] = {}
    for event in events:
        if event.kind == "message" and event.source == "agent":
            if event.type == "thinking":
                builder.reasoning.append(event)
                continue
            builder.current = builder.step("agent", event, event.text)
        elif event.kind == "action" and event.source == "agent":
            builder.action(event)
        elif event.kind == "observation":
            result = builder.observation(event)
            if event.cause:
                results.setdefault(event.cause, result)
        elif event.kind == "message" and event.source == "user":
            builder.step("user", event, event.text)
        elif event.kind == "action":  # the user's own command (OpenHands): said as a message
            builder.step("user", event, event.text)
        else:
            builder.step("system", event, event.text)
    builder.flush()
    return builder.steps, results


def _subagent_of(event: CanonicalEvent) -> dict[str, str] | None:
    sub = event_data(event).get("subagent")
    if isinstance(sub, dict) and text_of(sub.get("agent_id")):
        return {"agent_id": sub["agent_id"], "parent": text_of(sub.get("parent"))}
    return None


def _agent(meta: dict, events: list[CanonicalEvent]) -> dict[str, Any]:
    agent: dict[str, Any] = {
        "name": text_of(meta.get("agent")) or "unknown",
        "version": text_of(meta.get("agent_version")) or "unknown",
    }
    if text_of(meta.get("model")):
        agent["model_name"] = meta["model"]
    tools = definitions_of(events, meta)
    if tools:
        agent["tool_definitions"] = tools
    return agent


def _final_metrics(meta: dict, steps: list[dict[str, Any]]) -> dict[str, Any]:
    metadata = _object(meta.get("metadata"))
    final: dict[str, Any] = {"total_steps": len(steps)}
    usage = _object(metadata.get("usage"))
    keys = _USAGE_TOTALS.get(text_of(meta.get("source_format")))
    if keys is not None:
        prompt, completion, cached = keys
        for summed, total in (
            (prompt, "total_prompt_tokens"),
            (completion, "total_completion_tokens"),
            ((cached,), "total_cached_tokens"),
        ):
            counted = [usage[key] for key in summed if isinstance(number(usage.get(key)), int)]
            if counted:
                final[total] = sum(counted)
    if "total_prompt_tokens" not in final:
        for key, total in (
            ("prompt_tokens", "total_prompt_tokens"),
            ("completion_tokens", "total_completion_tokens"),
        ):
            values = [
                s["metrics"][key] for s in steps if isinstance(s.get("metrics", {}).get(key), int)
            ]
            if values:
                final[total] = sum(values)
    cost = number(metadata.get("total_cost"))
    if cost is not None:
        final["total_cost_usd"] = float(cost)
    return final


def to_atif(events: list[CanonicalEvent], meta: dict) -> dict[str, Any]:
    main: list[CanonicalEvent] = []
    runs: dict[str, list[CanonicalEvent]] = {}
    parents: dict[str, str] = {}
    for event in events:
        sub = _subagent_of(event)
        if sub is None:
            main.append(event)
        else:
            runs.setdefault(sub["agent_id"], []).append(event)
            parents.setdefault(sub["agent_id"], sub["parent"])
    steps, results = _steps(main)
    if not steps:  # no event the format holds: one empty system step keeps the file valid
        steps = [{"step_id": 1, "source": "system", "message": ""}]
    payload: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if text_of(meta.get("id")):
        payload["trajectory_id"] = meta["id"]
    payload["agent"] = _agent(meta, events)
    payload["steps"] = steps
    payload["final_metrics"] = _final_metrics(meta, steps)
    extra: dict[str, Any] = {
        key: meta[key]
        for key in ("title", "source_format", "url", "license")
        if text_of(meta.get(key))
    }
    outcome = run_outcome(meta.get("metadata"))
    if outcome:
        extra["result"] = outcome.as_dict()
    if extra:
        payload["extra"] = extra
    subagents = []
    for name, run in runs.items():
        sub_steps, _ = _steps(run)
        if not sub_steps:
            continue
        ident = _safe(name)
        subagents.append(
            {
                "schema_version": SCHEMA_VERSION,
                "trajectory_id": ident,
                "agent": {"name": ident, "version": payload["agent"]["version"]},
                "steps": sub_steps,
            }
        )
        result = results.get(parents.get(name, ""))
        if result is not None:
            result.setdefault("subagent_trajectory_ref", []).append({"trajectory_id": ident})
    if subagents:
        payload["subagent_trajectories"] = subagents
    return payload
