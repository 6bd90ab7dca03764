"""Parquet shards of one config, written as rows arrive: row groups flushed as they fill, a new
shard begun when one reaches its size, files named `train-0000i-of-0000N` once N is known.

Fixed writer options make the bytes a function of the rows alone (the same data gives the same
files): zstd at a fixed level, content-defined chunking and a page index (what the Hugging Face
viewer and Xet storage want), no pandas metadata (there is no pandas here), the pinned pyarrow.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from apps.datasets import schema

WRITER_OPTIONS = {
    "compression": "zstd",
    "compression_level": 3,
    "use_content_defined_chunking": True,
    "write_page_index": True,
    "write_statistics": True,
    "use_dictionary": True,
    "version": "2.6",
}


@dataclass
class WrittenFile:
    config: str
    path: str  # relative to the release folder: data/train-00000-of-00002.parquet
    local: Path
    size: int
    sha256: str
    num_rows: int


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class ShardWriter:
    """Shards of one config under `folder`. Memory: one row group of rows at most."""

    def __init__(
        self,
        config: str,
        folder: Path,
        *,
        shard_bytes: int,
        row_group_bytes: int,
        row_group_rows: int,
    ):
        self.config = config
        self.folder = folder / schema.CONFIG_DIRS[config]
        self.folder.mkdir(parents=True, exist_ok=True)
        self.schema = schema.arrow_schema(config)
        self.shard_bytes = shard_bytes
        self.row_group_bytes = row_group_bytes
        self.row_group_rows = row_group_rows
        self._buffer: list[dict] = []
        self._buffered = 0
        self._writer: pq.ParquetWriter | None = None
        self._shards: list[tuple[Path, int]] = []  # (local file, rows) of closed shards
        self._rows_in_shard = 0

    def add(self, row: dict, size: int) -> None:
        self._buffer.append(row)
        self._buffered += size
        if self._buffered >= self.row_group_bytes or len(self._buffer) >= self.row_group_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        if self._writer is None:
            path = self.folder / f"part-{len(self._shards):05d}.parquet"
            self._writer = pq.ParquetWriter(str(path), self.schema, **WRITER_OPTIONS)
            self._path = path
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        # One row group per flush: the buffer is what fits in memory for the viewer.
        self._writer.write_table(table, row_group_size=len(self._buffer))
        self._rows_in_shard += len(self._buffer)
        self._buffer = []
        self._buffered = 0
        if self._path.stat().st_size >= self.shard_bytes:
            self._close_shard()

    def _close_shard(self) -> None:
        if self._writer is None:
            return
        self._writer.close()
        self._shards.append((self._path, self._rows_in_shard))
        self._writer = None
        self._rows_in_shard = 0

    def close(self) -> list[WrittenFile]:
        """Finish the last shard and give every shard its final name (N known now)."""
        self._flush()
        self._close_shard()
        if not self._shards:
            # An empty release still has one (empty) file per config, as `datasets` expects.
            path = self.folder / "part-00000.parquet"
            pq.ParquetWriter(str(path), self.schema, **WRITER_OPTIONS).close()
            self._shards.append((path, 0))
        count = len(self._shards)
        written = []
        for index, (path, num_rows) in enumerate(self._shards):
            final = self.folder / f"train-{index:05d}-of-{count:05d}.parquet"
            path.rename(final)
            written.append(
                WrittenFile(
                    config=self.config,
                    path=f"{schema.CONFIG_DIRS[self.config]}/{final.name}",
                    local=final,
                    size=final.stat().st_size,
                    sha256=sha256_of(final),
                    num_rows=num_rows,
                )
            )
        return written
