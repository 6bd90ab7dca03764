"""The Parquet writers on their own: `default` and `no_images` converted once (PairedWriter)
give the same files, byte for byte, as each config written from its own rows."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq

from apps.datasets.parquet import PairedWriter, ShardWriter
from apps.datasets.row_schema import CONFIG_DIRS

PNG = bytes.fromhex("89504e470d0a1a0a")


def _rows(count: int) -> list[tuple[dict, list[dict]]]:
    rng = random.Random(3)
    out = []
    for number in range(count):
        steps = [
            {
                "id": step,
                "timestamp": None,
                "source": "agent",
                "message": "x" * rng.randint(0, 2000),
                "action": "run",
                "observation": None,
                "content": None,
                "args": f'{{"command": "ls {rng.random()}"}}',
                "extras": None,
            }
            for step in range(rng.randint(1, 12))
        ]
        row = {
            "id": f"{number:064x}",
            "version": "",
            "feedback": "positive",
            "permissions": "public",
            "timestamp": "2026-01-01T00:00:00+00:00",
            "trajectory": steps,
            "polarity": "positive",
            "feedback_text": "",
            "agent": "OpenHands",
            "model": "m",
            "source_format": "openhands",
            "num_events": len(steps),
            "license": "MIT",
        }
        images = [
            {"bytes": PNG + bytes(rng.randint(0, 30_000)), "path": f"{number}-{i}"}
            for i in range(rng.choice([0, 0, 1, 3]))
        ]
        out.append((row, images))
    return out


def _writers(folder: Path) -> tuple[ShardWriter, ShardWriter]:
    def one(config: str) -> ShardWriter:
        return ShardWriter(
            config, folder, shard_bytes=200_000, row_group_bytes=40_000, row_group_rows=25
        )

    return one("default"), one("no_images")


def _size(row: dict) -> int:
    return sum(len(step["message"]) + len(step["args"]) for step in row["trajectory"])


def test_paired_writer_writes_the_bytes_each_config_would_alone(tmp_path):
    rows = _rows(300)
    default, light = _writers(tmp_path / "alone")
    for row, images in rows:
        images_size = sum(len(image["bytes"]) for image in images)
        default.add({**row, "images": images}, _size(row) + images_size)
        light.add(row, _size(row))
    alone = [*default.close(), *light.close()]

    default, light = _writers(tmp_path / "paired")
    paired = PairedWriter(default, light)
    for row, images in rows:
        paired.add(row, images, _size(row), sum(len(image["bytes"]) for image in images))
    paired.finish()
    together = [*default.close(), *light.close()]

    assert [f.path for f in together] == [f.path for f in alone]
    assert [f.sha256 for f in together] == [f.sha256 for f in alone]
    # The two configs closed their row groups and shards at different rows (images count in
    # `default` only), so the shared segments were cut and joined in between.
    groups = {
        config: sum(
            pq.ParquetFile(f.local).metadata.num_row_groups for f in together if f.config == config
        )
        for config in ("default", "no_images")
    }
    assert groups["default"] > groups["no_images"] > 1
    shards = {
        config: len(list((tmp_path / "paired" / CONFIG_DIRS[config]).glob("*")))
        for config in groups
    }
    assert shards["default"] > 1
    back = pq.read_table(tmp_path / "paired" / "data").to_pylist()
    assert [r["images"] for r in back] == [images for _row, images in rows]
    assert [r["trajectory"] for r in back] == [row["trajectory"] for row, _images in rows]
