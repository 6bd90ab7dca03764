"""The stored outcome (issue 23): one verdict per trajectory, resolved / unresolved / unknown
with a score and its source, made from what each format records (real files where the shared
fixtures have one), written at ingest, at re-import and by migration 0016, and read by the
Result card, the API and the ?outcome= filter."""

from __future__ import annotations

import importlib
import io
import json
import zipfile

import orjson
import pytest
from django.apps import apps as django_apps

from apps.trajectories.importers import parse
from apps.trajectories.models import Trajectory
from apps.trajectories.outcome import format_verdict, stored_verdict
from apps.trajectories.services.reimport import trajectory_reimport
from tests.trajectories.test_outcome import eval_row
from tests.trajectories.viewer_factories import ingest

pytestmark = pytest.mark.django_db


def make_zip(*files: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return buffer.getvalue()


def columns(trajectory: Trajectory) -> tuple[str, float | None, str]:
    trajectory.refresh_from_db()
    return trajectory.outcome, trajectory.outcome_score, trajectory.outcome_source


# --- OpenHands ------------------------------------------------------------------------------


def test_an_openhands_evaluation_row_that_resolved_and_one_that_did_not(owner):
    assert columns(ingest(eval_row(resolved=True), owner=owner)) == (
        "resolved",
        1.0,
        "openhands_eval",
    )
    assert columns(ingest(eval_row(resolved=False, instance="greet__greet-2"), owner=owner)) == (
        "unresolved",
        0.0,
        "openhands_eval",
    )


def test_real_multi_swe_bench_rows_carry_a_patch_but_no_verdict(owner, real_fixture):
    # Their test_result holds only the git patch: no evaluation has said whether it works.
    data = real_fixture("openhands_v0_eval_multi_swe_bench_output.jsonl")
    for index in range(3):
        assert columns(ingest(data, owner=owner, index=index))[0] == "unknown"


def test_the_real_resolver_output_says_success(owner, real_fixture):
    data = real_fixture("openhands_resolver_mock_output_flat_legacy.jsonl")
    assert columns(ingest(data, owner=owner)) == ("resolved", 1.0, "openhands_resolver")


def test_checkpoint_scores_of_openhands_v1_rows(owner, real_fixture):
    # The real openagentsafety rows score 0 of 0 checkpoints: nothing to go on.
    line = real_fixture("openhands_v1_sdk_openagentsafety_output.jsonl").splitlines()[0]
    assert columns(ingest(line, owner=owner))[0] == "unknown"
    row = orjson.loads(line)
    row["test_result"]["final_score"] = {"result": 2, "total": 4}
    assert columns(ingest(orjson.dumps(row), owner=owner)) == ("unresolved", 0.5, "openhands_eval")
    row["test_result"]["final_score"] = {"result": 4, "total": 4}
    row["instance_id"] = "another"
    assert columns(ingest(orjson.dumps(row), owner=owner)) == ("resolved", 1.0, "openhands_eval")


# --- SWE-agent ------------------------------------------------------------------------------

SWE_TRAJ = "sweagent_v1_marshmallow-1867_function_calling_replace.traj"
INSTANCE = "marshmallow-code__marshmallow-1867"


def test_submitted_alone_is_unknown(owner, real_fixture):
    trajectory = ingest(real_fixture(SWE_TRAJ), owner=owner)
    assert trajectory.metadata["exit_status"] == "submitted"
    assert columns(trajectory) == ("unknown", None, "")


def test_a_swe_bench_report_beside_the_traj_says_resolved(owner, real_fixture):
    report = {INSTANCE: {"patch_exists": True, "resolved": True, "tests_status": {}}}
    data = make_zip(
        (f"trajs/{INSTANCE}.traj", real_fixture(SWE_TRAJ)),
        (f"logs/{INSTANCE}/report.json", json.dumps(report).encode()),
    )
    trajectory = ingest(data, owner=owner)
    assert trajectory.source_format == "sweagent"
    assert columns(trajectory) == ("resolved", 1.0, "swebench_report")


def test_a_run_report_lists_the_instance_as_unresolved(owner, real_fixture):
    report = {"resolved_ids": ["other-1"], "unresolved_ids": [INSTANCE], "total_instances": 2}
    data = make_zip(
        (f"{INSTANCE}.traj", real_fixture(SWE_TRAJ)),
        ("model.run.json", json.dumps(report).encode()),
    )
    assert columns(ingest(data, owner=owner)) == ("unresolved", 0.0, "swebench_report")


def test_a_report_that_does_not_name_the_instance_says_nothing(real_fixture):
    report = {"other-1": {"resolved": True}}
    data = make_zip(
        (f"{INSTANCE}.traj", real_fixture(SWE_TRAJ)), ("report.json", json.dumps(report).encode())
    )
    # Not a .traj with its report: two files the site cannot pair, refused as before.
    with pytest.raises(Exception, match="neither an Inspect"):
        parse(data)


# --- Inspect --------------------------------------------------------------------------------


def test_real_inspect_logs_score_c_as_resolved(owner, real_fixture):
    for name in (
        "inspect_log_v2_made_mockllm_addition_tool.json",
        "inspect_eval_zip_made_mockllm_addition_tool.eval",
    ):
        for index in range(2):
            trajectory = ingest(real_fixture(name), owner=owner, index=index)
            assert columns(trajectory) == ("resolved", 1.0, "inspect_score"), (name, index)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ({"match": {"value": "I"}}, ("unresolved", 0.0, "inspect_score")),
        ({"match": {"value": "CORRECT"}}, ("resolved", 1.0, "inspect_score")),
        ({"match": {"value": "INCORRECT"}}, ("unresolved", 0.0, "inspect_score")),
        ({"match": {"value": 1}}, ("resolved", 1.0, "inspect_score")),
        ({"match": {"value": 0.0}}, ("unresolved", 0.0, "inspect_score")),
        ({"match": {"value": True}}, ("resolved", 1.0, "inspect_score")),
        # Partial credit is not a solved task.
        ({"match": {"value": "P"}}, ("unresolved", 0.5, "inspect_score")),
        # A model-graded 0.7 or a 1-10 scale cannot be read as solved or not.
        ({"graded": {"value": 0.7}}, ("unknown", None, "")),
        ({"graded": {"value": 7}}, ("unknown", None, "")),
        ({"multi": {"value": {"accuracy": "C", "style": "I"}}}, ("unknown", None, "")),
        # Scorers that disagree: unknown; that agree: their verdict.
        ({"a": {"value": "C"}, "b": {"value": "I"}}, ("unknown", None, "")),
        ({"a": {"value": "C"}, "b": {"value": 1}}, ("resolved", 1.0, "inspect_score")),
        ({"a": {"value": "whatever"}}, ("unknown", None, "")),
    ],
)
def test_inspect_score_values_are_read_honestly(scores, expected):
    verdict = format_verdict({"scores": scores}, "inspect_log")
    assert (verdict.outcome, verdict.score, verdict.source) == expected


