"""SWE-agent `.traj`: {environment, trajectory: [steps], history: [messages], info, replay_config?}
(shared/OPENHANDS.md 3.1).

Where there are steps, each becomes an agent action (thought + command) and the environment's
observation, after the task as the history states it (system prompt, issue); without steps,
the events come from the history messages. Demonstrations (in-context examples) are left out.
Steps' `query` (the whole prompt at that step, repeated every step) is not kept: the history
already holds it once.

A `.traj` says how the run ended (`info.exit_status`, "submitted") but not whether its patch
works: that is the evaluation's to say. A zip of the `.traj` with the SWE-bench evaluation's
report of its instance (the harness's per-instance `report.json`, `{id: {"resolved": ...}}`, or
a run's report with `resolved_ids` / `unresolved_ids`) is read by `from_archive`: the report's
verdict on this instance is kept as `report.resolved`, the run's outcome (outcome.py).
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    join_text,
    json_type,
    mostly,
    number,
    small_value,
    text_of,
    title_from,
)

NAME = "sweagent"
LABEL = "SWE-agent trajectory (.traj)"

STEP_KEYS = {"action", "observation", "response", "thought", "state", "execution_time"}
BULKY_STEP_KEYS = {"query", "messages"}
READ_COMMANDS = {"open", "goto", "scroll_up", "scroll_down", "view"}
EDIT_COMMANDS = {"edit", "insert", "create", "append", "str_replace", "edit_file"}


def is_step(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and "action" in item
        and "observation" in item
        and ("response" in item or "thought" in item)
    )


def is_message(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("role"), str)
        and ("message_type" in item or "agent" in item)
    )


def detect(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    steps, history = doc.get("trajectory"), doc.get("history")
    if isinstance(steps, list) and steps:
        return mostly(steps, is_step)
    if isinstance(history, list) and history:
        return mostly(history, is_message)
    return isinstance(doc.get("info"), dict) and isinstance(doc.get("environment"), str)


def convert(doc: Any) -> CanonicalTrajectory:
    if not isinstance(doc, dict):
        raise FormatError(f"expected a SWE-agent .traj object, got {json_type(doc)}")
    if "trajectory" not in doc and "history" not in doc:
        raise FormatError("expected a SWE-agent .traj: 'trajectory' steps or 'history' messages")
    steps = doc.get("trajectory", [])
    history = doc.get("history", [])
    if steps is None:
        steps = []
    if history is None:
        history = []
    if not isinstance(steps, list):
        raise FormatError(f"'trajectory' is {json_type(steps)}, expected an array", "trajectory")
    if not isinstance(history, list):
        raise FormatError(f"'history' is {json_type(history)}, expected an array", "history")
    messages = [
        (index, message)
        for index, message in enumerate(history)
        if not (isinstance(message, dict) and is_demo(message))
    ]
    for index, message in messages:
        if not isinstance(message, dict):
            raise FormatError(f"message is {json_type(message)}, not an object", f"message {index}")
    if steps:
        events = from_steps(steps, messages)
    else:
        events = from_history(messages)
    trajectory = CanonicalTrajectory(source_format=NAME, events=events, agent="SWE-agent")
    fill_metadata(trajectory, doc)
    return trajectory


# Where from_archive puts the evaluation report's verdict on the .traj's instance.
REPORT_KEY = "swebench_report"


def from_archive(entries: list[Any], decode: Any) -> dict[str, Any] | None:
    """A zip of one `.traj` and the SWE-bench report of its instance: the `.traj` with the
    report's verdict; None when the zip is not that (no report, or several trajectories)."""
    trajs = [entry for entry in entries if entry.name.endswith(".traj")]
    reports = [entry for entry in entries if entry.name.endswith(".json")]
    if len(trajs) != 1 or not reports:
        return None
    (entry,) = trajs
    doc = _json_entry(entry, decode)
    if not detect(doc):
        return None
    problem = replay_config(doc).get("problem_statement")
    instance = text_of(problem.get("id")) if isinstance(problem, dict) else ""
    instance = instance or entry.name.rpartition("/")[2].removesuffix(".traj")
    for report in reports:
        resolved = _report_verdict(_json_entry(report, decode), instance)
        if resolved is not None:
            return {**doc, REPORT_KEY: {"resolved": resolved, "file": report.name[-200:]}}
    return None


