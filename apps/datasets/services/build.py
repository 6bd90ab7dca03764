"""Writing a release's Parquet files: the trajectories of its entries in id order, read in
batches (the trajectories and image links of a batch, then its events streamed with one COPY),
redacted as on the public pages, shaped by row_schema.rows() and written by one ShardWriter per
config. The configs registered alongside (configs.register_alongside: step feedback) get their
rows from each trajectory as built, in the same pass; those registered with a source of their
own (synthesized examples) are read after it."""

from __future__ import annotations

import contextlib
import gc
import time
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings

from apps.datasets import configs, row_schema, selectors
from apps.datasets.models import Release
from apps.datasets.parquet import PairedWriter, ShardWriter, WrittenFile
from apps.trajectories.exporters.common import conversation
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.models import TrajectoryImage
from apps.trajectories.redaction import redact_data, redactor
from apps.trajectories.services.storage import image_read
from apps.trajectories.shown import contributor_redactions

Progress = Callable[[int], None]
# The key of release_rows' rows under which the configs registered alongside have theirs.
ALONGSIDE = "alongside"

# A 1x1 grey PNG: what the `images` column holds for an image that may not be released (the
# steps still refer to it by its sha256, so the row stays consistent).
PLACEHOLDER_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
    "0000000a4944415478da6368000000820081da45083b0000000049454e44ae426082"
)


def release_redactor(row: dict) -> Callable[[str], str]:
    """The public pages' redactions, plus the contributor's own addresses: a contact email or
    account email never reaches a release, even where the scan let it stand (allowlisted)."""
    return redactor(
        contributor_redactions(
            row["redactions"], (row.get("contact_email"), row.get("owner_email"))
        )
    )


def release_rows(
    release: Release,
    *,
    first_id: int = 0,
    last_id: int | None = None,
    between: Progress | None = None,
) -> Generator[dict[str, Any], None, None]:
    """Each trajectory of the release (or of one shard's id range) as one row per config, in id
    order, read in batches (selectors.entry_batches). While a batch's events stream, the
    database connection is busy: the caller runs no query between rows, only in `between`
    (called with the number of trajectories done after each batch), and closes the generator
    if it stops early."""
    done = 0
    for ids in selectors.entry_batches(release, first_id, last_id):
        trajectories = selectors.trajectories_by_id(ids)
        images: dict[int, list[TrajectoryImage]] = defaultdict(list)
        for link in selectors.images_of_trajectories(ids):
            images[link.trajectory_id].append(link)
        # Read before the events stream: no query may run while they do.
        companions = [extra.batch(release, ids) for extra in configs.alongside()]
        stream = selectors.events_of_trajectories(ids)
        try:
            events = groupby(stream, key=itemgetter(0))
            pending = next(events, None)
            for row in trajectories:
                # Events of a trajectory that left the release meanwhile are skipped.
                while pending is not None and pending[0] < row["id"]:
                    pending = next(events, None)
                own: Iterable[tuple] = ()
                if pending is not None and pending[0] == row["id"]:
                    own = pending[1]
                yield _trajectory_rows(row, own, images.pop(row["id"], []), companions)
                if own:
                    pending = next(events, None)
                done += 1
        finally:
            stream.close()
        if between is not None:
            between(done)


def _trajectory_rows(
    row: dict,
    events: Iterable[tuple],
    links: list[TrajectoryImage],
    companions: Sequence[configs.TrajectoryRows] = (),
) -> dict[str, Any]:
    """{config: row} of the trajectory configs, and under ALONGSIDE {config: [rows]} of the
    configs registered alongside."""
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
        for _pk, original_id, timestamp, source, kind, type_, cause, text, data in events
    ]
    pictures = [
        {
            "bytes": image_read(link.image)
            if selectors.image_releasable(link.image)
            else PLACEHOLDER_PNG,
            "path": link.image.sha256,
        }
        for link in links
    ]
    metadata = redact_data(row["metadata"] or {}, redact)
    when = row["published_at"] or row["created_at"]
    fields = row_schema.TrajectoryFields(
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
        agent_version=redact(row.get("agent_version") or ""),
    )
    talk = conversation(canonical)
    rows: dict[str, Any] = row_schema.rows(fields, canonical, pictures, talk)
    extra: dict[str, list[dict]] = defaultdict(list)
    if companions:
        openai = rows["openai"]
        built = configs.BuiltTrajectory(
            id=row["id"],
            share_id=row["share_id"],
            license=row["license"],
            events=canonical,
            talk=talk,
            messages=openai["messages"],
            tools=openai["tools"],
            redactions=row["redactions"] or {},
            redact=redact,
        )
        for companion in companions:
            for config, made in companion(built).items():
                extra[config].extend(made)
    rows[ALONGSIDE] = extra
    return rows


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cycle collector runs every 700 allocations by default, and its older
    generations then walk every live object: the row groups being filled hold millions of
    dicts and strings, none in a cycle (reference counting frees them). Collecting every
    100,000 allocations meanwhile saves about a tenth of the build's CPU time."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def write_release_files(
    release: Release,
    folder: Path,
    *,
    first_id: int = 0,
    last_id: int | None = None,
    progress: Progress | None = None,
) -> list[WrittenFile]:
    """Write every config's shards of the release (or of one shard task's id range) into
    `folder`, each at most TRAJHUB_RELEASE_SHARD_BYTES (unless one row group alone is larger)."""
    writers = {
        config: ShardWriter(
            config,
            folder,
            shard_bytes=settings.TRAJHUB_RELEASE_SHARD_BYTES,
            row_group_bytes=settings.TRAJHUB_RELEASE_ROW_GROUP_BYTES,
            row_group_rows=settings.TRAJHUB_RELEASE_ROW_GROUP_ROWS,
        )
        for config in row_schema.CONFIGS
    }
    paired = PairedWriter(writers["default"], writers["no_images"])
    others = [c for c in row_schema.TRAJECTORY_CONFIGS if c not in ("default", "no_images")]
    done = 0
    last_report = time.monotonic()

    def between(count: int) -> None:
        nonlocal done, last_report
        done = count
        if progress is not None and (time.monotonic() - last_report > 1.0):
            progress(done)
            last_report = time.monotonic()

    with (
        _fewer_collections(),
        contextlib.closing(
            release_rows(release, first_id=first_id, last_id=last_id, between=between)
        ) as stream,
    ):
        for rows in stream:
            pictures = rows["default"]["images"]
            light = rows["no_images"]
            text = row_schema.row_bytes(light)
            paired.add(light, pictures, text, sum(len(image["bytes"]) for image in pictures))
            # The other configs' row groups are judged by the same text size.
            for config in others:
                writers[config].add(rows[config], text)
            for config, made in rows[ALONGSIDE].items():
                for row in made:
                    writers[config].add(row, len(orjson.dumps(row)))
    # The registered configs' rows (apps/learn's synthesized examples) of the same trajectories.
    for extra in configs.registered():
        for rows in extra.rows(release, first_id=first_id, last_id=last_id):
            for config, row in rows.items():
                writers[config].add(row, len(orjson.dumps(row)))
    paired.finish()
    if progress is not None:
        progress(done)
    written: list[WrittenFile] = []
    for writer in writers.values():
        written.extend(writer.close())
    return written
