"""Claude Code session transcripts (issue 22): the real sessions of fixtures/real with the counts
their MANIFEST entries give, the suite's own sample, and what a half-written or bad file does."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from apps.trajectories.importers import parse
from tests.samples.make_samples import claude_code_session


def _main_line(trajectory):
    return [event for event in trajectory.events if "subagent" not in event.data]


def _prompts(trajectory):
    return [e.text for e in _main_line(trajectory) if e.source == "user" and e.kind == "message"]


def _calls(events):
    return [event for event in events if event.kind == "action"]


def _jsonl(records) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def test_the_compacted_session_imports_with_its_manifest_counts(real_fixture):
    result = parse(real_fixture("claude_code_2_1_14_compaction_entire_cli.jsonl"))
    assert result.format == "claude_code" and result.errors == []
    [trajectory] = result.trajectories
    assert _prompts(trajectory) == [
        "commit this",
        "push and PR",
        "there is a PR review comment, look and see if you agree. it's fine to disagree, but "
        "let me know what you think and how to proceed",
    ]
    calls = _calls(trajectory.events)
    assert Counter(call.type for call in calls) == {
        "Bash": 17, "Read": 13, "TodoWrite": 4, "Edit": 3, "Grep": 1, "Glob": 1
    }  # fmt: skip
    results = [event for event in trajectory.events if event.kind == "observation"]
    assert sorted(result.cause for result in results) == sorted(call.original_id for call in calls)
    assert "git status" in [call.text for call in calls]
    assert len(trajectory.events) >= 42
    # The compaction: where the context was cut, and its summary shown as context.
    assert [e.type for e in trajectory.events if e.kind == "system"].count("compaction") == 1
    summary = [e for e in trajectory.events if e.type == "compaction_summary"]
    assert len(summary) == 1 and summary[0].text.startswith("This session is being continued")
    # `/compact` and its output are context, not prompts.
    context = [e.text for e in trajectory.events if e.type == "context"]
    assert any(text.startswith("<command-name>/compact") for text in context)
    assert trajectory.agent == "Claude Code" and trajectory.agent_version == "2.1.14"
    assert trajectory.model.startswith("claude-")
    assert trajectory.metadata["total_tokens"] > 0


def test_the_subagent_session_keeps_the_subagent_as_a_nested_run(real_fixture):
    [trajectory] = parse(
        real_fixture("claude_code_2_1_41_task_subagent_progress_entire_cli.jsonl")
    ).trajectories
    assert _prompts(trajectory)[0] == (
        "wingman.lock and wingman-state.json should be added to gitignore?"
    )
    assert len(_prompts(trajectory)) == 3
    main = _main_line(trajectory)
    assert Counter(call.type for call in _calls(main)) == {
        "Bash": 6, "Grep": 3, "Edit": 3, "Glob": 2, "Read": 2, "Task": 1
    }  # fmt: skip
    [task] = [call for call in _calls(main) if call.type == "Task"]
    assert task.text == "Find gitignore management code"
    nested = [event for event in trajectory.events if "subagent" in event.data]
    assert len(_calls(nested)) == 18
    assert {event.data["subagent"]["parent"] for event in nested} == {task.original_id}
    # The subagent's prompt is its own, not the user's.
    assert nested[0].source == "user" and nested[0].text.startswith("Search the codebase")


def test_the_agents_own_session_id_is_never_kept(real_fixture):
    raw = real_fixture("claude_code_2_1_41_task_subagent_progress_entire_cli.jsonl")
    [trajectory] = parse(raw).trajectories
    session_id = "acdd84ab-e724-42c8-925d-420b2a4f1861"
    assert session_id.encode() in raw
    assert trajectory.session_id == ""
    kept = orjson.dumps(
        [trajectory.metadata, [(e.text, e.data, e.original_id) for e in trajectory.events]]
    )
    assert session_id.encode() not in kept


def test_the_sample_session_reads_as_its_steps():
    [trajectory] = parse(_jsonl(claude_code_session())).trajectories
    kinds = [(e.source, e.kind, e.type) for e in _main_line(trajectory)]
    assert kinds[:4] == [
        ("user", "message", "message"),
        ("agent", "message", "thinking"),
        ("agent", "action", "Bash"),
        ("environment", "observation", "Bash"),
    ]
    edit = next(e for e in trajectory.events if e.type == "Edit" and e.kind == "observation")
    assert edit.data["tool_use_result"]["structuredPatch"][0]["oldStart"] == 1
    # Bookkeeping (snapshots, queue operations, turn durations) leaves no event.
    assert not [e for e in trajectory.events if e.type in ("turn_duration", "queue-operation")]
    # One reply split over two lines (message.id msg_2) counts its usage once.
    assert trajectory.metadata["usage"]["input_tokens"] == 5 * 12


def test_a_half_written_last_line_imports_without_it_with_a_warning():
    data = _jsonl(claude_code_session()) + b'{"type": "assistant", "message": {"con'
    [item] = parse(data).items
    assert item.error is None
    assert item.trajectory.warnings[0]["where"] == f"line {len(claude_code_session()) + 1}"
    assert "still being written" in item.trajectory.warnings[0]["message"]


def test_a_bad_line_in_the_middle_is_an_error_naming_it():
    lines = _jsonl(claude_code_session()).split(b"\n")
    lines[4] = b'{"type": "user", "message": '
    [item] = parse(b"\n".join(lines)).items
    assert item.trajectory is None and item.error.where == "line 5"


def test_a_record_of_an_unknown_type_is_skipped_not_refused():
    records = claude_code_session()
    records.insert(3, {"type": "permission-mode", "mode": "plan", "sessionId": "x"})
    records.insert(3, {"type": "attachment", "attachment": {"kind": "new"}})
    [trajectory] = parse(_jsonl(records)).trajectories
    assert len(trajectory.events) == len(
        parse(_jsonl(claude_code_session())).trajectories[0].events
    )


def test_a_user_record_without_a_message_is_refused_naming_its_line():
    records = claude_code_session()
    records[5] = {**records[5], "message": "not an object"}
    [item] = parse(_jsonl(records)).items
    assert item.trajectory is None
    assert item.error.where.startswith("line 6") and "message object" in item.error.message


@pytest.mark.django_db
def test_sharing_a_session_through_the_api(client):
    response = client.post(
        "/api/v1/trajectories",
        data=_jsonl(claude_code_session()),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    [shared] = body["trajectories"]
    assert shared["title"] == "Add a --verbose flag to greet.py and test it"


@pytest.mark.django_db
def test_a_bad_session_is_a_400_naming_the_line_and_stores_nothing(client):
    from apps.trajectories.models import Trajectory

    lines = _jsonl(claude_code_session()).split(b"\n")
    lines[4] = b"{not json"
    response = client.post(
        "/api/v1/trajectories", data=b"\n".join(lines), content_type="application/x-ndjson"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["where"].startswith("line 5")
    assert Trajectory.objects.count() == 0
