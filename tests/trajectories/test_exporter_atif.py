"""The atif export (issue 22): every format's sample exports to a trajectory Harbor's own models
accept (`harbor.models.trajectories`, from the `harbor` package on PyPI), and importing the
export gives back the same steps, tool calls and results."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from apps.trajectories.exporters import export_events, to_atif
from apps.trajectories.importers import parse
from tests.conftest import SAMPLE_FILES, SAMPLES_DIR, skip_or_fail


def _harbor_trajectory():
    try:
        from harbor.models.trajectories import Trajectory
    except ImportError:
        # harbor needs Python 3.12 and pulls in litellm, supabase and fastapi; its trajectory
        # models need only pydantic, so .ci/run installs the wheel without its dependencies.
        skip_or_fail(
            "harbor is not installed (pip install --no-deps --ignore-requires-python harbor)"
        )
    return Trajectory


def _meta(trajectory) -> dict:
    return {
        "id": "s" * 16,
        "title": trajectory.title,
        "agent": trajectory.agent,
        "model": trajectory.model,
        "agent_version": trajectory.agent_version,
        "source_format": trajectory.source_format,
        "license": "CC-BY-4.0",
        "metadata": trajectory.metadata,
    }


def _sample_trajectories():
    for name in SAMPLE_FILES:
        for index, trajectory in enumerate(parse((SAMPLES_DIR / name).read_bytes()).trajectories):
            yield pytest.param(trajectory, id=f"{name}[{index}]")


def _linked(events) -> Counter:
    """The text of every result that answers a call."""
    calls = {e.original_id for e in events if e.kind == "action"}
    return Counter(e.text for e in events if e.kind == "observation" and e.cause in calls)


@pytest.mark.parametrize("trajectory", list(_sample_trajectories()))
def test_every_samples_export_is_valid_atif_and_imports_back_the_same(trajectory):
    Trajectory = _harbor_trajectory()
    meta = _meta(trajectory)
    exported = export_events("atif", trajectory.events, meta=meta)
    checked = Trajectory.model_validate_json(exported)
    assert checked.steps and checked.agent.name
    back = parse(exported)
    assert back.format == "atif" and back.errors == []
    [again] = back.trajectories
    # The same steps, tool calls and results: exporting what came back gives the same file.
    first, second = orjson.loads(exported), to_atif(again.events, meta)
    assert second["steps"] == first["steps"]
    assert second.get("subagent_trajectories") == first.get("subagent_trajectories")
    # And on the events: the calls the export holds come back as the actions, in order (with
    # the tool's name and arguments, where an OpenHands event had its own action type), every
    # result the original linked to a call is linked again, and every message is said again.
    exported_calls = [
        (call["function_name"], call["arguments"])
        for step in first["steps"]
        for call in step.get("tool_calls", [])
    ]
    actions = [e for e in again.events if e.kind == "action" and "subagent" not in e.data]
    assert [(e.data["tool"], e.data["arguments"]) for e in actions] == exported_calls
    assert len(actions) == len(
        [
            e
            for e in trajectory.events
            if e.kind == "action" and e.source == "agent" and "subagent" not in e.data
        ]
    )
    assert _linked(again.events) == _linked(trajectory.events)
    said = [
        (e.source, e.text)
        for e in trajectory.events
        if e.kind == "message" and e.type != "thinking" and (e.text.strip() or e.source == "user")
    ]
    assert [
        (e.source, e.text) for e in again.events if e.kind == "message" and e.type != "thinking"
    ] == said


def test_the_export_of_a_claude_session_keeps_its_subagent_thinking_and_arguments(sample):
    [trajectory] = parse(sample("claude_code_session.jsonl")).trajectories
    doc = to_atif(trajectory.events, _meta(trajectory))
    [sub] = doc["subagent_trajectories"]
    task = next(
        step
        for step in doc["steps"]
        for call in step.get("tool_calls", [])
        if call["function_name"] == "Task"
    )
    [ref] = [r for r in task["observation"]["results"] if "subagent_trajectory_ref" in r]
    assert ref["subagent_trajectory_ref"] == [{"trajectory_id": sub["trajectory_id"]}]
    assert any(step.get("reasoning_content") for step in doc["steps"])
    bash = [
        c for s in doc["steps"] for c in s.get("tool_calls", []) if c["function_name"] == "Bash"
    ]
    assert bash and all("command" in call["arguments"] for call in bash)
    assert doc["final_metrics"]["total_steps"] == len(doc["steps"])
    usage = trajectory.metadata["usage"]
    assert doc["final_metrics"]["total_prompt_tokens"] == (
        usage["input_tokens"]
        + usage.get("cache_creation_input_tokens", 0)
        + usage.get("cache_read_input_tokens", 0)
    )
    assert doc["final_metrics"]["total_completion_tokens"] == usage["output_tokens"]
    assert "session_id" not in doc  # the agent's own session id never leaves


def test_metrics_per_turn_and_in_total(sample):
    [gemini] = parse(sample("gemini_cli_session.jsonl")).trajectories
    doc = to_atif(gemini.events, _meta(gemini))
    metrics = [step["metrics"] for step in doc["steps"] if "metrics" in step]
    # The turn's answer and its thinking (60 + 40) are ATIF's completion tokens.
    assert metrics[0] == {"prompt_tokens": 1200, "completion_tokens": 100, "cached_tokens": 800}
    assert doc["final_metrics"]["total_prompt_tokens"] == 4400
    assert doc["final_metrics"]["total_cached_tokens"] == 3400
    assert doc["final_metrics"]["total_completion_tokens"] == 170 + 40
    [codex] = parse(sample("codex_rollout.jsonl")).trajectories
    final = to_atif(codex.events, _meta(codex))["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_cached_tokens"]) == (1200, 800)
    assert final["total_completion_tokens"] == 150
    [atif] = parse(sample("atif_trajectory.json")).trajectories
    doc = to_atif(atif.events, _meta(atif))
    assert doc["final_metrics"]["total_cost_usd"] == 0.0085
    assert doc["steps"][2]["metrics"]["cost_usd"] == 0.0042
    assert doc["agent"]["tool_definitions"][0]["function"]["name"] == "bash"


def test_the_real_atif_list_exports_each_trajectory_back(real_fixture):
    Trajectory = _harbor_trajectory()
    originals = orjson.loads(real_fixture("atif_v1_7_adp_converted_agenttuning_os_list.json"))
    for original, trajectory in zip(
        originals, parse(orjson.dumps(originals)).trajectories, strict=True
    ):
        exported = to_atif(trajectory.events, _meta(trajectory))
        Trajectory.model_validate(exported)
        assert len(exported["steps"]) == len(original["steps"])
        for ours, theirs in zip(exported["steps"], original["steps"], strict=True):
            assert ours["source"] == theirs["source"] and ours["message"] == theirs["message"]
            assert ours.get("tool_calls") == theirs.get("tool_calls")
            assert ours.get("observation") == theirs.get("observation")
