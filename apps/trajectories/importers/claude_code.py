"""Claude Code session transcripts: `~/.claude/projects/<encoded dir>/<session>.jsonl`.

One file is one session: each line a record with a `type`. `user` and `assistant` records carry
a `message` whose `content` is a string or a list of blocks (`text`, `thinking`, `tool_use`,
`tool_result`, `image`); `system` records say where the context was compacted
(`compact_boundary`) or an API error; `summary` records name the session; `progress` records of
`data.type: agent_progress` stream a subagent's messages (the `Task` tool). Everything else is
bookkeeping (file-history snapshots, queue operations, hook progress, turn durations) and is
skipped; an unknown type is skipped too, never an error.

Events: the user's prompts -> user messages; what Claude Code wrapped around them
(`<command-name>`, `<local-command-stdout>`, `<system-reminder>`, `isMeta` records) and the
compaction summary -> system events ("context", "compaction_summary"), so they are shown as
context and never taken for the user's words; text -> agent messages; thinking -> agent messages
of type "thinking"; each `tool_use` -> an action of the tool's name; each `tool_result` -> an
observation of that tool, caused by its `tool_use` (`is_error` kept). A subagent's events carry
`data["subagent"]` (its id and the `Task` call it works for): they stay a nested run of that
call, not part of the main line (a zipped session folder, whose subagents have files of their
own, is read by claude_code_folder.py). The agent's own session id is never kept (DESIGN.md: a
re-share proves itself with the client's HMAC, which cannot be derived from the file).

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
    small_value,
    text_of,
    title_from,
)

NAME = "claude_code"
LABEL = "Claude Code session"

CONVERSATION = {"user", "assistant", "system"}
BOOKKEEPING = {"summary", "progress", "file-history-snapshot", "queue-operation"}
# Wrappers Claude Code writes into user records: context, not the user's words.
CONTEXT_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
)
SYSTEM_SUBTYPES = {"compact_boundary", "api_error", "local_command", "informational"}
# What a tool call reads as, by tool: the input field that says what it does.
TOOL_SUMMARY = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
}


def is_record(item: Any) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return False
    kind = item["type"]
    if kind in CONVERSATION or kind == "progress":
        return isinstance(item.get("sessionId"), str) and isinstance(item.get("uuid"), str)
    return kind in BOOKKEEPING


def detect_lines(records: list[Any]) -> bool:
    """Most of the first lines are Claude Code records, and one of them is a conversation
    record (a file of snapshots alone is not a session)."""
    sample = records[:20]
    if not sample:
        return False
    hits = sum(1 for record in sample if is_record(record))
    return hits * 2 >= len(sample) and any(
        is_record(record) and record["type"] in CONVERSATION for record in records[:200]
    )


def detect(doc: Any) -> bool:
    """A one-line session (a single JSON object)."""
    return is_record(doc) and doc["type"] in CONVERSATION


def convert(doc: Any) -> CanonicalTrajectory:
    if not isinstance(doc, dict):
        raise FormatError("expected a Claude Code record (a JSON object)")
    return convert_lines([(1, doc)])


class Session:
    """What is read while walking the records: the events, and the facts for the metadata."""

    def __init__(self) -> None:
        self.events: list[CanonicalEvent] = []
        self.tools: dict[str, str] = {}
        self.models: Counter[str] = Counter()
        self.usage: dict[str, dict[str, Any]] = {}  # message id -> its usage (the last line's)
        self.versions: list[str] = []
        self.cwd = ""
        self.branch = ""
        self.summary = ""
        self.compactions = 0
        self.subagents: set[str] = set()
        self.seen_nested: set[str] = set()
        self.agent_calls: dict[str, str] = {}  # a subagent's id -> the Task call it answered


def convert_lines(records: Iterable[tuple[int, Any]]) -> CanonicalTrajectory:
    session = Session()
    walk(session, records, "line")
    return trajectory_of(session)


def walk(session: Session, records: Iterable[tuple[int, Any]], prefix: str) -> None:
    for number_, record in records:
        where = f"{prefix} {number_}"
        if not isinstance(record, dict):
            raise FormatError("expected a JSON object (a Claude Code record)", where)
        kind = record.get("type")
        if not isinstance(kind, str):
            continue  # not a record of any known type: skipped like an unknown one
        if kind in CONVERSATION:
            _facts(session, record)
            subagent = _sidechain(record)
            record_events(session, record, where, subagent)
        elif kind == "summary":
            session.summary = session.summary or text_of(record.get("summary"))
        elif kind == "progress":
            _progress(session, record, where)
        # Anything else is bookkeeping, or a type newer than this importer: skipped.


def _facts(session: Session, record: dict[str, Any]) -> None:
    version = text_of(record.get("version"))
    if version and version not in session.versions:
        session.versions.append(version)
    session.cwd = session.cwd or text_of(record.get("cwd"))
    session.branch = session.branch or text_of(record.get("gitBranch"))


def _sidechain(record: dict[str, Any]) -> dict[str, str] | None:
    """Older versions write a subagent's records into the session file, marked isSidechain."""
    if record.get("isSidechain") is True:
        return {"agent_id": text_of(record.get("agentId")) or "sidechain", "parent": ""}
    return None


