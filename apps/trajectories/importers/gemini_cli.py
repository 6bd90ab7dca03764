"""Gemini CLI sessions: `~/.gemini/tmp/<project hash or id>/chats/session-<time>-<id8>.json[l]`.

Two layouts (both read here, learnt from `@google/gemini-cli-core`'s chat recording service):
- the single-JSON chat file `{sessionId, projectHash, startTime, lastUpdated, messages, summary?,
  directories?, kind?}`;
- the newer JSON Lines file (and a subagent's, under `chats/<parent session>/`): a metadata line
  `{sessionId, projectHash, startTime, ...}`, then message records, each written again under the
  same `id` whenever it changes (the last one counts, in the place of the first), `{"$set": {...}}`
  lines updating the metadata (a `$set` of `messages` replaces them all: a checkpoint) and
  `{"$rewindTo": id}` lines dropping that message and all after it.

A message has `id`, `timestamp`, `type` and `content` (a string or a list of parts: `text`,
`inlineData`, `functionCall`, `functionResponse`; a text part with `thought: true` is
reasoning); `displayContent` is what the user typed when `content` holds more (the files an
@-reference pulled in). `user` messages are prompts, except slash commands and the
`<session_context>` / `<hook_context>` preambles (shown as context), and the tool answers newer
versions record as user messages of `functionResponse` parts. A `gemini` message has
`thoughts[{subject, description, timestamp}]`, `tokens{input, output, cached, thoughts, tool,
total}`, `model` and `toolCalls[{id, name, args, result, status, resultDisplay, ...}]`: each call
is an action, its `result` (`functionResponse.response.output` or `.error`) the observation
caused by it, in the same record. `info`, `warning` and `error` messages are system events.
A call whose `resultDisplay` is a subagent's progress keeps that subagent's recent activity as a
nested run of the call (`data["subagent"]`, as the Claude Code importer does).

The agent's own session id is never kept (DESIGN.md: a re-share proves itself with the client's
HMAC); the project hash, the workspace directories and the session's kind are.

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
    json_text,
    number,
    parse_timestamp,
    small_value,
    text_of,
    title_from,
)

NAME = "gemini_cli"
LABEL = "Gemini CLI session"

MESSAGE_TYPES = {"user", "gemini", "info", "warning", "error"}
TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")
# What a user message starting so is: Gemini CLI leaves these out of the model's history too.
CONTEXT_STARTS = ("<session_context>", "<hook_context>")
COMMAND_STARTS = ("/", "?")
# The argument that says what a call does, by the first of these keys it has.
SUMMARY_KEYS = (
    "command",
    "file_path",
    "absolute_path",
    "dir_path",
    "path",
    "pattern",
    "query",
    "url",
    "prompt",
    "fact",
    "objective",
    "description",
)
FINISHED = {"success", "error", "cancelled"}


def _is_meta(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


def _is_message(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("id"), str)
        and isinstance(record.get("type"), str)
        and "content" in record
        and "sessionId" not in record
    )


def _is_line(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    return (
        _is_meta(record)
        or _is_message(record)
        or isinstance(record.get("$set"), dict)
        or isinstance(record.get("$rewindTo"), str)
    )


def detect(doc: Any) -> bool:
    """The single-JSON chat file (or a JSON Lines file of one line holding the whole record)."""
    return _is_meta(doc) and isinstance(doc.get("messages"), list)


def detect_lines(records: list[Any]) -> bool:
    """A metadata line among the first, and most lines are Gemini CLI lines."""
    sample = records[:20]
    if not sample or not any(_is_meta(record) for record in records[:5]):
        return False
    return sum(1 for record in sample if _is_line(record)) * 2 >= len(sample)


def convert(doc: Any) -> CanonicalTrajectory:
    if not detect(doc):
        raise FormatError(
            'expected a Gemini CLI chat file: {"sessionId", "projectHash", "messages": [...]}'
        )
    messages: dict[str, dict[str, Any]] = {}
    for index, message in enumerate(doc["messages"]):
        _keep(messages, message, f"messages[{index}]")
    return _Session(doc).read(list(messages.values()))


def convert_lines(records: Iterable[tuple[int, Any]]) -> CanonicalTrajectory:
    """Replay the file as Gemini CLI loads it: the last record of each id, in first-seen order,
    less what a rewind dropped; the metadata merged from the first line and every `$set`."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for number_, record in records:
        where = f"line {number_}"
        if not isinstance(record, dict):
            raise FormatError("expected a JSON object (a Gemini CLI session line)", where)
        if isinstance(record.get("$rewindTo"), str):
            _rewind(messages, record["$rewindTo"])
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):  # a checkpoint: the messages anew
                messages.clear()
                for index, message in enumerate(update["messages"]):
                    _keep(messages, message, f"{where}, $set.messages[{index}]")
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif _is_meta(record):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for index, message in enumerate(record.get("messages") or []):
                _keep(messages, message, f"{where}, messages[{index}]")
        elif _is_message(record):
            messages[record["id"]] = record
        else:
            raise FormatError(
                "expected a Gemini CLI session line: the metadata, a message with an id, "
                "a $set or a $rewindTo",
                where,
            )
    if not meta:
        raise FormatError("no metadata line (sessionId, projectHash) in this Gemini CLI session")
    return _Session(meta).read(list(messages.values()))


