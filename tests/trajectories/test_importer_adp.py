"""ADP standardized trajectories (issue 22): the real file of fixtures/real with the counts of
its MANIFEST entry, the suite's sample (every content class), and bad files refused naming the
trajectory and the content item."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from apps.trajectories.importers import parse
from apps.trajectories.models import Trajectory
from tests.samples.make_samples import adp_trajectories


def test_the_real_file_imports_with_its_manifest_counts(real_fixture):
    result = parse(real_fixture("adp_std_v1_3_1_agenttuning_os_tool_call_ids.json"))
    assert result.format == "adp" and result.errors == []
    trajectories = result.trajectories
    assert len(trajectories) == 5
    assert [len(t.events) for t in trajectories] == [14, 12, 12, 14, 16]  # the content items
    user_texts = [e for t in trajectories for e in t.events if e.source == "user"]
    assert len(user_texts) == 10  # a worked example, then the real task, in each
    assert [t.title for t in trajectories].count("") == 0
    assert trajectories[0].title.startswith("tell me how many files are in the directory")
    calls = [e for t in trajectories for e in t.events if e.kind == "action"]
    assert len(calls) == 24 and Counter(c.type for c in calls) == {"bash": 24}
    assert any(c.data["content"] == "ps aux | grep '^root' | wc -l" for c in calls)
    results = [e for t in trajectories for e in t.events if e.kind == "observation"]
    assert sorted(r.cause for r in results) == sorted(c.original_id for c in calls)
    assert trajectories[0].metadata == {"id": "os_42", "schema_version": "1.3.1"}


def test_the_sample_reads_as_its_steps(sample):
    first, second = parse(sample("adp_trajectories.json")).trajectories
    assert [(e.source, e.kind, e.type, e.cause) for e in first.events] == [
        ("user", "message", "message", ""),
        ("agent", "message", "thinking", ""),
        ("agent", "action", "bash", ""),
        ("environment", "observation", "bash", "call_1"),
        ("agent", "action", "edit_file", ""),
        ("environment", "observation", "edit_file", "call_2"),
        ("agent", "action", "goto", ""),
        ("environment", "observation", "goto", "call_3"),
        ("environment", "observation", "image_observation", ""),
        ("agent", "message", "message", ""),
    ]
    assert first.metadata["details"] == {"dataset": "trajhub_samples", "task_type": "coding"}
    # Without ids, an observation right after an action answers it (ADP's own back-fill).
    call, answer = second.events[1], second.events[2]
    assert answer.cause == call.original_id and answer.text == "18 °C, clear"


def test_an_item_of_an_unknown_class_is_left_out_with_a_warning():
    [record] = adp_trajectories()[:1]
    record["content"].insert(1, {"class_": "gui_action", "x": 1})
    result = parse(orjson.dumps(record))
    [trajectory] = result.trajectories
    assert trajectory.warnings == [
        {"where": "content[1]", "message": "left out: an item of unknown class 'gui_action'"}
    ]


@pytest.mark.parametrize(
    "change,where,message",
    [
        (lambda c: c[3].update(kwargs="path=greet.py"), "[0], content[3]", "'kwargs' is a string"),
        (lambda c: c[3].pop("function"), "[0], content[3]", "without a 'function'"),
        (lambda c: c[2].update(tool_call_id="call_9"), "[0], content[2]", "no action before it"),
        (lambda c: c.__setitem__(1, "ls"), "[0], content[1]", "expected an item with a 'class_'"),
        (lambda c: c[1].update(content=["ls"]), "[0], content[1]", "'content' is an array"),
    ],
)
@pytest.mark.django_db
def test_bad_items_are_refused_naming_trajectory_and_item(client, change, where, message):
    records = adp_trajectories()
    change(records[0]["content"])
    response = client.post(
        "/api/v1/trajectories", data=orjson.dumps(records[:1]), content_type="application/json"
    )
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["where"] == where and message in error["message"], error
    assert Trajectory.objects.count() == 0
