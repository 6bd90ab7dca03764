"""Inspect AI eval logs (issue 22): the real `.json` and `.eval` logs of fixtures/real with the
counts of their MANIFEST entries, the suite's own sample (two epochs of one sample), what is
kept of a sample (scores as the run's outcome), and bad logs refused naming the sample."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.trajectories.importers import parse
from apps.trajectories.models import Trajectory
from apps.trajectories.outcome import run_outcome
from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.services.reimport import trajectory_reimport
from tests.samples.make_samples import inspect_log

REAL = (
    "inspect_log_v2_made_mockllm_addition_tool.json",
    "inspect_eval_zip_made_mockllm_addition_tool.eval",
)


@pytest.mark.parametrize("name", REAL)
def test_the_real_logs_import_with_their_manifest_counts(real_fixture, name):
    result = parse(real_fixture(name))
    assert result.format == "inspect_log" and result.errors == []
    trajectories = result.trajectories
    assert len(trajectories) == 2  # 2 samples
    events = [e for t in trajectories for e in t.events]
    prompts = [e for e in events if e.source == "user" and e.kind == "message"]
    assert len(prompts) == 2
    calls = [e for e in events if e.kind == "action"]
    assert [c.type for c in calls] == ["add", "add"]
    assert calls[0].data["tool_call"]["function"]["arguments"] == {"x": 1, "y": 1}
    results = [e for e in events if e.kind == "observation"]
    assert sorted(r.cause for r in results) == sorted(c.original_id for c in calls)
    assert len(events) == 8  # the 8 messages
    first, second = trajectories
    assert first.title == "What is 1 + 1? Use the add tool."
    assert second.title == "What is 20 + 22? Use the add tool."
    assert (first.agent, first.agent_version, first.model) == (
        "Inspect AI",
        "0.3.285",
        "mockllm/model",
    )
    # Accuracy 1.0: every sample scored correct, and the outcome says so.
    assert [t.metadata["scores"]["includes"]["value"] for t in trajectories] == ["C", "C"]
    assert run_outcome(first.metadata).score == "includes: correct"
    assert first.metadata["instance_id"] == "addition/1" and first.metadata["epoch"] == 1
    assert first.metadata["total_tokens"] == 158


def test_each_epoch_is_a_trajectory_of_its_own(sample):
    one, two = parse(sample("inspect_eval_log.json")).trajectories
    assert (one.metadata["epoch"], two.metadata["epoch"]) == (1, 2)
    assert run_outcome(one.metadata).score == "includes: correct"
    assert run_outcome(two.metadata).score == "includes: incorrect"
    assert [(e.source, e.kind, e.type) for e in one.events] == [
        ("agent", "system", "system"),
        ("user", "message", "message"),
        ("agent", "message", "thinking"),
        ("agent", "action", "bash"),
        ("environment", "observation", "bash"),
        ("agent", "action", "bash"),
        ("environment", "observation", "bash"),
        ("agent", "message", "message"),
    ]
    failed = one.events[4]
    assert failed.data["is_error"] is True and "No such file" in failed.text
    # The result the log moved to its attachments is put back.
    assert one.events[6].text == "4 greet.py"
    assert one.events[2].text == "Read the file first."


def test_the_eval_zip_and_the_json_log_give_the_same_trajectories(sample):
    from_json = parse(sample("inspect_eval_log.json"))
    from_zip = parse(sample("inspect_eval_log.eval"))
    assert [i.where for i in from_zip.items] == [
        "samples/count-lines_epoch_1.json",
        "samples/count-lines_epoch_2.json",
    ]
    for a, b in zip(from_json.trajectories, from_zip.trajectories, strict=True):
        assert [(e.kind, e.type, e.text) for e in a.events] == [
            (e.kind, e.type, e.text) for e in b.events
        ]
        assert a.metadata == b.metadata


@pytest.mark.django_db
def test_each_sample_is_stored_as_a_log_of_its_own_and_reimports(owner, sample):
    result = trajectory_ingest(
        data=sample("inspect_eval_log.eval"), user=owner, options=ShareOptions()
    )
    assert result.errors == [] and len(result.stored) == 2
    from apps.trajectories.services.storage import raw_read

    second = result.stored[1].trajectory
    raw = orjson.loads(raw_read(second))
    assert [s["epoch"] for s in raw["samples"]] == [2]  # its own sample, in an Inspect log
    assert raw["eval"]["task"] == "count_lines"
    assert trajectory_reimport(trajectory=second).status == "unchanged"


def _post(client, data: bytes, name: str):
    return client.post("/api/v1/trajectories", {"file": SimpleUploadedFile(name, data)})


@pytest.mark.django_db
def test_a_bad_message_is_a_400_naming_sample_and_message(client):
    log = inspect_log()
    log["samples"][1]["messages"][3]["role"] = "robot"
    response = _post(client, orjson.dumps(log), "log.json")
    assert response.status_code == 207, response.content[:300]  # the other sample is stored
    assert response.json()["errors"] == [
        {
            "where": "samples[1], messages[3]",
            "message": "unknown role 'robot' (expected system, user, assistant or tool)",
        }
    ]
    log["samples"][0]["messages"][3]["role"] = "robot"
    Trajectory.objects.all().delete()
    response = _post(client, orjson.dumps(log), "log.json")
    assert response.status_code == 400
    assert Trajectory.objects.count() == 0


@pytest.mark.django_db
def test_a_log_without_samples_is_a_400(client):
    log = inspect_log()
    log["samples"] = []
    response = _post(client, orjson.dumps(log), "log.json")
    assert response.status_code == 400
    assert response.json()["error"]["where"] == "samples"
    assert "holds no samples" in response.json()["error"]["message"]
    assert Trajectory.objects.count() == 0


@pytest.mark.django_db
def test_a_sample_entry_that_is_not_json_is_a_400_naming_it(client, sample):
    archive = zipfile.ZipFile(io.BytesIO(sample("inspect_eval_log.eval")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name in archive.namelist():
            data = archive.read(name)
            out.writestr(name, data[:50] if name.endswith("epoch_2.json") else data)
    response = _post(client, buffer.getvalue(), "log.eval")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["where"].startswith("entry 'samples/count-lines_epoch_2.json'")
    assert "not valid JSON" in error["message"]
    assert Trajectory.objects.count() == 0


@pytest.mark.django_db
def test_the_page_shows_the_score(client, owner, sample):
    result = trajectory_ingest(
        data=sample("inspect_eval_log.json"), user=owner, options=ShareOptions()
    )
    client.force_login(owner)
    page = client.get(result.stored[1].trajectory.get_absolute_url()).content.decode()
    assert "includes: incorrect" in page


MADE = Path(__file__).parent / "data" / "inspect_0_3_285_two_epochs_tool_errors.eval"


def test_a_log_inspect_wrote_with_epochs_and_failing_tools():
    """Written by inspect-ai 0.3.285 itself (data/make_inspect_log.py): zstd members, samples
    in the order they finished, tool errors."""
    result = parse(MADE.read_bytes())
    assert result.format == "inspect_log" and result.errors == []
    trajectories = result.trajectories
    # The dataset's order, epoch by epoch, whatever order they finished in.
    assert [(t.metadata["sample_id"], t.metadata["epoch"]) for t in trajectories] == [
        ("div-1", 1),
        ("div-2", 1),
        ("div-1", 2),
        ("div-2", 2),
    ]
    assert [run_outcome(t.metadata).score for t in trajectories] == [
        "includes: correct",
        "includes: incorrect",
        "includes: correct",
        "includes: incorrect",
    ]
    events = [e for t in trajectories for e in t.events]
    calls = [e for e in events if e.kind == "action"]
    results = [e for e in events if e.kind == "observation"]
    assert calls and sorted(r.cause for r in results) == sorted(c.original_id for c in calls)
    failed = [r for r in results if r.data.get("is_error")]
    assert failed and all(r.text == "division by zero" for r in failed)
    assert all(t.events[0].kind == "system" for t in trajectories)
    assert {t.agent_version for t in trajectories} == {"0.3.285"}
