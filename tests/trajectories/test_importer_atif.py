"""ATIF trajectories (issue 22): the real file of fixtures/real (ADP's ATIF export, a list) with
the counts of its MANIFEST entry, the suite's own Harbor-style sample (metrics, a subagent), and
bad files refused naming the step or result, storing nothing."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from apps.trajectories.importers import parse
from tests.samples.make_samples import TASK, atif_trajectory

ATIF_LIST = "atif_v1_7_adp_converted_agenttuning_os_list.json"


def test_the_real_list_imports_with_its_manifest_counts(real_fixture):
    raw = real_fixture(ATIF_LIST)
    result = parse(raw)
    assert result.format == "atif" and result.errors == []
    trajectories = result.trajectories
    assert len(trajectories) == 5
    doc = orjson.loads(raw)
    assert sum(len(t["steps"]) for t in doc) == 44  # MANIFEST: 44 steps
    events = [e for t in trajectories for e in t.events]
    prompts = [e for e in events if e.source == "user" and e.kind == "message"]
    assert len(prompts) == 10
    assert prompts[1].text.startswith(
        "Now, I will start a new problem in a new OS. My problem is:\n\n"
        "Filter out all the empty lines and comments in configurations (.conf) files"
    )
    calls = [e for e in events if e.kind == "action"]
    assert len(calls) == 24 and Counter(c.type for c in calls) == {"bash": 24}
    assert calls[1].text == "ls -1 /etc | wc -l"
    # Every call is "call_1": each result is linked to the call of its own step, and the ids
    # are unique within a trajectory.
    for trajectory in trajectories:
        actions = [e for e in trajectory.events if e.kind == "action"]
        results = [e for e in trajectory.events if e.kind == "observation"]
        assert [r.cause for r in results] == [a.original_id for a in actions]
        assert len({a.original_id for a in actions}) == len(actions)
        assert {a.data["tool_call_id"] for a in actions} == {"call_1"}
    assert trajectories[0].events[6].text == "The output of the OS:\n220"
    assert (trajectories[0].agent, trajectories[0].agent_version) == ("agenttuning_os", "raw")
    assert len(events) >= 34
    assert all(t.session_id == "" for t in trajectories)


def test_the_sample_reads_as_its_steps():
    [trajectory] = parse(orjson.dumps(atif_trajectory())).trajectories
    events = trajectory.events
    main = [e for e in events if "subagent" not in e.data]
    assert [(e.source, e.kind, e.type) for e in main] == [
        ("user", "system", "system"),
        ("user", "message", "message"),
        ("agent", "message", "thinking"),
        ("agent", "message", "message"),
        ("agent", "action", "bash"),
        ("agent", "action", "bash"),
        ("environment", "observation", "bash"),
        ("environment", "observation", "bash"),
        ("agent", "action", "delegate"),
        ("environment", "observation", "delegate"),
        ("agent", "message", "message"),
    ]
    assert trajectory.title == TASK
    assert (trajectory.agent, trajectory.agent_version) == ("terminus-2", "2.0.0")
    assert trajectory.model == "anthropic/claude-sonnet-4"
    assert main[6].cause == "call_cat" and main[7].cause == "call_ls"
    assert main[4].data["arguments"] == {"command": "cat greet.py"}
    # Per-step metrics on the step's first event; the final metrics give the totals.
    assert main[2].data["metrics"]["cost_usd"] == 0.0042
    assert main[2].data["model"] == "anthropic/claude-sonnet-4"
    assert trajectory.metadata["total_tokens"] == 4400 + 140
    assert trajectory.metadata["total_cost"] == 0.0085
    assert trajectory.metadata["tools"][0]["function"]["name"] == "bash"
    assert main[0].timestamp is not None and main[0].timestamp.tzinfo is not None
    # The subagent is a nested run right after the result that refers to it.
    delegate = events.index(main[9])
    nested = events[delegate + 1 : delegate + 5]
    assert [(e.kind, e.type) for e in nested] == [
        ("message", "message"),
        ("action", "bash"),
        ("observation", "bash"),
        ("message", "message"),
    ]
    assert {str(e.data["subagent"]) for e in nested} == {
        str({"agent_id": "tests-writer", "parent": "call_sub"})
    }
    assert nested[2].cause == nested[1].original_id == "tests-writer/call_1"


def test_totals_are_summed_from_the_steps_without_final_metrics():
    doc = atif_trajectory()
    del doc["final_metrics"]
    [trajectory] = parse(orjson.dumps(doc)).trajectories
    assert trajectory.metadata["total_tokens"] == 1200 + 80 + 1500 + 40 + 1700 + 20
    assert trajectory.metadata["total_cost"] == pytest.approx(0.0042 + 0.0031 + 0.0012)


def test_copied_context_and_a_continuation_are_kept_and_exported_again():
    from apps.trajectories.exporters import to_atif

    doc = atif_trajectory()
    doc["steps"][1]["is_copied_context"] = True
    doc["continued_trajectory_ref"] = "trajectory.cont-1.json"
    [trajectory] = parse(orjson.dumps(doc)).trajectories
    assert trajectory.metadata["continued_trajectory_ref"] == "trajectory.cont-1.json"
    assert trajectory.events[1].data["copied_context"] is True
    steps = to_atif(trajectory.events, {"metadata": trajectory.metadata})["steps"]
    assert [step.get("is_copied_context") for step in steps[:3]] == [None, True, None]


def _broken(change):
    doc = atif_trajectory()
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (lambda d: d["steps"].__setitem__(1, "user"), "steps[1]", "expected a step object"),
        (lambda d: d["steps"][1].update(source="robot"), "steps[1]", "source must be"),
        (
            lambda d: d["steps"][2]["observation"]["results"][1].update(source_call_id="call_x"),
            "steps[2].observation.results[1]",
            "names no tool call of this step",
        ),
        (
            lambda d: d["steps"][2]["tool_calls"][0].update(arguments="cat greet.py"),
            "steps[2].tool_calls[0]",
            "arguments is not an object",
        ),
        (
            lambda d: (
                d["steps"][1].update(tool_calls=[])
                or d["steps"][1].update(
                    tool_calls=[{"tool_call_id": "a", "function_name": "bash", "arguments": {}}]
                )
            ),
            "steps[1]",
            "not agent",
        ),
        (
            lambda d: d["subagent_trajectories"][0]["steps"][1].update(source="tool"),
            "subagent_trajectories[0], steps[1]",
            "source must be",
        ),
    ],
)
def test_a_bad_step_is_refused_naming_it(change, where, message):
    [item] = parse(orjson.dumps(_broken(change))).items
    assert item.trajectory is None
    assert item.error.where == where and message in item.error.message


@pytest.mark.django_db
def test_sharing_a_trajectory_and_a_bad_one_through_the_api(client):
    from apps.trajectories.models import Trajectory

    response = client.post(
        "/api/v1/trajectories",
        data=orjson.dumps(atif_trajectory()),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["trajectories"][0]["title"] == TASK
    Trajectory.objects.all().delete()

    bad = _broken(lambda d: d["steps"][2]["observation"]["results"][0].update(source_call_id="zz"))
    response = client.post(
        "/api/v1/trajectories", data=orjson.dumps(bad), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["where"] == "steps[2].observation.results[0]"
    assert "zz" in error["message"]
    assert Trajectory.objects.count() == 0