def test_an_edited_inspect_score_reaches_the_stored_outcome(owner, real_fixture):
    log = orjson.loads(real_fixture("inspect_log_v2_made_mockllm_addition_tool.json"))
    log["samples"][1]["scores"]["includes"]["value"] = "I"
    trajectory = ingest(orjson.dumps(log), owner=owner, index=1)
    assert columns(trajectory) == ("unresolved", 0.0, "inspect_score")


# --- Harbor ---------------------------------------------------------------------------------


def harbor_trial(real_fixture, result: dict | None) -> bytes:
    # The real ATIF file is ADP's list of five; a Harbor trial holds one of them.
    atif = orjson.loads(real_fixture("atif_v1_7_adp_converted_agenttuning_os_list.json"))[0]
    files = [("trial-1/agent/trajectory.json", orjson.dumps(atif))]
    files.append(("trial-1/verifier/test-stdout.txt", b"1 passed"))
    if result is not None:
        files.append(("trial-1/result.json", orjson.dumps(result)))
    return make_zip(*files)


def test_a_harbor_trial_with_its_verifier_reward(owner, real_fixture):
    result = {
        "task_name": "os-filter-conf",
        "trial_name": "trial-1",
        "verifier_result": {"rewards": {"reward": 1.0}},
        "exception_info": None,
    }
    trajectory = ingest(harbor_trial(real_fixture, result), owner=owner)
    assert trajectory.source_format == "atif"
    assert trajectory.metadata["instance_id"] == "os-filter-conf"
    assert columns(trajectory) == ("resolved", 1.0, "harbor_reward")
    result["verifier_result"]["rewards"]["reward"] = 0.0
    assert columns(ingest(harbor_trial(real_fixture, result), owner=owner))[:2] == (
        "unresolved",
        0.0,
    )


