"""Claude Code session folders, from a zip: `<session>.jsonl` and the subagents' files,
`<session>/subagents/agent-<id>.jsonl` (newer versions) or `agent-<id>.jsonl` beside it (older
ones). One trajectory: the session's events, each subagent's a nested run of its `Task` call
(claude_code.py reads the records). Pure Python, no Django.
"""

from __future__ import annotations

from typing import Any

from apps.trajectories.importers.base import (
    CanonicalTrajectory,
    FormatError,
    SessionFolder,
    text_of,
)
from apps.trajectories.importers.claude_code import (
    CONVERSATION,
    NAME,
    Session,
    detect_lines,
    record_events,
    trajectory_of,
    walk,
)


def from_archive(entries: list[Any], decode: Any) -> SessionFolder | None:
    """A zip of a session folder: `<session>.jsonl` (the one file not named `agent-*`) and its
    subagents' `agent-*.jsonl`, under `<session>/subagents/` (newer versions) or beside it.
    None when the archive holds no Claude Code session."""
    logs = [entry for entry in entries if entry.name.endswith(".jsonl")]
    agents = [entry for entry in logs if _base(entry.name).startswith("agent-")]
    mains = [entry for entry in logs if entry not in agents]
    if len(mains) != 1:
        if len(mains) > 1 and all(_decoded(entry, decode)[1] for entry in mains[:3]):
            names = ", ".join(repr(entry.name) for entry in mains[:5])
            raise FormatError(
                f"the archive holds {len(mains)} session files ({names}); zip one session "
                "folder at a time"
            )
        return None
    (main,) = mains
    main_lines, is_session = _decoded(main, decode)
    if not is_session:
        return None
    files = [(main.name, main_lines)]
    for entry in agents:
        lines, _ = _decoded(entry, decode)
        files.append((entry.name, lines))
    return SessionFolder(NAME, files)


def _base(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1]


def _decoded(entry: Any, decode: Any) -> tuple[list[tuple[int, Any]], bool]:
    """The file's lines, and whether they read as a Claude Code session."""
    try:
        value, lines = decode(entry.data)
    except FormatError as exc:
        raise exc.at(f"entry {entry.name!r}") from None
    records = value if lines else [(1, value)]
    plain = [record for _, record in records[:40] if isinstance(record, dict)]
    return records, detect_lines(plain)


def convert_folder(folder: SessionFolder) -> CanonicalTrajectory:
    """The session and its subagents: each subagent file's events are a nested run of the
    `Task` call that started it (found by the agent id its result names), placed before that
    call's result, as the progress records of the session file would place them. Records the
    session file already streamed (by uuid) are not repeated."""
    session = Session()
    (main_name, main_lines), *agents = folder.files
    walk(session, main_lines, f"{main_name} line")
    for name, lines in agents:
        agent_id = next(
            (
                text_of(record.get("agentId"))
                for _, record in lines
                if isinstance(record, dict) and text_of(record.get("agentId"))
            ),
            _base(name).removeprefix("agent-").removesuffix(".jsonl"),
        )
        subagent = {"agent_id": agent_id, "parent": session.agent_calls.get(agent_id, "")}
        main_events, session.events = session.events, []
        for number_, record in lines:
            where = f"{name} line {number_}"
            if not isinstance(record, dict):
                raise FormatError("expected a JSON object (a Claude Code record)", where)
            uuid = text_of(record.get("uuid"))
            if record.get("type") not in CONVERSATION or (uuid and uuid in session.seen_nested):
                continue
            session.seen_nested.add(uuid)
            record_events(session, record, where, subagent)
        nested, session.events = session.events, main_events
        answer = next(
            (
                index
                for index, event in enumerate(session.events)
                if subagent["parent"]
                and event.kind == "observation"
                and event.cause == subagent["parent"]
            ),
            len(session.events),
        )
        session.events[answer:answer] = nested
    return trajectory_of(session)
