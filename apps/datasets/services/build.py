"""Writing a release's Parquet files: the trajectories of its entries, streamed in id order
from server-side cursors (trajectories, events, image links side by side), redacted as on the
public pages, shaped by schema.rows() and written by one ShardWriter per config."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings

from apps.datasets import schema, selectors
from apps.datasets.models import Release
from apps.datasets.parquet import ShardWriter, WrittenFile
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.redaction import redact_data, redactor
from apps.trajectories.services.storage import image_read

Progress = Callable[[int], None]

# A 1x1 grey PNG: what the `images` column holds for an image that may not be released (the
# steps still refer to it by its sha256, so the row stays consistent).
PLACEHOLDER_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
    "0000000a4944415478da6368000000820081da45083b0000000049454e44ae426082"
)
CONTACT_PLACEHOLDER = "<EMAIL>"


def release_redactor(row: dict) -> Callable[[str], str]:
    """The public pages' redactions, plus the contributor's own addresses: a contact email or
    account email never reaches a release, even where the scan let it stand (allowlisted)."""
    redactions = dict(row["redactions"] or {})
    for email in (row.get("contact_email"), row.get("owner_email")):
        if email:
            redactions.setdefault(email, CONTACT_PLACEHOLDER)
    return redactor(redactions)


def _events_by_trajectory(events: Iterator[tuple]) -> Iterator[tuple[int, list[tuple]]]:
    for pk, group in groupby(events, key=lambda row: row[0]):
        yield pk, list(group)


class _Aligned:
    """Walks an iterator of (trajectory id, items) alongside the trajectories in id order."""

    def __init__(self, groups: Iterator[tuple[int, list[Any]]]):
        self._groups = groups
        self._next: tuple[int, list[Any]] | None = next(groups, None)

    def take(self, pk: int) -> list[Any]:
        while self._next is not None and self._next[0] < pk:
            self._next = next(self._groups, None)
        if self._next is not None and self._next[0] == pk:
            items = self._next[1]
            self._next = next(self._groups, None)
            return items
        return []


def release_rows(
    release: Release, *, first_id: int = 0, last_id: int | None = None
) -> Iterator[dict[str, dict]]:
    """Each trajectory of the release (or of one shard's id range) as one row per config."""
    trajectories = selectors.trajectories_of_entries(release, first_id, last_id)
    events = _Aligned(
        _events_by_trajectory(selectors.events_of_entries(release, first_id, last_id))
    )
    images = _Aligned(
        (pk, list(group))
        for pk, group in groupby(
            selectors.images_of_entries(release, first_id, last_id),
            key=lambda link: link.trajectory_id,
        )
    )
    for row in trajectories:
        redact = release_redactor(row)
        canonical = [
            CanonicalEvent(
                source=source,
                kind=kind,
                type=type_,
                text=redact(text),
                data=redact_data(orjson.loads(data), redact),
                original_id=redact(original_id),
                timestamp=timestamp,
                cause=redact(cause),
            )
            for _pk, original_id, timestamp, source, kind, type_, cause, text, data in events.take(
                row["id"]
            )
        ]
        pictures = [
            {
                "bytes": image_read(link.image)
                if selectors.image_releasable(link.image)
                else PLACEHOLDER_PNG,
                "path": link.image.sha256,
            }
            for link in images.take(row["id"])
        ]
        metadata = redact_data(row["metadata"] or {}, redact)
        when = row["published_at"] or row["created_at"]
        fields = schema.TrajectoryFields(
            share_id=row["share_id"],
            feedback_version=str(metadata.get("feedback_version") or ""),
            polarity=row["polarity"],
            feedback_text=redact(row["feedback_text"]),
            agent=redact(row["agent"]),
            model=redact(row["model_name"]),
            source_format=row["source_format"],
            num_events=len(canonical),
            license=row["license"],
            timestamp=when.isoformat(),
            tools_meta={"metadata": metadata},
        )
        yield schema.rows(fields, canonical, pictures)


def write_release_files(
    release: Release,
    folder: Path,
    *,
    first_id: int = 0,
    last_id: int | None = None,
    progress: Progress | None = None,
    single_file: bool = False,
) -> list[WrittenFile]:
    """Write every config's shards of the release (or of one id range) into `folder`;
    `single_file`: one file per config (a shard task's id range is planned to fit)."""
    writers = {
        config: ShardWriter(
            config,
            folder,
            shard_bytes=2**62 if single_file else settings.TRAJHUB_RELEASE_SHARD_BYTES,
            row_group_bytes=settings.TRAJHUB_RELEASE_ROW_GROUP_BYTES,
            row_group_rows=settings.TRAJHUB_RELEASE_ROW_GROUP_ROWS,
        )
        for config in schema.CONFIGS
    }
    done = 0
    last_report = time.monotonic()
    for rows in release_rows(release, first_id=first_id, last_id=last_id):
        default = rows["default"]
        images = sum(len(image["bytes"]) for image in default["images"])
        text = schema.row_bytes(rows["no_images"])
        for config, row in rows.items():
            size = text + images if config == "default" else text
            writers[config].add(row, size)
        done += 1
        if progress is not None and (time.monotonic() - last_report > 1.0):
            progress(done)
            last_report = time.monotonic()
    # Synthesized examples (apps/learn) of the same trajectories, as two configs of their own.
    from apps.learn.exports import release_example_rows

    for rows in release_example_rows(release, first_id=first_id, last_id=last_id):
        for config, row in rows.items():
            writers[config].add(row, len(orjson.dumps(row)))
    if progress is not None:
        progress(done)
    written: list[WrittenFile] = []
    for writer in writers.values():
        written.extend(writer.close())
    return written