def _progress(session: Session, record: dict[str, Any], where: str) -> None:
    data = record.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return  # hook and bash progress: bookkeeping (the tool's result says the outcome)
    nested = data.get("message")
    if not isinstance(nested, dict) or nested.get("type") not in ("user", "assistant"):
        return
    # The same nested message can be streamed again in a later progress line.
    key = text_of(nested.get("uuid")) or orjson.dumps(nested, option=orjson.OPT_SORT_KEYS).decode()
    if key in session.seen_nested:
        return
    session.seen_nested.add(key)
    agent_id = text_of(data.get("agentId")) or "subagent"
    subagent = {"agent_id": agent_id, "parent": text_of(record.get("parentToolUseID"))}
    if isinstance(data.get("prompt"), str) and agent_id not in session.subagents:
        session.subagents.add(agent_id)
    nested_record = {**nested, "timestamp": nested.get("timestamp") or record.get("timestamp")}
    record_events(session, nested_record, where, subagent)


def record_events(
    session: Session, record: dict[str, Any], where: str, subagent: dict[str, str] | None
) -> None:
    kind = record["type"]
    stamp = parse_timestamp(record.get("timestamp"))
    uuid = text_of(record.get("uuid"))
    if kind == "system":
        _system(session, record, stamp, uuid, subagent)
        return
    message = record.get("message")
    if not isinstance(message, dict):
        raise FormatError(f"a {kind} record without a message object", where)
    content = message.get("content")
    if kind == "assistant":
        _assistant(session, message, stamp, uuid, subagent, where)
    elif isinstance(content, str):
        _user_text(session, record, content, stamp, uuid, subagent)
    elif isinstance(content, list):
        _user_blocks(session, record, content, stamp, uuid, subagent, where)
    else:
        raise FormatError("message.content is neither text nor a list of blocks", where)


def _add(session: Session, event: CanonicalEvent, subagent: dict[str, str] | None) -> None:
    if subagent is not None:
        event.data = {**event.data, "subagent": subagent}
    session.events.append(event)


def _system(
    session: Session,
    record: dict[str, Any],
    stamp: Any,
    uuid: str,
    subagent: dict[str, str] | None,
) -> None:
    subtype = text_of(record.get("subtype"))
    if subtype not in SYSTEM_SUBTYPES:
        return  # turn durations, hook summaries: bookkeeping
    text = text_of(record.get("content"))
    data: dict[str, Any] = {"subtype": subtype}
    if subtype == "compact_boundary":
        session.compactions += 1
        meta = record.get("compactMetadata")
        if isinstance(meta, dict):
            data["compact"] = small_value(meta)
            tokens = number(meta.get("preTokens"))
            trigger = text_of(meta.get("trigger"))
            text = f"Context compacted ({trigger or 'auto'}" + (
                f", {tokens:,} tokens before)" if tokens is not None else ")"
            )
    type_ = "compaction" if subtype == "compact_boundary" else subtype
    event = CanonicalEvent("environment", "system", type_, text, data, uuid, stamp)
    _add(session, event, subagent)


def _is_context(text: str, record: dict[str, Any]) -> bool:
    return record.get("isMeta") is True or text.lstrip().startswith(CONTEXT_TAGS)


def _user_text(
    session: Session,
    record: dict[str, Any],
    text: str,
    stamp: Any,
    uuid: str,
    subagent: dict[str, str] | None,
) -> None:
    if record.get("isCompactSummary") is True:
        event = CanonicalEvent("user", "system", "compaction_summary", text, {}, uuid, stamp)
    elif _is_context(text, record):
        event = CanonicalEvent("user", "system", "context", text, {}, uuid, stamp)
    elif not text.strip():
        return
    else:
        event = CanonicalEvent("user", "message", "message", text, {}, uuid, stamp)
    _add(session, event, subagent)


def _user_blocks(
    session: Session,
    record: dict[str, Any],
    blocks: list[Any],
    stamp: Any,
    uuid: str,
    subagent: dict[str, str] | None,
    where: str,
) -> None:
    texts: list[str] = []
    images: list[str] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise FormatError(f"content block {index} is not an object", where)
        kind = block.get("type")
        if kind == "tool_result":
            _tool_result(session, record, block, stamp, subagent, where)
        elif kind == "text":
            texts.append(text_of(block.get("text")))
        elif kind == "image":
            url = _image_url(block)
            if url:
                images.append(url)
            texts.append("[image]")
    text = "\n".join(part for part in texts if part)
    if not text.strip():
        return
    before = len(session.events)
    _user_text(session, record, text, stamp, f"{uuid}" if uuid else "", subagent)
    if images and len(session.events) > before:
        session.events[-1].data = {**session.events[-1].data, "images": images}


def _image_url(block: dict[str, Any]) -> str:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return ""
    media, data = text_of(source.get("media_type")), text_of(source.get("data"))
    return f"data:{media};base64,{data}" if media.startswith("image/") and data else ""


