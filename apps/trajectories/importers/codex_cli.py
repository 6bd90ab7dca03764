"""Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`.

One file is one session; each line is `{timestamp, type, payload}`:
- `session_meta`: the CLI's version and originator, the session's instructions (shown as context);
- `turn_context`: each turn's model, working folder, approval and sandbox policy;
- `response_item`: what the model saw and said: `message` (the user's carry the injected
  `<environment_context>` and AGENTS.md preambles, shown as context; the user's own words come
  from `event_msg` instead), `reasoning` (its summary; the encrypted content is dropped),
  `function_call` / `custom_tool_call` / `local_shell_call` / `web_search_call` (actions) and
  their `*_output` (observations, linked by `call_id`); `ghost_snapshot` is bookkeeping;
- `event_msg`: `user_message` (a prompt), `token_count` (the running usage), `turn_aborted`; the
  others repeat what the response items hold;
- `compacted`: the summary that replaced the context.
The older single-JSON rollouts (`{"session": {...}, "items": [...]}`) hold the same items.
The agent's own session id is never kept (DESIGN.md: the client proves a re-share itself).

Pure Python, no Django.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    as_text,
    number,
    parse_timestamp,
    text_of,
    title_from,
)

NAME = "codex_cli"
LABEL = "Codex CLI rollout"

LINE_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
CONTEXT_STARTS = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>")


def is_line(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("type"), str)
        and item["type"] in LINE_TYPES
        and isinstance(item.get("payload"), dict)
    )


def detect_lines(records: list[Any]) -> bool:
    sample = records[:20]
    return bool(sample) and sum(1 for record in sample if is_line(record)) * 2 >= len(sample)


def detect(doc: Any) -> bool:
    """The older single-JSON rollout."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("session"), dict)
        and isinstance(doc.get("items"), list)
    )


def convert(doc: Any) -> CanonicalTrajectory:
    if not detect(doc):
        raise FormatError('expected a Codex CLI rollout: {"session": {...}, "items": [...]}')
    session = _Session()
    meta = doc["session"]
    session.meta(meta)
    for index, item in enumerate(doc["items"]):
        if not isinstance(item, dict):
            raise FormatError("expected a JSON object (a rollout item)", f"items[{index}]")
        session.response_item(item, None, f"items[{index}]")
    return session.trajectory()


def convert_lines(records: Iterable[tuple[int, Any]]) -> CanonicalTrajectory:
    session = _Session()
    for number_, record in records:
        where = f"line {number_}"
        if not is_line(record):
            raise FormatError("expected a rollout line {timestamp, type, payload}", where)
        payload = record["payload"]
        stamp = parse_timestamp(record.get("timestamp"))
        kind = record["type"]
        if kind == "session_meta":
            session.meta(payload)
        elif kind == "turn_context":
            session.turn(payload)
        elif kind == "response_item":
            session.response_item(payload, stamp, where)
        elif kind == "event_msg":
            session.event_msg(payload, stamp)
        elif kind == "compacted":
            text = text_of(payload.get("message"))
            session.add(CanonicalEvent("user", "system", "compaction_summary", text, {}, "", stamp))
    return session.trajectory()


