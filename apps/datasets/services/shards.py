"""A release build split across workers: the id ranges planned, one task per range writing and
uploading its parts, and the task that completes the last shard naming every part and
publishing (publish.release_finish)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core import queueing
from apps.datasets import row_schema
from apps.datasets.models import Release, ReleaseEntry, ReleaseShard, ReleaseStatus
from apps.datasets.services import publish, storage
from apps.datasets.services.build import write_release_files

logger = logging.getLogger(__name__)

# The task that builds one shard (registered by apps.datasets.tasks).
SHARD_TASK = "apps.datasets.tasks.release_shard"


def release_split(release: Release) -> int:
    """Plan shards (id ranges of at most TRAJHUB_RELEASE_SHARD_TASK_ROWS trajectories and about
    TRAJHUB_RELEASE_SHARD_BYTES) and queue one task per shard; the last to finish publishes
    (release_shard_build). Returns how many shard tasks."""
    per = settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
    limit = settings.TRAJHUB_RELEASE_SHARD_BYTES
    rows = (
        ReleaseEntry.objects.filter(release=release)
        .order_by("trajectory_id")
        .values_list("trajectory_id", "trajectory__num_bytes")
    )
    # A task's range: at most `per` trajectories and about one shard of raw uploads (the JSON
    # as shared, images in base64: usually more than the same rows take compressed in
    # Parquet), so that most tasks write one file per config. The estimate is no bound: a task
    # whose rows take more starts another file where the writer's limit says (and a
    # compressed upload's raw size says little).
    chunks: list[list[int]] = [[]]
    planned = 0
    for pk, size in rows:
        if chunks[-1] and (len(chunks[-1]) >= per or planned + (size or 0) > limit):
            chunks.append([])
            planned = 0
        chunks[-1].append(pk)
        planned += size or 0
    with transaction.atomic():
        ReleaseShard.objects.bulk_create(
            [
                ReleaseShard(release=release, index=index, first_id=chunk[0], last_id=chunk[-1])
                for index, chunk in enumerate(chunks)
            ]
        )
        Release.objects.filter(pk=release.pk).update(
            heartbeat_at=timezone.now(), progress_total=release.num_rows, progress_done=0
        )
        shard_ids = list(release.shards.values_list("pk", flat=True))
        release_shard = queueing.task(SHARD_TASK)
        transaction.on_commit(lambda: [release_shard.delay(pk) for pk in shard_ids])
    return len(chunks)


def _name_parts(release: Release, files: list[dict]) -> None:
    """Each config's parts, in order, renamed `train-0000i-of-0000N` (N: that config's)."""
    for config in row_schema.CONFIGS:
        mine = [item for item in files if item["config"] == config]
        for index, item in enumerate(mine):
            directory = item["path"].rsplit("/", 1)[0]
            final = f"{directory}/train-{index:05d}-of-{len(mine):05d}.parquet"
            storage.rename(release.prefix, item["path"], final)
            item["path"] = final


def _touch(release: Release) -> None:
    Release.objects.filter(pk=release.pk).update(heartbeat_at=timezone.now())


def release_shard_build(*, shard: ReleaseShard, worker: str = "") -> str:
    """Write one shard task's files, each config's at most TRAJHUB_RELEASE_SHARD_BYTES (as
    in a build in one process: the id range was planned from an estimate, the writer holds the
    bound), upload them as parts and record them on the shard row; the task that completes the
    last shard gives every part its name (`train-i-of-N`, N known now) and publishes."""
    claimed = ReleaseShard.objects.filter(
        pk=shard.pk, status=ReleaseShard.Status.PENDING, release__status=ReleaseStatus.BUILDING
    ).update(status=ReleaseShard.Status.RUNNING, worker=worker[:200])
    if not claimed:
        return "skipped"
    release = shard.release
    folder = Path(
        tempfile.mkdtemp(
            prefix=f"release-{release.version}-{shard.index}-", dir=publish.build_dir()
        )
    )
    try:
        written = write_release_files(
            release,
            folder,
            first_id=shard.first_id,
            last_id=shard.last_id,
            progress=lambda done: _touch(release),
        )
        files = []
        parts: dict[str, int] = defaultdict(int)
        for item in written:
            directory = item.path.rsplit("/", 1)[0]
            path = f"{directory}/part-{shard.index:05d}-{parts[directory]:05d}.parquet"
            parts[directory] += 1
            storage.upload(release.prefix, path, item.local)
            files.append({**publish.file_dict(item), "path": path, "local": ""})
        ReleaseShard.objects.filter(pk=shard.pk).update(
            status=ReleaseShard.Status.DONE, files=files
        )
        # The page's progress: the rows of every shard done so far.
        rows = sum(item.num_rows for item in written if item.config == "default")
        Release.objects.filter(pk=release.pk).update(
            heartbeat_at=timezone.now(), progress_done=F("progress_done") + rows
        )
        with transaction.atomic():
            locked = Release.objects.select_for_update().get(pk=release.pk)
            remaining = locked.shards.exclude(status=ReleaseShard.Status.DONE).exists()
            if remaining or locked.status != ReleaseStatus.BUILDING:
                return "done"
            all_files = [
                item
                for files_of in locked.shards.order_by("index").values_list("files", flat=True)
                for item in files_of
            ]
            # Parts sort by shard, then by their order within it: the rows stay in id order.
            all_files.sort(
                key=lambda item: (list(row_schema.CONFIGS).index(item["config"]), item["path"])
            )
            _name_parts(locked, all_files)
            publish.release_finish(locked, all_files, folder, progress=None)
        return "published"
    except Exception as exc:
        logger.exception("release %s shard %s failed", release.name, shard.index)
        publish.release_fail(release, f"shard {shard.index}: {type(exc).__name__}: {exc}")
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
