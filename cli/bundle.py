"""What `trajhub share` uploads for a session found on this machine, and what the sharer chose
to leave out of it.

- A Claude Code session with subagents is sent as a zip of its folder (`<id>.jsonl` and
  `<id>/subagents/agent-*.jsonl`), which the site imports as one trajectory.
- An OpenHands conversation (a folder of one JSON file per event) is sent as the JSON array of
  its events.
- `--without-context` drops what the agent put into the conversation as context rather than
  the user's words: Claude Code's `<system-reminder>` / command wrappers and `isMeta` records,
  Codex's environment context and AGENTS.md instructions.
- `--exclude PATH` replaces what a file's contents left in the session (a tool's result after
  reading it, the text written to it) with a note saying it was left out.

Standard library only. The agent's own session id never leaves the machine: the site gets an
HMAC of it under a key kept in the client's config file (see trajhub.session_key), so that the
id proving "same session, update it" cannot be derived from the file.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from cli import sessions
from cli.sessions import Session

LEFT_OUT = "[left out by the sharer: {path}]"


def session_token(key: str, session: Session) -> str:
    """The `session_id` sent for a session: an HMAC of the agent and its own id."""
    message = f"{session.agent}:{session.id}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def upload(session: Session, *, without_context: bool, exclude: Iterable[str]) -> tuple[str, bytes]:
    """(file name, bytes) to upload for a session, with what the sharer left out removed."""
    excluded = [item for item in exclude if item]
    if session.agent == "openhands":
        events = []
        for path in sessions.openhands_event_files(session.path):
            events.append(json.loads(path.read_bytes()))
        events = _openhands_pruned(events, excluded)
        return f"{session.id}.json", json.dumps(events).encode()
    if session.agent == "gemini" and session.path.suffix == ".json":
        doc = json.loads(session.path.read_bytes())
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            doc["messages"] = _gemini_pruned(doc["messages"], excluded)
        return session.path.name, json.dumps(doc).encode()
    prune = _PRUNERS.get(session.agent)
    main = _lines(session.path.read_bytes(), prune, without_context, excluded)
    if session.agent == "claude-code" and session.extra:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"{session.path.stem}.jsonl", main)
            for path in session.extra:
                data = _lines(path.read_bytes(), prune, without_context, excluded)
                archive.writestr(f"{session.path.stem}/subagents/{path.name}", data)
        return f"{session.path.stem}.zip", buffer.getvalue()
    return session.path.name, main


Pruner = Callable[[list[dict[str, Any]], bool, list[str]], list[dict[str, Any]]]


def _lines(data: bytes, prune: Pruner | None, without_context: bool, excluded: list[str]) -> bytes:
    if prune is None or not (without_context or excluded):
        return data
    records: list[Any] = []
    kept_raw: list[bytes] = []
    for line in data.splitlines():
        try:
            records.append(json.loads(line))
            kept_raw.append(b"")
        except ValueError:
            # A half-written last line or a bad one: sent as it was, the site reports it.
            records.append(None)
            kept_raw.append(line)
    objects = [record for record in records if isinstance(record, dict)]
    pruned = {id(record) for record in prune(objects, without_context, excluded)}
    out: list[bytes] = []
    for record, raw in zip(records, kept_raw, strict=True):
        if record is None:
            out.append(raw)
        elif not isinstance(record, dict) or id(record) in pruned:
            out.append(json.dumps(record, ensure_ascii=False).encode())
    return b"\n".join(out) + b"\n"


def matches(path: str, excluded: Sequence[str]) -> bool:
    """A path the session names is one the sharer excluded: the same path, or the same file
    named relative to the project (`.env` excludes `/home/me/app/.env`)."""
    path = path.strip()
    if not path:
        return False
    flavour = PureWindowsPath if "\\" in path else PurePosixPath
    parts = flavour(path).parts
    for item in excluded:
        wanted = (PureWindowsPath if "\\" in item else PurePosixPath)(item).parts
        if parts[-len(wanted) :] == wanted:
            return True
    return False


def _mentions(value: Any, excluded: Sequence[str]) -> bool:
    """A tool call's arguments name an excluded file (as a path argument or in a command)."""
    if isinstance(value, str):
        return any(matches(word.strip("'\""), excluded) for word in value.split())
    if isinstance(value, dict):
        return any(_mentions(item, excluded) for item in value.values())
    if isinstance(value, list):
        return any(_mentions(item, excluded) for item in value)
    return False


def _note(excluded: Sequence[str], value: Any) -> str:
    named = next((item for item in excluded if _mentions(value, [item])), excluded[0])
    return LEFT_OUT.format(path=named)


# --- Claude Code -----------------------------------------------------------------------------

_WRITES = ("content", "new_string", "old_string", "edits", "new_source")