def _keep(messages: dict[str, dict[str, Any]], message: Any, where: str) -> None:
    if not _is_message(message):
        raise FormatError("expected a message object with an id, a type and content", where)
    messages[message["id"]] = message


def _rewind(messages: dict[str, dict[str, Any]], message_id: str) -> None:
    if message_id not in messages:
        messages.clear()  # as Gemini CLI does: a rewind to an unknown id drops everything
        return
    ids = list(messages)
    for dropped in ids[ids.index(message_id) :]:
        del messages[dropped]


def _parts(content: Any) -> list[dict[str, Any]]:
    """`content` as a list of parts (a string is one text part; what is not a part, left out)."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        parts = [{"text": part} if isinstance(part, str) else part for part in content]
        return [part for part in parts if isinstance(part, dict)]
    return []


def _image(part: dict[str, Any]) -> str:
    inline = part.get("inlineData")
    if not isinstance(inline, dict):
        return ""
    mime, data = text_of(inline.get("mimeType")), text_of(inline.get("data"))
    return f"data:{mime};base64,{data}" if mime.startswith("image/") and data else ""


def _response_text(response: Any) -> tuple[str, bool]:
    """A functionResponse's text, and whether it says the call failed."""
    if isinstance(response, dict):
        if "error" in response:
            return json_text(response["error"]), True
        if "output" in response:
            return json_text(response["output"]), False
    return json_text(response), False


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _answers(message: dict[str, Any]) -> bool:
    """A user message that only carries tool answers (functionResponse parts)."""
    parts = _parts(message.get("content"))
    return bool(parts) and all(
        isinstance(part, dict) and isinstance(part.get("functionResponse"), dict) for part in parts
    )