def _report_verdict(report: Any, instance: str) -> bool | None:
    """What a SWE-bench report says of `instance`: resolved, not, or None (not in it)."""
    if not isinstance(report, dict):
        return None
    own = report.get(instance)
    if isinstance(own, dict) and isinstance(own.get("resolved"), bool):
        return own["resolved"]  # the harness's per-instance report.json
    resolved, unresolved = report.get("resolved_ids"), report.get("unresolved_ids")
    if isinstance(resolved, list) and instance in resolved:
        return True
    if isinstance(unresolved, list) and instance in unresolved:
        return False
    return None


def _json_entry(entry: Any, decode: Any) -> Any:
    try:
        value, lines = decode(entry.data)
    except FormatError as exc:
        raise exc.at(f"entry {entry.name!r}") from None
    return None if lines else value


def is_demo(message: dict) -> bool:
    return bool(message.get("is_demo")) or message.get("message_type") == "demonstration"


def command_type(command: str, tool: str = "", arguments: str = "") -> str:
    """run / read / edit / finish from a SWE-agent command line, or its tool call."""
    words = command.split(None, 2)
    name = tool or (words[0] if words else "")
    if name == "submit":
        return "finish"
    if name == "str_replace_editor":
        sub = _argument(arguments, "command") if tool else (words[1] if len(words) > 1 else "")
        return "read" if sub == "view" else "edit"
    if name in READ_COMMANDS:
        return "read"
    if name in EDIT_COMMANDS or name.startswith("edit"):
        return "edit"
    return "run"


def _argument(arguments: str, key: str) -> str:
    try:
        parsed = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return ""
    return text_of(parsed.get(key)) if isinstance(parsed, dict) else ""


def first_call(message: dict) -> dict | None:
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        return calls[0]
    return None


def call_name(call: dict | None) -> tuple[str, str]:
    if call is None:
        return "", ""
    function = obj if isinstance(obj := call.get("function"), dict) else {}
    return text_of(function.get("name")), text_of(function.get("arguments"))


def prelude(messages: list[tuple[int, Any]]) -> list[CanonicalEvent]:
    """System prompt and task: the history before the agent's first move."""
    events = []
    for index, message in messages:
        role = message.get("role")
        if role == "assistant":
            break
        if role == "system":
            events.append(system_event(message, index))
        elif role == "user":
            events.append(
                CanonicalEvent(
                    source="user",
                    kind="message",
                    type="message",
                    text=as_text(message.get("content")),
                    data=message,
                    original_id=f"history-{index}",
                )
            )
    return events


def system_event(message: dict, index: int) -> CanonicalEvent:
    return CanonicalEvent(
        source="agent",
        kind="system",
        type="system",
        text=as_text(message.get("content")),
        data=message,
        original_id=f"history-{index}",
    )


def from_steps(steps: list, messages: list[tuple[int, Any]]) -> list[CanonicalEvent]:
    events = prelude(messages)
    # The history's action messages, one per step, hold the exact tool calls (function calling).
    actions = [m for _, m in messages if m.get("role") == "assistant" and "action" in m]
    calls = [first_call(m) for m in actions] if len(actions) == len(steps) else []
    for index, step in enumerate(steps):
        where = f"step {index}"
        if not isinstance(step, dict):
            raise FormatError(f"step is {json_type(step)}, not an object", where)
        if "action" not in step and "observation" not in step:
            raise FormatError("step has neither 'action' nor 'observation'", where)
        command = as_text(step.get("action")).strip()
        data = {key: value for key, value in step.items() if key not in BULKY_STEP_KEYS}
        data.pop("observation", None)
        call = calls[index] if calls else None
        name, arguments = call_name(call)
        if call is not None:
            data["tool_calls"] = [call]
        action_id = text_of(call.get("id")) if call else ""
        action_id = action_id or f"step-{index}"
        step_type = command_type(command, name, arguments)
        events.append(
            CanonicalEvent(
                source="agent",
                kind="action",
                type=step_type,
                text=join_text(as_text(step.get("thought")).strip(), command),
                data=data,
                original_id=action_id,
            )
        )
        events.append(
            CanonicalEvent(
                source="environment",
                kind="observation",
                type=step_type,
                text=as_text(step.get("observation")),
                data={"observation": step.get("observation")},
                original_id=f"step-{index}-observation",
                cause=action_id,
            )
        )
    return events