def test_harbor_rewards_without_a_verdict(real_fixture):
    assert not format_verdict({"verifier_rewards": {"reward": 3.0}}, "atif").known
    assert not format_verdict({"verifier_rewards": {"a": 1.0, "b": 0.0}}, "atif").known
    assert format_verdict({"verifier_rewards": {"passed": 1}}, "atif").outcome == "resolved"
    # A trial whose verifier never ran (an exception): no rewards, no verdict.
    data = harbor_trial(
        real_fixture,
        {"verifier_result": None, "exception_info": {"exception_type": "AgentTimeoutError"}},
    )
    [trajectory] = parse(data).trajectories
    assert trajectory.metadata["error"] == "AgentTimeoutError"
    assert not format_verdict(trajectory.metadata, "atif").known


def test_a_plain_atif_file_has_no_outcome(owner, real_fixture):
    trajectory = ingest(
        real_fixture("atif_v1_7_adp_converted_agenttuning_os_list.json"), owner=owner
    )
    assert columns(trajectory) == ("unknown", None, "")


# --- The owner's word, the format's, re-import and the migration ---------------------------


def test_the_format_wins_over_the_owner():
    assert stored_verdict({}, "openhands_v0", "resolved").source == "owner"
    report = {"test_result": {"resolved": False}}
    assert stored_verdict(report, "openhands_eval", "resolved").outcome == "unresolved"
    assert stored_verdict({}, "openhands_v0", "").outcome == "unknown"


def test_reimport_writes_the_outcome_and_keeps_the_owners_word(owner, other_user, sample):
    trajectory = ingest(eval_row(resolved=True), owner=owner, visibility="public")
    Trajectory.objects.filter(pk=trajectory.pk).update(outcome="unknown", outcome_source="")
    assert trajectory_reimport(trajectory=trajectory).status == "updated outcome"
    assert columns(trajectory) == ("resolved", 1.0, "openhands_eval")
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"  # no new text: nothing to scan again

    plain = ingest(sample("openhands_v0_events.json"), owner=other_user)
    Trajectory.objects.filter(pk=plain.pk).update(owner_outcome="unresolved")
    trajectory_reimport(trajectory=plain)
    assert columns(plain) == ("unresolved", None, "owner")


def test_a_reshare_keeps_the_owners_word(owner, sample):
    data = sample("openhands_v0_events.json")
    trajectory = ingest(data, owner=owner)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        owner_outcome="resolved", outcome="resolved", outcome_source="owner"
    )
    again = ingest(data + b" ", owner=owner)  # the same events: the same row, updated
    assert again.pk == trajectory.pk
    assert columns(again) == ("resolved", None, "owner")


def test_the_migration_fills_stored_rows(owner, other_user, sample, real_fixture):
    resolved = ingest(eval_row(resolved=True), owner=owner)
    inspect = ingest(real_fixture("inspect_log_v2_made_mockllm_addition_tool.json"), owner=owner)
    # Another account: the same events from the owner would continue the evaluation row.
    plain = ingest(sample("openhands_v0_events.json"), owner=other_user)
    Trajectory.objects.update(outcome="unknown", outcome_score=None, outcome_source="")
    migration = importlib.import_module("apps.trajectories.migrations.0017_outcome")
    migration.fill_outcomes(django_apps, None)
    assert columns(resolved) == ("resolved", 1.0, "openhands_eval")
    assert columns(inspect) == ("resolved", 1.0, "inspect_score")
    assert columns(plain) == ("unknown", None, "")
