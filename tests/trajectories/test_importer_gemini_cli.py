"""Gemini CLI sessions (issue 22): a real public chat file (tests/real/MANIFEST.txt gives its
source and counts), the suite's own JSON Lines sample with its rewrites, `$set` and `$rewindTo`
lines, the single-JSON layout, and what a half-written or bad file does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from apps.trajectories.importers import parse
from tests.samples.make_samples import gemini_session

REAL = Path(__file__).parent.parent / "real" / "gemini_cli_pomodoro_timer_ai_sessions.json"


def _jsonl(records) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def _only(data: bytes):
    result = parse(data)
    assert result.format == "gemini_cli" and result.errors == [], result.errors
    [trajectory] = result.trajectories
    return trajectory


def test_the_real_chat_file_imports_with_its_manifest_counts():
    trajectory = _only(REAL.read_bytes())
    events = trajectory.events
    prompts = [e.text for e in events if e.source == "user" and e.kind == "message"]
    assert len(prompts) == 5
    assert prompts[0].startswith("Build a simple Pomodoro timer web app using HTML, CSS")
    assert prompts[3] == "Anything else we should add?"
    assert len([e for e in events if e.type == "thinking"]) == 22
    calls = [e for e in events if e.kind == "action"]
    assert Counter(call.type for call in calls) == {"replace": 8, "write_file": 3}
    assert calls[0].text == "/Users/yoavfarhi/dev/pomodoro/gemini/index.html"
    assert calls[0].data["arguments"]["content"].startswith("<!DOCTYPE html>")
    results = [e for e in events if e.kind == "observation"]
    assert [r.cause for r in results] == [c.original_id for c in calls]
    failed = [r for r in results if r.data.get("is_error")]
    assert len(failed) == 1 and failed[0].type == "replace"
    assert failed[0].text.startswith("A secondary check by an LLM determined")
    assert (trajectory.agent, trajectory.model) == ("Gemini CLI", "gemini-2.5-pro")
    assert trajectory.metadata["total_tokens"] == 126953
    assert trajectory.metadata["models"] == {"gemini-2.5-pro": 14}
    assert trajectory.metadata["start_time"] == "2025-10-21T20:04:20.819Z"
    assert len(trajectory.metadata["project_hash"]) == 64
    # The agent's own session id is never kept.
    assert b"0b23371a-ce2e-4b1c-81a0-44af5d94d9ce" in REAL.read_bytes()
    assert trajectory.session_id == ""
    assert b"0b23371a" not in orjson.dumps(trajectory.metadata)


def test_the_sample_replays_rewrites_sets_and_rewinds():
    trajectory = _only(_jsonl(gemini_session()))
    assert [(e.source, e.kind, e.type) for e in trajectory.events] == [
        ("user", "system", "context"),  # /stats: a command, not the task
        ("environment", "system", "info"),
        ("user", "message", "message"),
        ("agent", "message", "thinking"),
        ("agent", "message", "message"),
        ("agent", "action", "run_shell_command"),
        ("environment", "observation", "run_shell_command"),
        ("agent", "action", "read_file"),
        ("environment", "observation", "read_file"),
        ("agent", "action", "replace"),
        ("environment", "observation", "replace"),
        ("agent", "action", "run_shell_command"),
        # Its answer came back as a user message of functionResponse parts (newer versions).
        ("environment", "observation", "run_shell_command"),
        ("agent", "message", "message"),
    ]
    events = trajectory.events
    # The turn written three times under one id is one turn, with its last record's fields.
    assert [e.text for e in events if e.type == "message" and e.source == "agent"] == [
        "I'll look at greet.py first.",
        "greet.py takes --verbose now; a test file is still missing.",
    ]
    assert events[3].data["tokens"]["total"] == 1300 and events[3].data["model"] == "gemini-2.5-pro"
    # The rewound answer ("There is no test file yet.") is gone, and so are its tokens.
    assert not any("There is no test file yet" in e.text for e in events)
    assert trajectory.metadata["usage"]["total"] == 1300 + 1590 + 1720
    assert trajectory.metadata["total_tokens"] == 4610
    # Results are linked to their calls; the error is marked; the edit keeps its diff.
    assert [e.cause for e in events if e.kind == "observation"] == [
        "run_shell_command-1-a",
        "read_file-1-b",
        "replace-1-c",
        "run_shell_command-1-d",
    ]
    assert events[8].data["is_error"] is True
    assert events[8].text == "File not found: tests/test_greet.py"
    assert events[10].data["file_diff"]["fileDiff"].startswith("diff --git a/greet.py")
    assert "originalContent" not in events[10].data["file_diff"]
    assert events[12].text == "starting\nhello"
    # The summary set by a `$set` line names the session.
    assert trajectory.title == "Add a --verbose flag to greet.py"
    assert trajectory.metadata["end_time"] == "2025-03-04T10:00:13.000000Z"


def test_the_single_json_layout_reads_the_same():
    lines = gemini_session()
    meta, replayed = dict(lines[0]), {}
    for record in lines[1:]:
        if "id" in record:
            replayed[record["id"]] = record
    del replayed["g-2"]  # what the rewind dropped
    doc = {
        **meta,
        "summary": "Add a --verbose flag to greet.py",
        "messages": list(replayed.values()),
    }
    from_json = _only(orjson.dumps(doc))
    from_lines = _only(_jsonl(lines))
    shape = [(e.source, e.kind, e.type, e.text, e.cause) for e in from_json.events]
    assert shape == [(e.source, e.kind, e.type, e.text, e.cause) for e in from_lines.events]


def test_a_checkpoint_replaces_the_messages_and_an_unknown_rewind_drops_them():
    lines = gemini_session()
    checkpoint = {"$set": {"messages": [lines[3], lines[7]], "lastUpdated": "2025-03-04T11:00Z"}}
    trajectory = _only(_jsonl([*lines[:9], checkpoint]))
    assert [e.type for e in trajectory.events if e.kind == "action"] == [
        "run_shell_command",
        "read_file",
    ]
    gone = [*lines, {"$rewindTo": "not-a-message"}, {"id": "u-9", "type": "user", "content": "hi"}]
    assert [e.text for e in _only(_jsonl(gone)).events] == ["hi"]


def test_user_words_are_the_display_content_and_what_at_references_added_is_context():
    lines = gemini_session()
    lines[3] = {
        **lines[3],
        "content": [{"text": "Explain @greet.py"}, {"text": "--- greet.py ---\nimport sys"}],
        "displayContent": [{"text": "Explain @greet.py"}],
    }
    events = _only(_jsonl(lines)).events
    assert (events[2].kind, events[2].text) == ("message", "Explain @greet.py")
    assert events[3].type == "context" and "import sys" in events[3].text


def test_a_subagents_progress_is_a_nested_run_of_its_call():
    lines = gemini_session()
    call = {
        "id": "codebase_investigator-1-z",
        "name": "codebase_investigator",
        "args": {"objective": "Find where greet.py prints"},
        "status": "success",
        "result": [{"functionResponse": {"id": "codebase_investigator-1-z", "response": {"output": "line 4"}}}],
        "resultDisplay": {
            "isSubagentProgress": True,
            "agentName": "codebase_investigator",
            "recentActivity": [
                {"id": "1", "type": "thought", "content": "Looking for print calls", "status": "completed"},
                {"id": "2", "type": "tool_call", "content": "grep_search", "displayName": "SearchText",
                 "args": '{"pattern": "print"}', "status": "completed"},
            ],
        },
    }  # fmt: skip
    lines.insert(-1, {"id": "g-9", "type": "gemini", "content": "", "toolCalls": [call]})
    events = _only(_jsonl(lines)).events
    nested = [e for e in events if "subagent" in e.data]
    assert [(e.kind, e.type) for e in nested] == [("message", "thinking"), ("action", "SearchText")]
    assert nested[0].data["subagent"] == {
        "agent_id": "codebase_investigator",
        "parent": "codebase_investigator-1-z",
    }
    assert nested[1].text == '{"pattern": "print"}'


def test_a_half_written_last_line_is_left_out_with_a_warning():
    data = _jsonl(gemini_session()) + b'{"id": "g-5", "timestamp": "2025-03-04T10:00:14Z", "ty'
    [item] = parse(data).items
    assert item.error is None
    assert item.trajectory.warnings[0]["where"] == f"line {len(gemini_session()) + 1}"


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ({"something": "else"}, "line 4"),
        ([1, 2], "line 4"),
        ({"$set": {"messages": [{"type": "user"}]}}, "line 4, $set.messages[0]"),
    ],
)
def test_a_bad_line_is_refused_naming_it(line, where):
    lines = gemini_session()
    lines[3] = line
    [item] = parse(_jsonl(lines)).items
    assert item.trajectory is None and item.error.where == where


def test_a_bad_message_of_the_single_json_layout_is_refused_naming_it():
    doc = {**gemini_session()[0], "messages": [gemini_session()[3], "not a message"]}
    [item] = parse(orjson.dumps(doc)).items
    assert item.trajectory is None and item.error.where == "messages[1]"


@pytest.mark.django_db
def test_sharing_a_session_and_a_bad_one_through_the_api(client):
    from apps.trajectories.models import Trajectory

    response = client.post(
        "/api/v1/trajectories",
        data=_jsonl(gemini_session()),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 201, response.content
    [shared] = response.json()["trajectories"]
    assert shared["title"] == "Add a --verbose flag to greet.py"
    Trajectory.objects.all().delete()

    lines = _jsonl(gemini_session()).split(b"\n")
    lines[5] = b'{"id": "g-1", "type": "gemini", "content": ['
    response = client.post(
        "/api/v1/trajectories", data=b"\n".join(lines), content_type="application/x-ndjson"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["where"].startswith("line 6")
    assert Trajectory.objects.count() == 0


def test_the_chat_exports_carry_each_calls_own_arguments_and_id():
    from apps.trajectories.exporters import to_openai

    trajectory = _only(_jsonl(gemini_session()))
    messages = to_openai(trajectory.events, {"metadata": trajectory.metadata})["messages"]
    calls = [call for m in messages for call in m.get("tool_calls", [])]
    assert calls[0]["id"] == "run_shell_command-1-a"
    assert calls[0]["function"]["name"] == "run_shell_command"
    assert orjson.loads(calls[0]["function"]["arguments"])["command"] == "cat greet.py"
    answers = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert answers["read_file-1-b"] == "File not found: tests/test_greet.py"