def _claude_pruned(
    records: list[dict[str, Any]], without_context: bool, excluded: list[str]
) -> list[dict[str, Any]]:
    calls: dict[str, str] = {}  # tool_use id -> the note for the excluded file it touched
    kept = []
    for record in records:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if without_context and record.get("type") == "user":
            if record.get("isMeta"):
                continue
            if isinstance(content, str) and sessions.dropped(content):
                continue
            if isinstance(content, list):
                content = [
                    part
                    for part in content
                    if not (
                        isinstance(part, dict)
                        and part.get("type") == "text"
                        and sessions.dropped(str(part.get("text") or ""))
                    )
                ]
                if not content:
                    continue
                message["content"] = content  # type: ignore[index]
        if excluded and isinstance(content, list):
            _claude_exclude(record, content, calls, excluded)
        kept.append(record)
    return kept


def _claude_exclude(
    record: dict[str, Any], content: list[Any], calls: dict[str, str], excluded: list[str]
) -> None:
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "tool_use" and _mentions(part.get("input"), excluded):
            note = _note(excluded, part.get("input"))
            calls[str(part.get("id"))] = note
            arguments = part.get("input")
            if isinstance(arguments, dict):
                for key in _WRITES:
                    if key in arguments:
                        arguments[key] = note
        elif part.get("type") == "tool_result" and str(part.get("tool_use_id")) in calls:
            part["content"] = calls[str(part.get("tool_use_id"))]
            if "toolUseResult" in record:
                record["toolUseResult"] = calls[str(part.get("tool_use_id"))]


# --- Codex CLI -------------------------------------------------------------------------------


def _codex_pruned(
    records: list[dict[str, Any]], without_context: bool, excluded: list[str]
) -> list[dict[str, Any]]:
    calls: dict[str, str] = {}  # call_id -> note
    kept = []
    for record in records:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            kept.append(record)
            continue
        if without_context and _codex_context(record.get("type"), payload):
            continue
        if excluded:
            kind = payload.get("type")
            call_id = str(payload.get("call_id") or payload.get("id") or "")
            if kind in ("function_call", "custom_tool_call", "local_shell_call"):
                arguments = (
                    payload.get("arguments") or payload.get("input") or payload.get("action")
                )
                if _mentions(arguments, excluded):
                    calls[call_id] = _note(excluded, arguments)
            elif kind in ("function_call_output", "custom_tool_call_output") and call_id in calls:
                payload["output"] = calls[call_id]
        kept.append(record)
    return kept


def _codex_context(kind: Any, payload: dict[str, Any]) -> bool:
    if kind == "session_meta":
        payload.pop("instructions", None)  # AGENTS.md, as the session recorded it
        return False
    if kind == "turn_context":
        payload.pop("user_instructions", None)
        return False
    if kind == "response_item" and payload.get("type") == "message":
        text = sessions.text_of(payload.get("content"))
        return payload.get("role") in ("user", "developer") and sessions.dropped(text)
    return False


# --- Gemini CLI and OpenHands ----------------------------------------------------------------


def _gemini_pruned(messages: list[Any], excluded: Sequence[str]) -> list[Any]:
    for message in messages:
        if not isinstance(message, dict) or not excluded:
            continue
        for call in message.get("toolCalls") or []:
            if isinstance(call, dict) and _mentions(call.get("args"), excluded):
                note = _note(excluded, call.get("args"))
                call["result"] = [{"text": note}]
                call.pop("resultDisplay", None)
                args = call.get("args")
                if isinstance(args, dict) and "content" in args:
                    args["content"] = note
    return messages


def _gemini_lines(
    records: list[dict[str, Any]], without_context: bool, excluded: list[str]
) -> list[dict[str, Any]]:
    _gemini_pruned(records, excluded)
    for record in records:
        update = record.get("$set")
        if isinstance(update, dict) and isinstance(update.get("messages"), list):
            _gemini_pruned(update["messages"], excluded)
    return records


def _openhands_pruned(events: list[Any], excluded: list[str]) -> list[Any]:
    if not excluded:
        return events
    notes: dict[str, str] = {}  # the action's id -> note
    for event in events:
        if not isinstance(event, dict):
            continue
        arguments = event.get("args") or event.get("action")
        if _mentions(arguments, excluded):
            notes[str(event.get("id"))] = _note(excluded, arguments)
        cause = str(event.get("cause") or event.get("action_id") or "")
        if cause in notes:
            for key in ("content", "observation"):
                if isinstance(event.get(key), str | dict):
                    event[key] = notes[cause]
            if isinstance(event.get("message"), str):
                event["message"] = notes[cause]
    return events


_PRUNERS: dict[str, Pruner] = {
    "claude-code": _claude_pruned,
    "codex": _codex_pruned,
    "gemini": _gemini_lines,
}
