"""Synthesized examples (apps/learn) as release configs: `examples_openai` (TRL conversational)
and `examples_sharegpt` (LLaMA-Factory, with its dataset_info.json entry), read back with
pyarrow and `datasets`. Only kept examples whose source is in the release and in public() are
there, each with its source trajectory id and window bounds, redacted like the release."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from apps.datasets import services
from apps.learn.models import Window
from apps.trajectories.models import Trajectory
from tests.datasets.conftest import CONTACT_EMAIL, share
from tests.learn.factories import make_example

pytestmark = pytest.mark.django_db


def read(folder, config: str) -> list[dict]:
    rows: list[dict] = []
    for path in sorted((folder / config).glob("train-*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    return rows


def steps(first: int, last: int, text: str = "the terminal") -> list[dict]:
    return [
        {"role": "observation", "text": text, "first": first, "last": first},
        {"role": "action", "text": "ls", "first": first + 1, "last": last - 1},
        {"role": "observation", "text": "files", "first": last, "last": last},
    ]


@pytest.fixture
def examples(release_storage, owner, other_user):
    mine = share(user=owner, seed=1)
    anonymous = share(user=None, seed=3, email=CONTACT_EMAIL)
    private = share(user=owner, seed=8, visibility="private")
    kept = [
        make_example(mine, "List the files of the project", start=0, end=1, steps=steps(0, 2)),
        make_example(mine, "Open the second file", start=1, end=2, steps=steps(2, 4)),
        # What the LLM wrote can quote the contact address the scan let stand: redacted.
        make_example(
            anonymous,
            f"Write to {CONTACT_EMAIL} when the tests pass",
            start=0,
            end=1,
            steps=steps(0, 2),
        ),
    ]
    dropped = make_example(mine, "A dropped one", start=2, end=3, steps=steps(4, 6))
    dropped.state = "dropped"
    dropped.save()
    never = make_example(private, "From a private trajectory", steps=steps(0, 2))
    stale = make_example(anonymous, "Cut before a new redaction", start=1, end=2, steps=steps(2, 4))
    Window.objects.filter(pk=stale.window_id).update(redactions_hash="0" * 64)
    return {"kept": kept, "never": [dropped, never, stale], "private": private}


def test_examples_configs_hold_exactly_the_servable_examples(examples, release_storage):
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    folder = release_storage / result.release.prefix
    expected = {e.pk: e for e in examples["kept"]}
    for config in ("examples_openai", "examples_sharegpt"):
        rows = read(folder, config)
        assert sorted(row["id"] for row in rows) == sorted(expected), config
        for row in rows:
            example = expected[row["id"]]
            window = example.window
            assert row["source_id"] == example.trajectory.share_id
            assert row["window"] == [window.start_position, window.end_position]
            assert row["prompt_type"] == "task" and row["license"] == "MIT"
    openai = {row["id"]: row for row in read(folder, "examples_openai")}
    first = openai[examples["kept"][0].pk]
    user = [m for m in first["messages"] if m["role"] == "user"]
    assert user[0]["content"] == "List the files of the project"
    assert any(m["role"] == "assistant" for m in first["messages"])
    for message in (m for row in openai.values() for m in row["messages"]):
        for call in message["tool_calls"] or []:
            json.loads(call["function"]["arguments"])  # TRL: arguments are JSON text
    sharegpt = {row["id"]: row for row in read(folder, "examples_sharegpt")}
    turns = sharegpt[examples["kept"][0].pk]["conversations"]
    assert turns[0] == {"from": "human", "value": "List the files of the project"}
    assert {turn["from"] for turn in turns[1:]} <= {"gpt", "function_call", "observation"}

    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rows"]["examples_openai"] == manifest["rows"]["examples_sharegpt"] == 3
    info = json.loads((folder / "dataset_info.json").read_text())
    (entry,) = info.values()
    assert entry["file_name"] == "examples_sharegpt" and entry["formatting"] == "sharegpt"
    assert entry["columns"]["messages"] == "conversations"
    assert "dataset_info.json" in {f.path for f in result.release.files.all()}
    card = (folder / "README.md").read_text()
    assert 'config_name: "examples_sharegpt"' in card and "examples_openai/" in card


def test_no_private_dropped_stale_or_contact_address_in_the_examples(examples, release_storage):
    release = services.release_run(force=True).release
    folder = release_storage / release.prefix
    text = json.dumps(read(folder, "examples_openai") + read(folder, "examples_sharegpt"))
    for example in examples["never"]:
        assert example.instruction not in text
    assert examples["private"].share_id not in text
    assert CONTACT_EMAIL not in text and "Write to <EMAIL> when the tests pass" in text
    blobs = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert CONTACT_EMAIL.encode() not in blobs


def test_an_example_whose_source_left_public_is_not_released(examples, release_storage):
    gone = examples["kept"][0].trajectory
    Trajectory.objects.filter(pk=gone.pk).update(visibility="private")
    release = services.release_run(force=True).release
    rows = read(release_storage / release.prefix, "examples_openai")
    assert {row["source_id"] for row in rows} == {examples["kept"][2].trajectory.share_id}


def test_read_with_datasets_by_config_and_as_llama_factory_does(
    examples, release_storage, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    release = services.release_run(force=True).release
    folder = release_storage / release.prefix
    cache = str(tmp_path / "cache")
    trl = datasets.load_dataset(str(folder), "examples_openai", split="train", cache_dir=cache)
    assert len(trl) == 3 and {"messages", "source_id", "window"} <= set(trl.column_names)
    assert trl[0]["messages"][0]["role"] in ("system", "user")
    # LLaMA-Factory: dataset_dir is the release, file_name a folder of one file type.
    entry = next(iter(json.loads((folder / "dataset_info.json").read_text()).values()))
    sharegpt = datasets.load_dataset(
        "parquet",
        data_files=str(folder / entry["file_name"] / "*.parquet"),
        split="train",
        cache_dir=cache,
    )
    column = entry["columns"]["messages"]
    assert len(sharegpt) == 3
    tags = entry["tags"]
    for row in sharegpt:
        assert row[column][0][tags["role_tag"]] == tags["user_tag"]
        assert row["window"][0] <= row["window"][1]


def test_a_release_built_in_shard_tasks_has_each_example_once(
    examples, release_storage, settings, django_capture_on_commit_callbacks
):
    # One trajectory per shard task (run eagerly here; tests/infra runs them on real workers):
    # each shard writes the examples of its own id range.
    settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS = 1
    with django_capture_on_commit_callbacks(execute=True):
        result = services.release_run(force=True)
    assert result.action == "sharded", result.message
    release = result.release
    release.refresh_from_db()
    assert release.status == "published"
    folder = release_storage / release.prefix
    files = sorted(p.name for p in (folder / "examples_openai").glob("*.parquet"))
    assert len(files) == release.shards.count() >= 2
    for config in ("examples_openai", "examples_sharegpt"):
        ids = [row["id"] for row in read(folder, config)]
        assert sorted(ids) == sorted(e.pk for e in examples["kept"]), config