def from_history(messages: list[tuple[int, Any]]) -> list[CanonicalEvent]:
    events: list[CanonicalEvent] = []
    last_action = ""
    acted = False
    for index, message in messages:
        role = message.get("role")
        where = f"message {index}"
        text = as_text(message.get("content"))
        if role == "system":
            events.append(system_event(message, index))
        elif role == "assistant":
            command = as_text(message.get("action")).strip()
            call = first_call(message)
            name, arguments = call_name(call)
            if command or call is not None:
                acted = True
                last_action = (text_of(call.get("id")) if call else "") or f"history-{index}"
                thought = as_text(message.get("thought")).strip() or text
                events.append(
                    CanonicalEvent(
                        source="agent",
                        kind="action",
                        type=command_type(command, name, arguments),
                        text=join_text(thought, command or f"{name} {arguments}".strip()),
                        data=message,
                        original_id=last_action,
                    )
                )
            else:
                events.append(
                    CanonicalEvent(
                        source="agent",
                        kind="message",
                        type="message",
                        text=text,
                        data=message,
                        original_id=f"history-{index}",
                    )
                )
        elif role in ("user", "tool"):
            if role == "user" and not acted:
                events.append(
                    CanonicalEvent(
                        source="user",
                        kind="message",
                        type="message",
                        text=text,
                        data=message,
                        original_id=f"history-{index}",
                    )
                )
                continue
            ids = message.get("tool_call_ids")
            cause = ids[0] if isinstance(ids, list) and ids and isinstance(ids[0], str) else ""
            action = next((e for e in reversed(events) if e.kind == "action"), None)
            events.append(
                CanonicalEvent(
                    source="environment",
                    kind="observation",
                    type=action.type if action is not None else "run",
                    text=text,
                    data=message,
                    original_id=f"history-{index}",
                    cause=cause or last_action,
                )
            )
        else:
            raise FormatError(f"unknown role {role!r}", where)
    return events


def replay_config(doc: dict) -> dict:
    config = doc.get("replay_config")
    if isinstance(config, str):
        # SWE-agent 1.x writes it as a JSON string.
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return {}
    return config if isinstance(config, dict) else {}


def fill_metadata(trajectory: CanonicalTrajectory, doc: dict) -> None:
    info = obj if isinstance(obj := doc.get("info"), dict) else {}
    config = replay_config(doc)
    agent_config = obj if isinstance(obj := config.get("agent"), dict) else {}
    model = obj if isinstance(obj := agent_config.get("model"), dict) else {}
    trajectory.model = text_of(model.get("name")) or text_of(info.get("model_name"))
    trajectory.agent_version = text_of(info.get("swe_agent_version"))
    metadata = trajectory.metadata
    if isinstance(doc.get("environment"), str):
        metadata["environment"] = doc["environment"]
    for key in ("exit_status", "swe_agent_hash", "swe_rex_version"):
        if isinstance(info.get(key), str):
            metadata[key] = info[key]
    submission = info.get("submission")
    if isinstance(submission, str):
        # The patch is the result of the run: keep it whole unless it is absurdly large.
        metadata["submission"] = submission if len(submission) <= 200_000 else None
    stats = info.get("model_stats")
    if isinstance(stats, dict):
        metadata["model_stats"] = small_value(stats, depth=1)
        cost = number(stats.get("instance_cost"))
        if cost is not None:
            metadata["total_cost"] = float(cost)
        tokens = [number(stats.get(k)) for k in ("tokens_sent", "tokens_received")]
        if all(isinstance(t, int) for t in tokens):
            metadata["total_tokens"] = sum(t for t in tokens if isinstance(t, int))
    problem = config.get("problem_statement")
    problem_id = text_of(problem.get("id")) if isinstance(problem, dict) else ""
    if problem_id:
        metadata["instance_id"] = problem_id
    trajectory.title = problem_id or issue_title(trajectory.events)
    report = doc.get(REPORT_KEY)
    if isinstance(report, dict) and isinstance(report.get("resolved"), bool):
        metadata["report"] = {"resolved": report["resolved"]}


def issue_title(events: list[CanonicalEvent]) -> str:
    """SWE-agent's task message quotes the issue after "ISSUE:"; its first line is the title."""
    for event in events:
        if event.source == "user" and event.kind == "message":
            text = event.text
            marker = text.find("ISSUE:")
            if marker >= 0:
                rest = text[marker + len("ISSUE:") :].strip()
                if rest:
                    return title_from(rest.splitlines()[0])
            return title_from(text)
    return ""