def _tool_result(
    session: Session,
    record: dict[str, Any],
    block: dict[str, Any],
    stamp: Any,
    subagent: dict[str, str] | None,
    where: str,
) -> None:
    call = text_of(block.get("tool_use_id"))
    content = block.get("content")
    images = [
        url
        for part in (content if isinstance(content, list) else [])
        if isinstance(part, dict) and part.get("type") == "image" and (url := _image_url(part))
    ]
    text = as_text(content)
    data: dict[str, Any] = {"tool_use_id": call}
    if block.get("is_error") is True:
        data["is_error"] = True
    details = record.get("toolUseResult")
    if isinstance(details, dict) and text_of(details.get("agentId")) and call:
        session.agent_calls[details["agentId"]] = call
    if details is not None:
        # The tool's own account (a structured patch, the file read, exit codes), without the
        # bulky copies of files it also holds.
        data["tool_use_result"] = small_value(details, max_chars=20_000, depth=4)
    if images:
        data["images"] = images
    type_ = session.tools.get(call, "tool_result")
    event = CanonicalEvent("environment", "observation", type_, text, data, "", stamp, call)
    _add(session, event, subagent)


def _assistant(
    session: Session,
    message: dict[str, Any],
    stamp: Any,
    uuid: str,
    subagent: dict[str, str] | None,
    where: str,
) -> None:
    model = text_of(message.get("model"))
    if model and not model.startswith("<"):  # "<synthetic>": written by Claude Code itself
        session.models[model] += 1
    message_id = text_of(message.get("id"))
    if isinstance(message.get("usage"), dict) and subagent is None:
        # One reply is split over several lines sharing message.id, each with its usage.
        session.usage[message_id or uuid] = message["usage"]
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise FormatError("an assistant message without content blocks", where)
    data_base: dict[str, Any] = {"message_id": message_id} if message_id else {}
    if model:
        data_base["model"] = model
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise FormatError(f"content block {index} is not an object", where)
        kind = block.get("type")
        if kind == "text":
            text = text_of(block.get("text"))
            if text.strip():
                event = CanonicalEvent("agent", "message", "message", text, dict(data_base))
                event.timestamp = stamp
                _add(session, event, subagent)
        elif kind in ("thinking", "redacted_thinking"):
            text = text_of(block.get("thinking"))
            if text.strip():
                event = CanonicalEvent("agent", "message", "thinking", text, dict(data_base))
                event.timestamp = stamp
                _add(session, event, subagent)
        elif kind == "tool_use":
            _tool_use(session, block, stamp, data_base, subagent)


def _tool_use(
    session: Session,
    block: dict[str, Any],
    stamp: Any,
    data_base: dict[str, Any],
    subagent: dict[str, str] | None,
) -> None:
    name = text_of(block.get("name")) or "tool"
    call = text_of(block.get("id"))
    if call:
        session.tools[call] = name
    raw_input = block.get("input")
    arguments: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    field = TOOL_SUMMARY.get(name)
    summary = text_of(arguments.get(field)) if field else ""
    if not summary:
        summary = orjson.dumps(arguments).decode() if arguments else ""
    data = {**data_base, "tool": name, "input": arguments}
    event = CanonicalEvent("agent", "action", name, summary, data, call, stamp)
    _add(session, event, subagent)


def trajectory_of(session: Session) -> CanonicalTrajectory:
    prompts = [
        event.text
        for event in session.events
        if event.source == "user" and event.kind == "message" and "subagent" not in event.data
    ]
    title = title_from(session.summary or (prompts[0] if prompts else ""))
    metadata: dict[str, Any] = {}
    if session.cwd:
        metadata["cwd"] = session.cwd
    if session.branch:
        metadata["git_branch"] = session.branch
    if session.models:
        metadata["models"] = dict(session.models.most_common())
    if session.compactions:
        metadata["compactions"] = session.compactions
    _usage_per_turn(session)
    tokens = _token_totals(session.usage.values())
    if tokens:
        metadata["usage"] = tokens
        metadata["total_tokens"] = sum(tokens.values())
    return CanonicalTrajectory(
        source_format=NAME,
        events=session.events,
        title=title,
        agent="Claude Code",
        model=session.models.most_common(1)[0][0] if session.models else "",
        agent_version=session.versions[-1] if session.versions else "",
        metadata=metadata,
    )


def _usage_per_turn(session: Session) -> None:
    """Each reply's token usage on its last event (the page shows it per turn)."""
    last: dict[str, CanonicalEvent] = {}
    for event in session.events:
        message_id = event.data.get("message_id")
        if isinstance(message_id, str) and message_id in session.usage:
            last[message_id] = event
    for message_id, event in last.items():
        usage = _token_totals([session.usage[message_id]])
        if usage:
            event.data = {**event.data, "usage": usage}


def _token_totals(usages: Any) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for usage in usages:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ):
            value = number(usage.get(key))
            if isinstance(value, int) and value >= 0:
                totals[key] += value
    return dict(totals)