class _Session:
    """What is read from the messages: the events, and the facts for the metadata."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.events: list[CanonicalEvent] = []
        self.models: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()
        self.calls: dict[str, str] = {}  # call id -> tool name
        self.answered: set[str] = set()
        # Finished calls whose record holds no result: it may come as a user message of
        # functionResponse parts next (newer versions); if not, what the CLI showed is the result.
        self.pending: dict[str, tuple[str, dict[str, Any], Any]] = {}

    def add(self, event: CanonicalEvent) -> CanonicalEvent:
        self.events.append(event)
        return event

    def read(self, messages: list[dict[str, Any]]) -> CanonicalTrajectory:
        for message in messages:
            kind = message["type"]
            stamp = parse_timestamp(message.get("timestamp"))
            if not (kind == "user" and _answers(message)):
                self._flush()
            if kind == "user":
                self._user(message, stamp)
            elif kind == "gemini":
                self._gemini(message, stamp)
            elif kind in MESSAGE_TYPES:
                text = "\n".join(text_of(p.get("text")) for p in _parts(message.get("content")))
                data: dict[str, Any] = {"is_error": True} if kind == "error" else {}
                event = CanonicalEvent("environment", "system", kind, text, data, message["id"])
                event.timestamp = stamp
                self.add(event)
            # Message types newer than this importer (or a fork's own): skipped.
        self._flush()
        return self._trajectory()

    def _flush(self) -> None:
        for call, (name, facts, stamp) in list(self.pending.items()):
            if call not in self.answered:
                self._result(call, name, [], facts, stamp)
        self.pending.clear()

    def _user(self, message: dict[str, Any], stamp: Any) -> None:
        parts = _parts(message.get("content"))
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                call = text_of(response.get("id"))
                if call not in self.answered:  # the call's own record had no result
                    self._result(call, text_of(response.get("name")), [part], {}, stamp)
        texts = [text_of(p.get("text")) for p in parts if isinstance(p, dict)]
        images = [url for p in parts if isinstance(p, dict) and (url := _image(p))]
        sent = "\n".join(t for t in texts if t) + ("\n[image]" * len(images))
        shown = message.get("displayContent")
        typed = "\n".join(text_of(p.get("text")) for p in _parts(shown)) if shown else ""
        text = typed or sent
        if not text.strip():
            return
        ident = message["id"]
        data: dict[str, Any] = {"images": images} if images else {}
        stripped = text.lstrip()
        if stripped.startswith(COMMAND_STARTS) or stripped.startswith(CONTEXT_STARTS):
            event = CanonicalEvent("user", "system", "context", text, data, ident, stamp)
        else:
            event = CanonicalEvent("user", "message", "message", text, data, ident, stamp)
        self.add(event)
        if typed and sent.strip() and sent != typed:
            # What the @-references added to the prompt: context, not the user's words.
            self.add(CanonicalEvent("user", "system", "context", sent, {}, f"{ident}:sent", stamp))

    def _gemini(self, message: dict[str, Any], stamp: Any) -> None:
        first = len(self.events)
        model = text_of(message.get("model"))
        if model:
            self.models[model] += 1
        thoughts = message.get("thoughts")
        for thought in thoughts if isinstance(thoughts, list) else []:
            if not isinstance(thought, dict):
                continue
            subject, description = (
                text_of(thought.get("subject")),
                text_of(thought.get("description")),
            )
            text = f"**{subject}** {description}".strip() if subject else description.strip()
            if text and text != "****":
                when = parse_timestamp(thought.get("timestamp")) or stamp
                self.add(CanonicalEvent("agent", "message", "thinking", text, {}, "", when))
        calls = message.get("toolCalls")
        calls = (
            [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        )
        listed = {text_of(call.get("id")) for call in calls}
        for part in _parts(message.get("content")):
            if not isinstance(part, dict):
                continue
            text = text_of(part.get("text"))
            if part.get("thought") is True:
                if text.strip() and not thoughts:
                    self.add(CanonicalEvent("agent", "message", "thinking", text, {}, "", stamp))
            elif text.strip():
                self.add(CanonicalEvent("agent", "message", "message", text, {}, "", stamp))
            elif isinstance(part.get("functionCall"), dict):
                function = part["functionCall"]
                if text_of(function.get("id")) not in listed:
                    self._call({**function, "args": function.get("args")}, stamp)
        for call in calls:
            self._call(call, stamp)
        tokens = message.get("tokens")
        usage = (
            {k: v for k, v in tokens.items() if isinstance(number(v), int)}
            if isinstance(tokens, dict)
            else {}
        )
        for key in TOKEN_KEYS:
            if key in usage and usage[key] >= 0:
                self.tokens[key] += usage[key]
        if len(self.events) > first:
            # The turn's own figures, on its first event (the page shows usage per turn).
            head = self.events[first]
            head.data = {
                **head.data,
                "message_id": message["id"],
                **({"model": model} if model else {}),
                **({"tokens": usage} if usage else {}),
            }

    def _call(self, call: dict[str, Any], stamp: Any) -> None:
        name = text_of(call.get("name")) or "tool"
        ident = text_of(call.get("id"))
        args = _object(call.get("args"))
        summary = next((text_of(args.get(k)) for k in SUMMARY_KEYS if text_of(args.get(k))), "")
        data: dict[str, Any] = {"tool": name, "arguments": args}
        for key, field in (("display_name", "displayName"), ("description", "description")):
            value = small_value(call.get(field), max_chars=500)
            if isinstance(value, str) and value:
                data[key] = value
        status = text_of(call.get("status"))
        if status:
            data["status"] = status
        when = parse_timestamp(call.get("timestamp")) or stamp
        text = summary or (orjson.dumps(args).decode() if args else "")
        self.add(CanonicalEvent("agent", "action", name, text, data, ident, when))
        if ident:
            self.calls[ident] = name
        display = call.get("resultDisplay")
        if isinstance(display, dict) and display.get("isSubagentProgress") is True:
            self._subagent(ident, display, when)
        result = call.get("result")
        facts = {"status": status, "display": display}
        if result is not None:
            parts = _parts(result) if not isinstance(result, str) else [{"text": result}]
            self._result(ident, name, parts, facts, when)
        elif status in FINISHED and ident:
            self.pending[ident] = (name, facts, when)

    def _result(
        self, call: str, name: str, parts: list[Any], facts: dict[str, Any], stamp: Any
    ) -> None:
        texts: list[str] = []
        failed = facts.get("status") == "error"
        images: list[str] = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            response = part.get("functionResponse")
            if isinstance(response, dict):
                text, error = _response_text(response.get("response"))
                texts.append(text)
                failed = failed or error
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif url := _image(part):
                images.append(url)
                texts.append("[image]")
        display = facts.get("display")
        text = "\n".join(t for t in texts if t)
        if not text and isinstance(display, str):
            text = display
        status = facts.get("status") or ""
        if not text and status == "cancelled":
            text = "Cancelled"
        data: dict[str, Any] = {"call_id": call}
        if status:
            data["status"] = status
        if failed or status == "cancelled":
            data["is_error"] = True
        if images:
            data["images"] = images
        self._display(data, display)
        type_ = self.calls.get(call) or name or "tool_result"
        if call:
            self.answered.add(call)
        self.add(CanonicalEvent("environment", "observation", type_, text, data, "", stamp, call))

    @staticmethod
    def _display(data: dict[str, Any], display: Any) -> None:
        """What the CLI showed of the result, where it adds to the text: a file's diff, a todo
        list (without the bulky copies of the file before and after)."""
        if not isinstance(display, dict):
            return
        if isinstance(display.get("fileDiff"), str):
            keep = ("fileName", "filePath", "fileDiff", "diffStat", "isNewFile")
            data["file_diff"] = {key: display[key] for key in keep if key in display}
        elif isinstance(display.get("todos"), list):
            data["todos"] = small_value(display["todos"], depth=3)

    def _subagent(self, call: str, progress: dict[str, Any], stamp: Any) -> None:
        agent = text_of(progress.get("agentName")) or "subagent"
        subagent = {"agent_id": agent, "parent": call}
        activity = progress.get("recentActivity")
        for item in activity if isinstance(activity, list) else []:
            if not isinstance(item, dict):
                continue
            text = text_of(item.get("content"))
            ident = f"{call}:{text_of(item.get('id'))}"
            data: dict[str, Any] = {"subagent": subagent}
            if item.get("type") == "thought" and text.strip():
                self.add(CanonicalEvent("agent", "message", "thinking", text, data, ident, stamp))
            elif item.get("type") == "tool_call":
                name = text_of(item.get("displayName")) or text or "tool"
                data.update(tool=name, status=text_of(item.get("status")))
                args = text_of(item.get("args"))
                self.add(CanonicalEvent("agent", "action", name, args or text, data, ident, stamp))

    def _trajectory(self) -> CanonicalTrajectory:
        meta = self.meta
        prompts = [
            e.text
            for e in self.events
            if e.source == "user" and e.kind == "message" and "subagent" not in e.data
        ]
        summary = text_of(meta.get("summary"))
        metadata: dict[str, Any] = {}
        if text_of(meta.get("projectHash")):
            metadata["project_hash"] = meta["projectHash"]
        directories = meta.get("directories")
        if isinstance(directories, list) and directories:
            metadata["directories"] = [d for d in directories[:20] if isinstance(d, str)]
        for key, field in (
            ("kind", "kind"),
            ("start_time", "startTime"),
            ("end_time", "lastUpdated"),
        ):
            if text_of(meta.get(field)):
                metadata[key] = meta[field]
        if summary:
            metadata["summary"] = summary
        if self.models:
            metadata["models"] = dict(self.models.most_common())
        if self.tokens:
            metadata["usage"] = dict(self.tokens)
            if "total" in self.tokens:
                metadata["total_tokens"] = self.tokens["total"]
        return CanonicalTrajectory(
            source_format=NAME,
            events=self.events,
            title=title_from(summary or (prompts[0] if prompts else "")),
            agent="Gemini CLI",
            model=self.models.most_common(1)[0][0] if self.models else "",
            metadata=metadata,
        )
