"""Parquet shards of one config, written as rows arrive: row groups flushed as they fill, a new
shard begun when one reaches its size, files named `train-0000i-of-0000N` once N is known.

Fixed writer options make the bytes a function of the rows alone (the same data gives the same
files): zstd at a fixed level, content-defined chunking and a page index (what the Hugging Face
viewer and Xet storage want), no pandas metadata (there is no pandas here), the pinned pyarrow.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from apps.datasets import row_schema

WRITER_OPTIONS = {
    "compression": "zstd",
    "compression_level": 3,
    "use_content_defined_chunking": True,
    "write_page_index": True,
    "write_statistics": True,
    "use_dictionary": True,
    "version": "2.6",
}


def writer_options(config: str) -> dict:
    """WRITER_OPTIONS for one config: statistics (and so the column index) for its short
    top-level columns only (ids, names, counts). Min/max of free text (messages, outputs, up to 4 KB each, twice per
    column chunk and page) prune no query and would make the footer grow with the text, so
    that no shard's size could be held to its limit."""
    scalars = [
        name
        for name, kind in row_schema.CONFIGS[config].items()
        if isinstance(kind, str) and name not in row_schema.FREE_TEXT
    ]
    return {**WRITER_OPTIONS, "write_statistics": scalars}


@dataclass
class WrittenFile:
    config: str
    path: str  # relative to the release folder: data/train-00000-of-00002.parquet
    local: Path
    size: int
    sha256: str
    num_rows: int
    # The file's rows in Arrow memory, as `datasets` counts a split's `num_bytes` (the sum of
    # its tables' `nbytes`); `size` is on disk (the card's `download_size`).
    num_bytes: int = 0


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# What a shard's footer takes beyond its row groups is reserved before a row group is written:
# what an empty file of the config takes (magic, schema with the `datasets` features, twice),
# plus per leaf column chunk of each row group (its metadata: measured 25-60 bytes, with
# statistics on the short columns only), plus an offset-index entry per data page (pages are
# at least 256 KiB with content-defined chunking, except a chunk's last).
FOOTER_BYTES_PER_CHUNK = 160
FOOTER_BYTES_PER_PAGE = 48
MIN_PAGE_BYTES = 256 * 1024
# The next row group's compressed size is guessed from the ratio so far, with this margin.
ESTIMATE_MARGIN = 1.25


def _leaves(value: pa.Schema | pa.DataType) -> int:
    """Leaf columns (what Parquet stores as column chunks) of a schema or type."""
    if isinstance(value, pa.Schema):
        return sum(_leaves(field.type) for field in value)
    if pa.types.is_struct(value):
        return sum(_leaves(value.field(i).type) for i in range(value.num_fields))
    if pa.types.is_list(value) or pa.types.is_large_list(value):
        return _leaves(value.value_type)
    return 1