class _Session:
    def __init__(self) -> None:
        self.events: list[CanonicalEvent] = []
        self.calls: dict[str, str] = {}
        self.models: Counter[str] = Counter()
        self.version = ""
        self.originator = ""
        self.cwd = ""
        self.usage: dict[str, Any] = {}
        self.turns = 0

    def add(self, event: CanonicalEvent) -> None:
        self.events.append(event)

    def turn_usage(self, usage: dict[str, Any]) -> None:
        """A model call's tokens (`last_token_usage`) on the agent's last event before it: the
        page shows them per turn."""
        counts = {
            key: value
            for key, value in usage.items()
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0
        }
        for event in reversed(self.events):
            if event.source == "agent":
                if "usage" not in event.data and counts:
                    event.data = {**event.data, "usage": counts}
                return
            if event.source == "user":
                return

    def meta(self, payload: dict[str, Any]) -> None:
        self.version = self.version or text_of(payload.get("cli_version"))
        self.originator = self.originator or text_of(payload.get("originator"))
        self.cwd = self.cwd or text_of(payload.get("cwd"))
        instructions = text_of(payload.get("instructions"))
        if instructions.strip() and not any(e.type == "instructions" for e in self.events):
            self.add(CanonicalEvent("user", "system", "instructions", instructions))

    def turn(self, payload: dict[str, Any]) -> None:
        self.turns += 1
        model = text_of(payload.get("model"))
        if model:
            self.models[model] += 1
        self.cwd = self.cwd or text_of(payload.get("cwd"))

    def event_msg(self, payload: dict[str, Any], stamp: Any) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            text = text_of(payload.get("message"))
            images = [image for image in payload.get("images") or [] if isinstance(image, str)]
            data = {"images": images} if images else {}
            if text.strip() or images:
                self.add(CanonicalEvent("user", "message", "message", text, data, "", stamp))
        elif kind == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                self.usage = info["total_token_usage"]  # running totals: the last one counts
            if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
                self.turn_usage(info["last_token_usage"])
        elif kind == "turn_aborted":
            reason = text_of(payload.get("reason"))
            text = f"Turn aborted ({reason})" if reason else "Turn aborted"
            self.add(CanonicalEvent("environment", "system", "turn_aborted", text, {}, "", stamp))
        # agent_message, agent_reasoning, ...: the response items hold the same.

    def response_item(self, payload: dict[str, Any], stamp: Any, where: str) -> None:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return
        if kind == "message":
            self._message(payload, stamp)
        elif kind == "reasoning":
            summary = payload.get("summary")
            parts = summary if isinstance(summary, list) else []
            text = "\n\n".join(
                text_of(part.get("text")) for part in parts if isinstance(part, dict)
            )
            if text.strip():
                self.add(CanonicalEvent("agent", "message", "thinking", text, {}, "", stamp))
        elif kind in CALLS:
            self._call(payload, stamp, where)
        elif kind in OUTPUTS:
            self._output(payload, stamp)
        # ghost_snapshot and kinds newer than this importer: bookkeeping, skipped.

    def _message(self, payload: dict[str, Any], stamp: Any) -> None:
        role = payload.get("role")
        text = as_text(payload.get("content"))
        if not text.strip():
            return
        if role == "assistant":
            self.add(CanonicalEvent("agent", "message", "message", text, {}, "", stamp))
        elif role in ("user", "developer") and text.lstrip().startswith(CONTEXT_STARTS):
            self.add(CanonicalEvent("user", "system", "context", text, {}, "", stamp))
        elif role in ("system", "developer"):
            self.add(CanonicalEvent("user", "system", "context", text, {}, "", stamp))
        # A user message otherwise repeats the prompt its event_msg gave.

    def _call(self, payload: dict[str, Any], stamp: Any, where: str) -> None:
        kind = payload["type"]
        call = text_of(payload.get("call_id")) or text_of(payload.get("id"))
        name = text_of(payload.get("name")) or kind.removesuffix("_call")
        data: dict[str, Any] = {"tool": name, "call_type": kind}
        if kind == "function_call":
            arguments = _arguments(payload.get("arguments"))
            data["arguments"] = arguments
            text = _command(arguments) or orjson.dumps(arguments).decode()
        elif kind == "custom_tool_call":
            text = text_of(payload.get("input"))
            data["input"] = text
        elif kind == "local_shell_call":
            action = _object(payload.get("action"))
            data["action"] = action
            text = _command(action)
        else:  # web_search_call
            action = _object(payload.get("action"))
            data["action"] = action
            text = text_of(action.get("query"))
        if call:
            self.calls[call] = name
        self.add(CanonicalEvent("agent", "action", name, text, data, call, stamp))

    def _output(self, payload: dict[str, Any], stamp: Any) -> None:
        call = text_of(payload.get("call_id"))
        output = payload.get("output")
        data: dict[str, Any] = {"call_id": call}
        text = output if isinstance(output, str) else as_text(output)
        parsed = _arguments(text) if text.startswith("{") else None
        if parsed and isinstance(parsed.get("output"), str):
            # custom tools answer {"output": ..., "metadata": {"exit_code": ...}}
            text = parsed["output"]
            if isinstance(parsed.get("metadata"), dict):
                data["metadata"] = parsed["metadata"]
        exit_code = number((data.get("metadata") or {}).get("exit_code"))
        if exit_code:
            data["is_error"] = True
        name = self.calls.get(call, "tool_result")
        self.add(CanonicalEvent("environment", "observation", name, text, data, "", stamp, call))

    def trajectory(self) -> CanonicalTrajectory:
        prompts = [e.text for e in self.events if e.source == "user" and e.kind == "message"]
        metadata: dict[str, Any] = {}
        if self.cwd:
            metadata["cwd"] = self.cwd
        if self.originator:
            metadata["originator"] = self.originator
        if self.models:
            metadata["models"] = dict(self.models.most_common())
        usage = {k: v for k, v in self.usage.items() if isinstance(number(v), int)}
        if usage:
            metadata["usage"] = usage
            total = number(usage.get("total_tokens"))
            if isinstance(total, int):
                metadata["total_tokens"] = total
        return CanonicalTrajectory(
            source_format=NAME,
            events=self.events,
            title=title_from(prompts[0] if prompts else ""),
            agent="Codex CLI",
            model=self.models.most_common(1)[0][0] if self.models else "",
            agent_version=self.version,
            metadata=metadata,
        )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _arguments(value: Any) -> dict[str, Any]:
    """A function call's arguments: a JSON string of an object (anything else kept as text)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {"raw": value}
        return parsed if isinstance(parsed, dict) else {"raw": value}
    return {}


def _command(arguments: dict[str, Any]) -> str:
    command = arguments.get("command")
    if isinstance(command, list):
        return " ".join(str(part) for part in command)
    return text_of(command)
