"""Codex CLI rollouts (issue 22): the real rollout of fixtures/real with the counts of its
MANIFEST entry, the suite's own sample, the older single-JSON rollout, and bad files."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from apps.trajectories.importers import parse
from tests.samples.make_samples import TASK, codex_rollout


def _jsonl(records) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def test_the_real_rollout_imports_with_its_manifest_counts(real_fixture):
    raw = real_fixture("codex_cli_0_60_1_rtchess_lichess_clone.jsonl")
    result = parse(raw)
    assert result.format == "codex_cli" and result.errors == []
    [trajectory] = result.trajectories
    prompts = [e for e in trajectory.events if e.source == "user" and e.kind == "message"]
    assert len(prompts) == 54
    assert prompts[0].text.startswith("I want to make a chess variant that isn't real time")
    calls = [e for e in trajectory.events if e.kind == "action"]
    assert Counter(call.type for call in calls) == {
        "apply_patch": 173, "shell_command": 121, "update_plan": 4
    }  # fmt: skip
    assert calls[0].text == "ls"
    results = [e for e in trajectory.events if e.kind == "observation"]
    assert sorted(r.cause for r in results) == sorted(c.original_id for c in calls)
    assert len(trajectory.events) >= 352
    assert (trajectory.agent, trajectory.agent_version) == ("Codex CLI", "0.60.1")
    assert trajectory.model == "gpt-5.1-codex-max"
    assert trajectory.metadata["total_tokens"] > 0
    # The injected environment context is context, never the task.
    context = [e for e in trajectory.events if e.type == "context"]
    assert context and context[0].text.startswith("<environment_context>")
    # The reasoning's encrypted content ("sk-..." fragments in it) is not kept: its summary is.
    thinking = [e for e in trajectory.events if e.type == "thinking"]
    assert len(thinking) == 149
    assert not [e for e in thinking if "gAAAAA" in e.text or e.data]
    # The agent's own session id is not kept as the trajectory's.
    assert b"019aad50-a7e6-7422-b7a8-0b384290624f" in raw
    assert trajectory.session_id == ""
    assert b"019aad50" not in orjson.dumps(trajectory.metadata)


def test_the_sample_reads_as_its_steps():
    [trajectory] = parse(_jsonl(codex_rollout())).trajectories
    assert [(e.source, e.kind, e.type) for e in trajectory.events] == [
        ("user", "system", "context"),
        ("user", "message", "message"),
        ("agent", "message", "thinking"),
        ("agent", "action", "shell_command"),
        ("environment", "observation", "shell_command"),
        ("agent", "action", "apply_patch"),
        ("environment", "observation", "apply_patch"),
        ("agent", "message", "message"),
    ]
    assert trajectory.title == TASK
    patch = trajectory.events[6]
    assert patch.text.startswith("Success. Updated") and patch.data["metadata"]["exit_code"] == 0
    assert trajectory.metadata["usage"]["total_tokens"] == 1350


def test_the_older_single_json_rollout_imports():
    items = [line["payload"] for line in codex_rollout() if line["type"] == "response_item"]
    doc = {"session": {"id": "x", "timestamp": "2025-05-01T10:00:00Z"}, "items": items}
    result = parse(orjson.dumps(doc))
    assert result.format == "codex_cli"
    [trajectory] = result.trajectories
    assert [e.type for e in trajectory.events if e.kind == "action"] == [
        "shell_command",
        "apply_patch",
    ]


def test_a_half_written_last_line_is_left_out_with_a_warning():
    data = _jsonl(codex_rollout()) + b'{"timestamp": "2025-03-04T10:00:12Z", "type": "resp'
    [item] = parse(data).items
    assert item.error is None
    assert item.trajectory.warnings[0]["where"] == f"line {len(codex_rollout()) + 1}"


def test_a_line_that_is_not_a_rollout_line_is_refused_naming_it():
    lines = codex_rollout()
    lines[3] = {"something": "else"}
    [item] = parse(_jsonl(lines)).items
    assert item.trajectory is None and item.error.where == "line 4"


@pytest.mark.django_db
def test_sharing_a_rollout_through_the_api(client):
    response = client.post(
        "/api/v1/trajectories", data=_jsonl(codex_rollout()), content_type="application/x-ndjson"
    )
    assert response.status_code == 201, response.content
    [shared] = response.json()["trajectories"]
    assert shared["title"] == TASK


def test_each_model_calls_tokens_go_on_the_agents_last_event_before_them():
    """Issue 22: the page shows token use per turn; Codex writes it as `last_token_usage`."""

    def tokens(last: int, total: int) -> dict:
        return {
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "last_token_usage": {"input_tokens": last, "output_tokens": 10},
                    "total_token_usage": {"input_tokens": total, "output_tokens": 20},
                },
            },
        }

    records = [
        {"type": "session_meta", "payload": {"id": "x", "cwd": "/w"}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "hi"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "one"}],
            },
        },
        tokens(100, 100),
        {"type": "event_msg", "payload": {"type": "user_message", "message": "again"}},
        tokens(5, 105),  # nothing of the agent's since the prompt: not put on the prompt
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "two"}],
            },
        },
        tokens(200, 305),
    ]

    trajectory = parse(_jsonl(records)).trajectories[0]

    usage = [(event.text, event.data.get("usage")) for event in trajectory.events]
    assert usage == [
        ("hi", None),
        ("one", {"input_tokens": 100, "output_tokens": 10}),
        ("again", None),
        ("two", {"input_tokens": 200, "output_tokens": 10}),
    ]
    assert trajectory.metadata["usage"]["input_tokens"] == 305
