"""Building a release for real: files read back with pyarrow and `datasets`, compared with the
database; what must never be in a release is not; the same data gives the same bytes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.test import Client

from apps.datasets import services
from apps.datasets.feedback_configs import CONFIG_NAMES as FEEDBACK_CONFIGS
from apps.datasets.models import Release, ReleaseStatus
from apps.datasets.parquet import sha256_of
from apps.datasets.row_schema import CONFIG_DIRS, CONFIGS, TRAJECTORY_CONFIGS
from apps.learn.release_configs import EXAMPLE_CONFIGS
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
from tests.datasets.conftest import CONTACT_EMAIL, PLANTED_EMAIL, approve, github_token, share

pytestmark = pytest.mark.django_db


def release_dir(root: Path, release: Release) -> Path:
    return root / release.prefix


def read_config(folder: Path, config: str) -> list[dict]:
    directory = "data" if config == "default" else config
    rows: list[dict] = []
    for path in sorted((folder / directory).glob("train-*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    return rows


@pytest.fixture
def world(release_storage, owner, other_user, moderator):
    secret = github_token()
    public = [
        share(user=owner, seed=1, screenshots=1, plots=1),
        share(user=other_user, seed=2, extra_text=f"mail me at {PLANTED_EMAIL} please"),
        share(user=None, seed=3, email=CONTACT_EMAIL, extra_text=f"I am {CONTACT_EMAIL}"),
    ]
    held = share(user=owner, seed=4, extra_text=f"token {secret}")
    assert held.review_state == "held"
    approved = approve(share(user=owner, seed=5, extra_text=f"other token {secret}"), moderator)
    hidden = share(user=owner, seed=6)
    Trajectory.objects.filter(pk=hidden.pk).update(review_state="hidden")
    rejected = share(user=owner, seed=7)
    Trajectory.objects.filter(pk=rejected.pk).update(review_state="rejected")
    private = share(user=owner, seed=8, visibility="private")
    pending = share(user=owner, seed=9, scan=False)
    assert pending.review_state == "pending"
    return {
        "public": [*public, approved],
        "never": [held, hidden, rejected, private, pending],
        "secret": secret,
    }


def test_release_holds_exactly_the_public_ones_and_reads_back(world, release_storage):
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    release = result.release
    assert release.status == ReleaseStatus.PUBLISHED
    folder = release_dir(release_storage, release)
    expected = {t.share_id: t for t in world["public"]}

    for config in TRAJECTORY_CONFIGS:
        rows = read_config(folder, config)
        assert sorted(row["id"] for row in rows) == sorted(expected), config
    rows = {row["id"]: row for row in read_config(folder, "default")}
    for share_id, trajectory in expected.items():
        row = rows[share_id]
        assert row["num_events"] == trajectory.num_events == len(row["trajectory"])
        assert row["agent"] == trajectory.agent and row["model"] == trajectory.model_name
        assert row["polarity"] == trajectory.polarity and row["feedback"] == "positive"
        assert row["license"] == "MIT" and row["permissions"] == "public"
        stored = list(trajectory.events.order_by("position").values_list("type", flat=True))
        kinds = [step["action"] or step["observation"] for step in row["trajectory"]]
        assert len(kinds) == len(stored)
    # Screenshots and plots of the first one, as bytes with their sha256 as path.
    first = rows[world["public"][0].share_id]
    images = {link.image.sha256 for link in world["public"][0].image_links.select_related("image")}
    assert images and {image["path"] for image in first["images"]} == images
    assert all(image["bytes"].startswith(b"\x89PNG") for image in first["images"])
    assert any(
        f"trajhub-image:{sha}" in (step["extras"] or "")
        for step in first["trajectory"]
        for sha in images
    )

    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(manifest["added_ids"]) == sorted(expected)
    assert manifest["removed_ids"] == [] and manifest["previous_release"] is None
    for item in manifest["files"]:
        path = folder / item["path"]
        assert path.stat().st_size == item["size"] and sha256_of(path) == item["sha256"]
    # No example was synthesized and no feedback given here: those configs are there, empty
    # (tests/datasets/test_release_examples.py and test_release_feedback.py fill them).
    assert manifest["rows"] == {config: len(expected) for config in TRAJECTORY_CONFIGS} | {
        config: 0 for config in (*FEEDBACK_CONFIGS, *EXAMPLE_CONFIGS)
    }
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "dataset_info:" in card and 'config_name: "openai"' in card


def test_nothing_private_secret_or_email_in_any_file(world, release_storage):
    release = services.release_run(force=True).release
    blobs = b"".join(
        p.read_bytes() for p in release_dir(release_storage, release).rglob("*") if p.is_file()
    )
    # Parquet pages are compressed: read every value back as text too.
    text = ""
    for config in CONFIGS:
        text += json.dumps(read_config(release_dir(release_storage, release), config), default=str)
    for trajectory in world["never"]:
        assert trajectory.share_id not in text
    for needle in (PLANTED_EMAIL, CONTACT_EMAIL, world["secret"], world["secret"][4:20]):
        assert needle not in text and needle.encode() not in blobs
    assert "<EMAIL" in text  # redacted, not dropped


def test_same_data_gives_the_same_bytes(world, release_storage, settings):
    first = services.release_run(force=True).release
    files_first = {f.path: f.sha256 for f in first.files.all() if f.path.endswith(".parquet")}
    # Rebuild the same content as a new release (the previous one failed, so nothing is new).
    Release.objects.filter(pk=first.pk).update(status=ReleaseStatus.FAILED)
    second = services.release_run(force=True).release
    assert second.version == first.version + 1
    files_second = {f.path: f.sha256 for f in second.files.all() if f.path.endswith(".parquet")}
    assert files_first == files_second and len(files_first) == len(CONFIGS)
    for path in files_first:
        assert (release_dir(release_storage, first) / path).read_bytes() == (
            release_dir(release_storage, second) / path
        ).read_bytes()


def test_writer_options_and_row_groups(world, release_storage, settings):
    settings.TRAJHUB_RELEASE_ROW_GROUP_ROWS = 2
    settings.TRAJHUB_RELEASE_SHARD_BYTES = 1  # every row group closes its shard
    release = services.release_run(force=True).release
    folder = release_dir(release_storage, release)
    shards = sorted((folder / "data").glob("*.parquet"))
    assert [p.name for p in shards] == [
        "train-00000-of-00002.parquet",
        "train-00001-of-00002.parquet",
    ]
    meta = pq.ParquetFile(shards[0]).metadata
    assert meta.num_row_groups == 1 and meta.num_rows == 2
    column = meta.row_group(0).column(0)
    assert column.compression == "ZSTD"
    assert column.has_offset_index and column.has_column_index
    assert b"pandas" not in (meta.metadata or {})
    assert b"huggingface" in meta.metadata


def test_twice_with_nothing_new_publishes_nothing_new(world, release_storage):
    first = services.release_run(force=True)
    again = services.release_run(force=True)
    assert again.action == "nothing_new"
    assert Release.objects.count() == 1
    assert services.release_run().action == "not_due"
    assert first.release.version == 1


def test_deleted_is_absent_next_time_listed_as_removed_and_old_release_superseded(
    world, release_storage, owner
):
    first = services.release_run(force=True).release
    gone = world["public"][0]
    trajectory_delete(trajectory=gone)
    second = services.release_run(force=True)
    assert second.action == "published", second.message
    second = second.release
    assert second.removed_ids == [gone.share_id] and second.added_ids == []
    ids = [row["id"] for row in read_config(release_dir(release_storage, second), "no_images")]
    assert gone.share_id not in ids and len(ids) == len(world["public"]) - 1
    manifest = json.loads((release_dir(release_storage, second) / "manifest.json").read_text())
    assert manifest["removed_ids"] == [gone.share_id] and manifest["previous_release"] == 1
    first.refresh_from_db()
    # By default the superseded files, which still hold the deleted share, are taken down
    # (issue 20: the delete page promises only its id and date stay).
    assert first.superseded_by_id == second.pk and first.files_deleted
    assert not any(release_dir(release_storage, first).rglob("*.parquet"))
    page = Client().get(f"/releases/{first.version}/")
    assert page.status_code == 200 and "superseded" in page.content.decode().lower()


def test_superseded_files_stay_when_the_operator_keeps_them(world, release_storage, settings):
    first = services.release_run(force=True).release
    settings.TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED = False
    trajectory_delete(trajectory=world["public"][1])
    services.release_run(force=True)
    first.refresh_from_db()
    assert first.superseded_by_id is not None and not first.files_deleted
    assert any(release_dir(release_storage, first).rglob("*.parquet"))


def card_text(folder) -> str:
    return (folder / "README.md").read_text()


def test_read_with_datasets_by_data_files_and_by_card_configs(
    world, release_storage, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    release = services.release_run(force=True).release
    folder = release_dir(release_storage, release)
    import datasets

    by_files = datasets.load_dataset(
        "parquet",
        data_files=str(folder / "data" / "train-*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert isinstance(by_files.features["images"].feature, datasets.Image)
    assert sorted(by_files["id"]) == sorted(t.share_id for t in world["public"])
    for config in TRAJECTORY_CONFIGS:
        loaded = datasets.load_dataset(
            str(folder), config, split="train", cache_dir=str(tmp_path / "cache")
        )
        assert len(loaded) == len(world["public"]), config
    openai = datasets.load_dataset(
        str(folder), "openai", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert openai[0]["messages"][0]["role"] in ("system", "user")
    sharegpt = datasets.load_dataset(
        str(folder), "sharegpt", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert {turn["from"] for turn in sharegpt[0]["conversations"]} >= {
        "human",
        "function_call",
        "observation",
    }
    atif = datasets.load_dataset(
        str(folder), "atif", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert {row["schema_version"] for row in atif} == {"ATIF-v1.7"}
    steps = [step for row in atif for step in row["steps"]]
    calls = [call for step in steps if step["tool_calls"] for call in step["tool_calls"]]
    results = [r for step in steps if step["observation"] for r in step["observation"]["results"]]
    assert calls and {r["source_call_id"] for r in results} & {c["tool_call_id"] for c in calls}
    assert all(isinstance(json.loads(call["arguments"]), dict) for call in calls)
    # The adp config: each row gives back an ADP trajectory that ADP's schema accepts.
    from apps.datasets.row_formats import adp_from_row
    from apps.trajectories.exporters.adp_schema import problems

    adp = datasets.load_dataset(
        str(folder), "adp", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert len(adp) == len(world["public"])
    for row in adp:
        document = adp_from_row(row)
        assert problems(document) == [], problems(document)
        assert document["id"] == row["id"] and document["content"]
    assert 'config_name: "adp"' in card_text(folder)
    # No synthesis ran: the examples configs are empty. `datasets` cannot load a split without
    # rows, so the card does not offer them (issue 20: every listed config failed to load with
    # `Instruction "train" corresponds to no data!`); their zero-row files read with pyarrow.
    card = (folder / "README.md").read_text()
    assert 'config_name: "atif"' in card and "`atif` (atif/): Harbor's Agent Trajectory" in card
    for config in (*FEEDBACK_CONFIGS, *EXAMPLE_CONFIGS):
        assert f'config_name: "{config}"' not in card
        assert f"`{config}` ({CONFIG_DIRS[config]}/)" in card and "Empty in this release" in card
        empty = read_config(folder, config)
        assert empty == []
        (part,) = (folder / CONFIG_DIRS[config]).glob("train-*.parquet")
        assert pq.read_schema(part).names
    listed = re.findall(r'config_name: "([a-z_]+)"', card.split("dataset_info:")[0])
    for config in listed:
        datasets.load_dataset(str(folder), config, split="train", cache_dir=str(tmp_path / "c"))
    images = datasets.load_dataset(
        str(folder), "default", split="train", cache_dir=str(tmp_path / "cache")
    )
    with_images = [row for row in images if row["images"]]
    assert with_images and with_images[0]["images"][0].size[0] > 1  # decoded PIL image
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_card_sizes_are_what_datasets_counts(world, release_storage, tmp_path, monkeypatch):
    """A split's `num_bytes` (and `dataset_size`) is the data in Arrow memory, as `datasets`
    computes it when it loads the files; `download_size` is the files."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets
    import yaml

    release = services.release_run(force=True).release
    folder = release_dir(release_storage, release)
    front = yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])
    for info in front["dataset_info"]:
        config = info["config_name"]
        files = sorted((folder / CONFIG_DIRS[config]).glob("train-*.parquet"))
        (split,) = info["splits"]
        assert info["download_size"] == sum(path.stat().st_size for path in files)
        if split["num_examples"] == 0:  # no synthesized examples here: `datasets` reads none
            assert split["num_bytes"] == info["dataset_size"] == 0, config
            continue
        loaded = datasets.load_dataset(
            "parquet",
            data_files=[str(path) for path in files],
            split="train",
            cache_dir=str(tmp_path / "cache"),
        )
        counted = loaded.info.splits["train"].num_bytes
        assert split["num_examples"] == len(loaded)
        assert info["dataset_size"] == split["num_bytes"]
        # `datasets` sums its own record batches' nbytes: a validity bitmap more or less.
        assert abs(split["num_bytes"] - counted) <= max(64, counted // 1000), config
        # Compressed Parquet is smaller than the same rows in memory: not the file size.
        assert split["num_bytes"] > info["download_size"], config


def test_row_groups_close_at_their_size_in_memory(world, release_storage, settings):
    settings.TRAJHUB_RELEASE_ROW_GROUP_BYTES = 1  # every row over the limit: one per group
    release = services.release_run(force=True).release
    (shard,) = (release_dir(release_storage, release) / "data").glob("*.parquet")
    meta = pq.ParquetFile(shard).metadata
    assert meta.num_row_groups == meta.num_rows == len(world["public"])


@pytest.mark.parametrize("in_shard_tasks", [False, True], ids=["one-process", "shard-tasks"])
def test_shards_are_bounded_by_bytes_split_where_they_fill_and_read_back(
    world,
    release_storage,
    settings,
    tmp_path,
    monkeypatch,
    in_shard_tasks,
    django_capture_on_commit_callbacks,
):
    settings.TRAJHUB_RELEASE_ROW_GROUP_ROWS = 1  # one trajectory per row group
    whole = services.release_run(force=True).release
    sizes = {f.config: f.size for f in whole.files.all() if f.config}
    Release.objects.filter(pk=whole.pk).update(status=ReleaseStatus.FAILED)
    # A limit that the text configs' whole file exceeds: they must split.
    limit = max(sizes["no_images"], sizes["sharegpt"]) * 2 // 3
    settings.TRAJHUB_RELEASE_SHARD_BYTES = limit
    if in_shard_tasks:
        # Tasks of 3 and 1 trajectories (run eagerly here), planned from raw sizes that say
        # nothing (as a compressed upload's): the first task's rows pass the limit anyway.
        settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS = len(world["public"]) - 1
        Trajectory.objects.update(num_bytes=1)
    with django_capture_on_commit_callbacks(execute=True):
        result = services.release_run(force=True)
    assert result.action == ("sharded" if in_shard_tasks else "published"), result.message
    release = Release.objects.get(pk=result.release.pk)
    assert release.status == ReleaseStatus.PUBLISHED
    assert release.shards.count() == (2 if in_shard_tasks else 0)
    folder = release_dir(release_storage, release)
    assert not list(folder.rglob("part-*"))  # every part has its final name
    if in_shard_tasks:
        # A task's rows did not fit in one file, whatever the plan said: it wrote two.
        parts = [
            [f for f in shard.files if f["config"] == "no_images"] for shard in release.shards.all()
        ]
        assert max(len(files) for files in parts) >= 2, parts
    for config in ("no_images", "openai", "sharegpt"):
        directory = folder / config
        shards = sorted(directory.glob("*.parquet"))
        count = len(shards)
        assert [p.name for p in shards] == [
            f"train-{i:05d}-of-{count:05d}.parquet" for i in range(count)
        ]
        if sizes[config] > limit:
            assert count >= 2, (config, sizes, limit, [p.stat().st_size for p in shards])
        metas = [pq.ParquetFile(path).metadata for path in shards]
        for path, meta in zip(shards, metas, strict=True):
            assert path.stat().st_size <= limit or meta.num_row_groups == 1, (config, path)
        # Split where the next row group would not have fitted (the estimate is conservative,
        # not wasteful: the next group plus its footer share would pass 3/4 of the limit);
        # shard tasks also end a file where their id range ends.
        for path, after in zip(shards, metas[1:] if not in_shard_tasks else [], strict=False):
            group = after.row_group(0)
            next_group = sum(
                group.column(i).total_compressed_size for i in range(group.num_columns)
            )
            assert path.stat().st_size + next_group > limit * 3 // 4, (config, path)
        rows = [row["id"] for path in shards for row in pq.read_table(path).to_pylist()]
        # In trajectory order, across the shards.
        assert rows == [t.share_id for t in sorted(world["public"], key=lambda t: t.pk)]
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = {f["path"]: f["size"] for f in manifest["files"]}
    for path in folder.rglob("*.parquet"):
        assert listed[str(path.relative_to(folder))] == path.stat().st_size

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    for config in TRAJECTORY_CONFIGS:  # (this world has no synthesized examples)
        loaded = datasets.load_dataset(
            str(folder), config, split="train", cache_dir=str(tmp_path / "cache")
        )
        assert sorted(loaded["id"]) == sorted(t.share_id for t in world["public"]), config
