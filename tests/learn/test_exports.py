"""Exports of kept examples: TRL, LLaMA-Factory ShareGPT (+ dataset_info.json), JSONL, Parquet."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from apps.learn.models import Example, ExampleState
from tests.learn.factories import make_session

pytestmark = pytest.mark.django_db
SECRET = "hunter2-db-password-9f8e7d"


def synthesize() -> None:
    call_command("synthesize", stdout=io.StringIO(), stderr=io.StringIO())


@pytest.fixture
def exported(fake_llm, tmp_path):
    public = make_session(
        "Fix the login bug",
        [("git status", "clean"), (f"psql -p {SECRET}", "connected"), ("pytest", "4 passed")],
        redactions={SECRET: "<PASSWORD_1>"},
    )
    make_session("Private", [("cat plan.txt", "private plan")], visibility="private")
    synthesize()
    assert Example.objects.filter(state=ExampleState.KEPT).exists()
    # Windows are cut from the redacted text: the secret never reaches the LLM.
    prompts = [s.prompt for s in fake_llm.served]
    assert prompts and not any(SECRET in p for p in prompts)
    assert any("<PASSWORD_1>" in p for p in prompts)
    out = tmp_path / "export"
    text = io.StringIO()
    call_command("export_examples", str(out), stdout=text, stderr=io.StringIO())
    return public, out, text.getvalue()


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_format_has_source_and_window_on_every_row(exported):
    public, out, text = exported
    kept = Example.objects.filter(state=ExampleState.KEPT).count()
    assert f"{kept} examples written" in text
    for name in ("trl.jsonl", "sharegpt.jsonl", "examples.jsonl"):
        rows = lines(out / name)
        assert len(rows) == kept
        for row in rows:
            assert row["source_id"] == public.share_id
            start, end = row["window"]
            assert 0 <= start < end
    table = pq.read_table(out / "examples.parquet").to_pylist()
    assert len(table) == kept and all(r["source_id"] == public.share_id for r in table)
    assert {r["id"] for r in table} == set(
        Example.objects.filter(state=ExampleState.KEPT).values_list("pk", flat=True)
    )


def test_trl_rows_have_tool_calls_with_json_string_arguments(exported):
    _, out, _ = exported
    rows = lines(out / "trl.jsonl")
    row = next(r for r in rows if any(m.get("tool_calls") for m in r["messages"]))
    users = [m for m in row["messages"] if m["role"] == "user"]
    # The written instruction, not the original task.
    assert users[0]["content"].startswith(("Do:", "Replicate the following:"))
    assert "Fix the login bug" not in json.dumps(row["messages"])
    call = next(m for m in row["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], str)
    assert isinstance(json.loads(call["function"]["arguments"]), dict)
    tool = next(m for m in row["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == call["id"]


def test_sharegpt_rows_alternate_and_dataset_info_describes_them(exported):
    _, out, _ = exported
    info = json.loads((out / "dataset_info.json").read_text())
    entry = info["trajhub_lbi"]
    assert entry["file_name"] == "sharegpt.jsonl" and entry["formatting"] == "sharegpt"
    assert entry["columns"]["messages"] == "conversations"
    assert entry["tags"]["function_tag"] == "function_call"
    for row in lines(out / "sharegpt.jsonl"):
        roles = [turn["from"] for turn in row["conversations"]]
        assert roles[0] == "human"
        for odd, even in zip(roles[::2], roles[1::2], strict=False):
            assert odd in ("human", "observation") and even in ("gpt", "function_call")


def test_exports_are_redacted_and_public_only(exported):
    _, out, _ = exported
    everything = "".join(
        p.read_text(errors="replace") for p in out.iterdir() if p.suffix != ".parquet"
    )
    everything += json.dumps(pq.read_table(out / "examples.parquet").to_pylist())
    assert SECRET not in everything
    assert "<PASSWORD_1>" in everything
    assert "private plan" not in everything


def test_an_example_cut_before_a_new_redaction_is_not_exported(exported, tmp_path):
    # Redacted again with no signal handled yet (an .update()): the window's text predates it.
    from apps.learn.models import Window
    from apps.trajectories.models import Trajectory

    public, _, _ = exported
    Trajectory.objects.filter(pk=public.pk).update(
        redactions={SECRET: "<PASSWORD_1>", "connected": "<WORD>"}
    )
    assert Window.objects.filter(trajectory=public).exists()
    out = tmp_path / "again"
    call_command("export_examples", str(out), stdout=io.StringIO(), stderr=io.StringIO())
    assert lines(out / "examples.jsonl") == []


def test_tool_definitions_are_redacted_like_the_window(fake_llm, tmp_path):
    # The rows repeat the trajectory's tool definitions (its metadata), which went out as
    # stored: a key in a tool's description reached trl.jsonl, sharegpt.jsonl and a release's
    # examples configs (issue 20's canary crawl).
    from apps.trajectories.models import Trajectory

    key = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa12"
    public = make_session(
        "Fix the login bug",
        [("git status", "clean"), ("pytest", "4 passed")],
        redactions={key: "<GITHUB_TOKEN_1>"},
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "deploy",
                "description": f"Deploy with the token {key}",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    Trajectory.objects.filter(pk=public.pk).update(metadata={**public.metadata, "tools": tools})
    synthesize()
    assert Example.objects.filter(state=ExampleState.KEPT).exists()
    out = tmp_path / "export"
    call_command("export_examples", str(out), stdout=io.StringIO(), stderr=io.StringIO())
    for name in ("trl.jsonl", "sharegpt.jsonl"):
        text = (out / name).read_text()
        assert key[4:20] not in text, name
        assert "<GITHUB_TOKEN_1>" in text and "deploy" in text, name