class ShardWriter:
    """Shards of one config under `folder`, each at most `shard_bytes` on disk (unless one row
    group alone is larger). Memory: one row group of rows at most.

    Before a row group is written its compressed size is estimated (its Arrow size times the
    compression ratio of what this config wrote so far, with a margin; 1:1 at first) and the
    shard is closed first when the row group and the footer would not fit.
    """

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
        self.folder = folder / row_schema.CONFIG_DIRS[config]
        self.folder.mkdir(parents=True, exist_ok=True)
        self.schema = row_schema.arrow_schema(config)
        self.options = writer_options(config)
        self.shard_bytes = shard_bytes
        self.row_group_bytes = row_group_bytes
        self.row_group_rows = row_group_rows
        self._buffer: list[dict] = []
        self._segments: list[pa.Table] = []  # rows of the open row group already in Arrow
        self._buffered = 0
        self._counted = 0
        self._writer: pq.ParquetWriter | None = None
        # (local file, rows, Arrow bytes) of closed shards
        self._shards: list[tuple[Path, int, int]] = []
        self._rows_in_shard = 0
        self._arrow_in_shard = 0
        self._groups_in_shard = 0
        # Arrow bytes in and file bytes out, over every row group written: the ratio guesses
        # the next row group's size on disk.
        self._arrow_bytes = 0
        self._file_bytes = 0
        self.columns = _leaves(self.schema)
        empty = pa.BufferOutputStream()
        pq.ParquetWriter(empty, self.schema, **self.options).close()
        self._empty_bytes = empty.tell()
        self.arrow_bytes = 0  # of the whole config (the card's dataset_size)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"parquet-{config}")
        self._pending: Future[int] | None = None

    def add(self, row: dict, size: int) -> None:
        self._buffer.append(row)
        if self.count(size):
            self._flush()

    def count(self, size: int) -> bool:
        """Account for one more row of `size` bytes in the open row group (its row itself is
        added with add(), or later in a segment with add_segment()); whether the row group is
        full now."""
        self._buffered += size
        self._counted += 1
        return self._buffered >= self.row_group_bytes or self._counted >= self.row_group_rows

    def add_segment(self, table: pa.Table) -> None:
        """Rows already converted to Arrow (in this config's schema), for the open row group."""
        self._segments.append(table)

    def flush(self) -> None:
        """Close the open row group (what count() said is full)."""
        self._flush()

    def _footer_bytes(self, groups: int, data_bytes: int) -> int:
        pages = data_bytes // MIN_PAGE_BYTES
        return (
            self._empty_bytes
            + FOOTER_BYTES_PER_CHUNK * groups * self.columns
            + FOOTER_BYTES_PER_PAGE * pages
        )

    def _fits(self, table: pa.Table) -> bool:
        """Whether `table` as one more row group keeps the open shard within its bytes."""
        ratio = self._file_bytes / self._arrow_bytes if self._arrow_bytes else 1.0
        guess = int(table.nbytes * min(1.0, ratio * ESTIMATE_MARGIN))
        size = self._path.stat().st_size

        footer = self._footer_bytes(self._groups_in_shard + 1, size + guess)
        return size + guess + footer <= self.shard_bytes

    def _flush(self) -> None:
        if self._buffer:
            self._segments.append(pa.Table.from_pylist(self._buffer, schema=self.schema))
            self._buffer = []
        if not self._segments:
            return
        # Segments joined into one table first: pages can be cut where chunks meet, so
        # a row group of several chunks would not be the same bytes as one of the same rows.
        table = (
            self._segments[0]
            if len(self._segments) == 1
            else pa.concat_tables(self._segments).combine_chunks()
        )
        rows = table.num_rows
        self._segments = []
        self._buffered = 0
        self._counted = 0
        self._wait()
        if self._writer is not None and not self._fits(table):
            self._close_shard()
        if self._writer is None:
            path = self.folder / f"part-{len(self._shards):05d}.parquet"
            self._writer = pq.ParquetWriter(str(path), self.schema, **self.options)
            self._path = path
        # Compressed and written in a thread (pyarrow lets go of the GIL meanwhile) while the
        # next row group's rows are shaped: one row group in flight per config at most.
        self._pending = self._executor.submit(self._write, self._writer, table, rows)
        self._arrow_bytes += table.nbytes
        self.arrow_bytes += table.nbytes
        self._rows_in_shard += rows
        self._arrow_in_shard += table.nbytes
        self._groups_in_shard += 1

    def _write(self, writer: pq.ParquetWriter, table: pa.Table, rows: int) -> int:
        before = self._path.stat().st_size
        # One row group per flush: the buffer is what fits in memory for the viewer.
        writer.write_table(table, row_group_size=rows)
        return self._path.stat().st_size - before

    def _wait(self) -> None:
        """Let the row group in flight finish (its error, if any, is raised here)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._file_bytes += pending.result()

    def _close_shard(self) -> None:
        self._wait()
        if self._writer is None:
            return
        self._writer.close()
        self._shards.append((self._path, self._rows_in_shard, self._arrow_in_shard))
        self._writer = None
        self._rows_in_shard = 0
        self._arrow_in_shard = 0
        self._groups_in_shard = 0

    def close(self) -> list[WrittenFile]:
        """Finish the last shard and give every shard its final name (N known now)."""
        try:
            self._flush()
            self._close_shard()
        finally:
            self._executor.shutdown(wait=True)
        if not self._shards:
            # An empty release still has one (empty) file per config, as `datasets` expects.
            path = self.folder / "part-00000.parquet"
            pq.ParquetWriter(str(path), self.schema, **self.options).close()
            self._shards.append((path, 0, 0))
        count = len(self._shards)
        written = []
        for index, (path, num_rows, num_bytes) in enumerate(self._shards):
            final = self.folder / f"train-{index:05d}-of-{count:05d}.parquet"
            path.rename(final)
            written.append(
                WrittenFile(
                    config=self.config,
                    path=f"{row_schema.CONFIG_DIRS[self.config]}/{final.name}",
                    local=final,
                    size=final.stat().st_size,
                    sha256=sha256_of(final),
                    num_rows=num_rows,
                    num_bytes=num_bytes,
                )
            )
        return written


class PairedWriter:
    """`default` and `no_images`, whose columns are the same but `images`: each row is
    converted to Arrow once, in segments cut wherever a row group of either config closes, and
    `default`'s segment is `no_images`'s columns plus `images` (the conversion of the steps,
    most of it, is not done twice). Each config's row groups close where they would alone."""

    def __init__(self, default: ShardWriter, light: ShardWriter):
        assert default.schema.names == [*light.schema.names, "images"]
        self.default = default
        self.light = light
        self._images_type = default.schema.field("images").type
        self._rows: list[dict] = []
        self._images: list[list[dict]] = []

    def add(self, row: dict, images: list[dict], text_size: int, images_size: int) -> None:
        """`row`: the `no_images` row; `images`: the `default` row's `images`."""
        self._rows.append(row)
        self._images.append(images)
        full_default = self.default.count(text_size + images_size)
        full_light = self.light.count(text_size)
        if full_default or full_light:
            self._cut()
            if full_default:
                self.default.flush()
            if full_light:
                self.light.flush()

    def _cut(self) -> None:
        if not self._rows:
            return
        light = pa.Table.from_pylist(self._rows, schema=self.light.schema)
        images = pa.array(self._images, type=self._images_type)
        self._rows, self._images = [], []
        self.light.add_segment(light)
        self.default.add_segment(
            pa.Table.from_arrays([*light.columns, images], schema=self.default.schema)
        )

    def finish(self) -> None:
        """Hand the last rows to both writers (then close each)."""
        self._cut()
