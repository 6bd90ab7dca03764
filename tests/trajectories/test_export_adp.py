"""The ADP export (issue 22): every sample of every format exports as a trajectory that the
check written from ADP's published schema accepts, and importing that export gives back the
same steps, tool calls and results. The check itself refuses what ADP's models refuse."""

from __future__ import annotations

import copy

import orjson
import pytest

from apps.trajectories.exporters import export_events, to_adp
from apps.trajectories.exporters.adp_schema import problems
from apps.trajectories.exporters.common import calls_of
from apps.trajectories.importers import parse
from tests.conftest import SAMPLE_FILES


def steps(trajectory) -> list[tuple]:
    """What a trainer reads of a trajectory: system texts, messages, thinking (consecutive
    thoughts as one: ADP has one reasoning per action), each tool call (name, arguments) and
    the result it got (by call, text, failed or not). A subagent's run is another agent's."""
    found: list[tuple] = []
    calls: dict[str, list[int]] = {}
    count = 0
    for event in trajectory.events:
        if "subagent" in event.data:
            continue
        if event.kind == "system":
            found.append(("system", event.text))
        elif event.kind == "message" and event.type == "thinking" and event.source == "agent":
            if found and found[-1][0] == "thinking":
                found[-1] = ("thinking", f"{found[-1][1]}\n\n{event.text}")
            else:
                found.append(("thinking", event.text))
        elif event.kind == "message":
            found.append((event.source, event.text))
        elif event.kind == "action":
            if event.source != "agent":
                continue
            calls[event.original_id] = []
            for call in calls_of(event):
                calls[event.original_id].append(count)
                count += 1
                found.append(("call", call.name, orjson.loads(call.arguments)))
        elif calls.get(event.cause):
            failed = event.data.get("is_error") is True
            found.append(("result", calls[event.cause].pop(0), event.text, failed))
        else:
            found.append(("observation", event.text))
    return found


def meta_of(trajectory) -> dict:
    return {
        "id": "t1",
        "title": trajectory.title,
        "agent": trajectory.agent,
        "model": trajectory.model,
        "source_format": trajectory.source_format,
        "metadata": trajectory.metadata,
    }


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_every_sample_exports_valid_adp_and_round_trips(sample, name):
    trajectories = parse(sample(name)).trajectories
    assert trajectories
    for trajectory in trajectories:
        document = orjson.loads(export_events("adp", trajectory.events, meta=meta_of(trajectory)))
        assert problems(document) == [], (name, problems(document))
        [back] = parse(orjson.dumps(document)).trajectories
        assert back.source_format == "adp"
        assert steps(back) == steps(trajectory), name
        assert back.title == trajectory.title and back.model == trajectory.model
        # And the export of the re-import is the same document.
        again = to_adp(back.events, meta_of(back))
        assert again["content"] == document["content"], name


def test_the_round_trip_covers_calls_results_and_failures(sample):
    [trajectory] = parse(sample("claude_code_session.jsonl")).trajectories
    kinds = {step[0] for step in steps(trajectory)}
    assert {"user", "agent", "thinking", "call", "result", "system"} <= kinds
    one, _ = parse(sample("inspect_eval_log.json")).trajectories
    assert ("result", 0, "cat: greet: No such file", True) in steps(one)


def test_the_real_adp_file_exports_as_it_came(real_fixture):
    records = orjson.loads(real_fixture("adp_std_v1_3_1_agenttuning_os_tool_call_ids.json"))
    for record, trajectory in zip(records, parse(orjson.dumps(records)).trajectories, strict=True):
        document = to_adp(trajectory.events, {"id": record["id"], "metadata": {}})
        assert problems(document) == []
        assert document["content"] == record["content"]  # code_actions stay code_actions


def test_a_call_without_result_gets_an_empty_one_the_importer_leaves_out(sample):
    [trajectory] = parse(sample("openhands_v0_events.json")).trajectories
    document = to_adp(trajectory.events, meta_of(trajectory))
    empty = [item for item in document["content"] if item.get("name") == "no_result"]
    assert empty and all(item["content"] == "" for item in empty)
    [back] = parse(orjson.dumps(document)).trajectories
    assert not [e for e in back.events if e.data.get("name") == "no_result"]


def test_subagent_steps_are_not_this_agents_steps(sample):
    [trajectory] = parse(sample("claude_code_session_folder.zip")).trajectories
    document = to_adp(trajectory.events, meta_of(trajectory))
    functions = [item.get("function") for item in document["content"]]
    assert "Task" in functions and "Glob" not in functions  # Glob was the subagent's


VALID = {
    "schema_version": "1.3.1",
    "id": "x",
    "content": [
        {"class_": "text_observation", "content": "hi", "name": None, "source": "user"},
        {"class_": "api_action", "function": "f", "kwargs": {}, "tool_call_id": "c1"},
        {"class_": "text_observation", "content": "ok", "source": "environment",
         "tool_call_id": "c1"},
        {"class_": "code_action", "language": "bash", "content": "ls", "description": None},
        {"class_": "text_observation", "content": "a b", "source": "environment"},
        {"class_": "message_action", "content": "done"},
    ],
    "details": {},
}  # fmt: skip


def _broken(change):
    doc = copy.deepcopy(VALID)
    change(doc)
    return doc


@pytest.mark.parametrize(
    "change,problem",
    [
        (lambda d: d.update(extra=1), "unknown field 'extra'"),
        (lambda d: d.update(schema_version="9.9"), "unsupported schema_version"),
        (lambda d: d.update(id=5), "id is not text"),
        (lambda d: d["content"][0].update(source="system"), "source is not user, agent"),
        (lambda d: d["content"][0].update(colour="red"), "has no field 'colour'"),
        (lambda d: d["content"][1].pop("kwargs"), "lacks 'kwargs'"),
        (lambda d: d["content"][3].pop("description"), "lacks 'description'"),
        (lambda d: d["content"][5].update(class_="gui_action"), "unknown class_"),
        (lambda d: d["content"][2].update(tool_call_id="c9"), "answers no action"),
        (lambda d: d["content"].insert(2, dict(d["content"][1])), "of two actions"),
        (lambda d: d["content"].pop(2), "has no result"),
        (lambda d: d["content"].append(dict(d["content"][2])), "has two results"),
    ],
)
def test_the_check_refuses_what_adps_models_refuse(change, problem):
    assert problems(VALID) == []
    found = problems(_broken(change))
    assert any(problem in line for line in found), found
