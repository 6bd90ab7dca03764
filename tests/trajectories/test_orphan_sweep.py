"""The orphan sweep: stored files no row refers to (what a killed ingest leaves) go after the grace
period; files a row refers to, and young files whose ingest may still be committing, stay.
The real kill (gunicorn workers killed in the middle of a 45 MB upload) is in
tests/infra/test_hostile_traffic.py."""

from __future__ import annotations

import os
import time

import pytest
from django.core.management import call_command

from apps.trajectories import tasks
from apps.trajectories.models import Image, Trajectory
from apps.trajectories.services import storage_orphan_sweep
from tests.infra.test_s3_storage import bucket, s3_endpoint  # noqa: F401 (fixtures)
from tests.ingest_helpers import data_url, ingest_one, png_bytes, storage_files, v0_events

pytestmark = pytest.mark.django_db

HOUR = 3600


def age(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def stored(private_storage):
    """A stored trajectory with an image, and the files a killed ingest left beside it."""
    events = v0_events(1)
    events[0]["args"]["image_urls"] = [data_url(png_bytes((1, 2, 3)))]
    trajectory = ingest_one(events)
    image = Image.objects.get()
    orphan_share = "ab" + "0" * 62
    orphans = {
        # A new share whose row never committed.
        f"raw/ab/{orphan_share}/0123456789abcdef.zst": b"zstd",
        # An earlier raw copy of the stored one that its failed re-share wrote.
        f"raw/{trajectory.share_id[:2]}/{trajectory.share_id}/feedfacefeedface.zst": b"zstd",
        # A screenshot of the share that never committed.
        f"images/cd/{'cd' * 32}.png": png_bytes((9, 9, 9)),
    }
    for path, content in orphans.items():
        (private_storage / path).parent.mkdir(parents=True, exist_ok=True)
        (private_storage / path).write_bytes(content)
    for path in storage_files(private_storage):
        age(private_storage / path, 2 * HOUR)
    kept = {trajectory.raw_path, image.path}
    assert set(storage_files(private_storage)) == kept | set(orphans)
    return private_storage, trajectory, kept, set(orphans)


def test_old_files_nothing_refers_to_are_deleted(stored):
    root, trajectory, kept, orphans = stored
    result = storage_orphan_sweep(older_than_seconds=HOUR, limit=100)
    assert sorted(result.deleted) == sorted(orphans) and result.checked == 5
    assert set(storage_files(root)) == kept
    # What stays is whole: the owner's download still reads the raw copy.
    trajectory.refresh_from_db()
    from apps.trajectories.services import raw_read

    assert raw_read(trajectory)


def test_young_files_are_left_for_their_ingest_to_commit(stored):
    root, _, kept, orphans = stored
    young = sorted(orphans)[0]
    age(root / young, 60)
    result = storage_orphan_sweep(older_than_seconds=HOUR, limit=100)
    assert young not in result.deleted
    assert set(storage_files(root)) == kept | {young}


def test_a_sweep_deletes_at_most_its_limit_and_the_next_one_goes_on(stored):
    root, _, kept, orphans = stored
    first = storage_orphan_sweep(older_than_seconds=HOUR, limit=2)
    assert len(first.deleted) == 2
    second = storage_orphan_sweep(older_than_seconds=HOUR, limit=2)
    assert len(second.deleted) == 1
    assert set(storage_files(root)) == kept


def test_the_task_and_the_command_run_the_same_sweep(stored, settings, capsys):
    root, _, kept, orphans = stored
    settings.TRAJHUB_ORPHAN_GRACE_SECONDS = HOUR
    settings.TRAJHUB_ORPHAN_SWEEP_BATCH = 1
    assert tasks.orphan_sweep() == 1
    call_command("sweep_orphan_files")
    assert "deleted 2 that nothing refers to" in capsys.readouterr().out
    assert set(storage_files(root)) == kept


def test_a_sweep_already_running_is_not_run_twice(stored):
    from django.core.cache import cache

    cache.add(tasks.ORPHAN_SWEEP_LOCK, "1", 60)
    assert tasks.orphan_sweep() == 0
    assert len(storage_files(stored[0])) == 5


def test_the_sweep_is_scheduled(settings):
    schedule = settings.CELERY_BEAT_SCHEDULE["orphan-sweep"]
    assert schedule["task"] == "apps.trajectories.tasks.orphan_sweep"
    assert settings.TRAJHUB_ORPHAN_GRACE_SECONDS > int(os.environ.get("GUNICORN_TIMEOUT", 120))


def test_on_s3_the_sweep_lists_the_bucket_flat(bucket, owner):  # noqa: F811
    from django.core.files.base import ContentFile
    from django.core.files.storage import storages

    trajectory = ingest_one(v0_events(1), user=owner)
    storage = storages["default"]
    orphan = f"raw/ef/{'ef' * 32}/0000000000000000.zst"
    storage.save(orphan, ContentFile(b"zstd"))
    time.sleep(1.1)  # S3 keeps second-resolution times that cannot be set back
    result = storage_orphan_sweep(older_than_seconds=1, limit=100)
    assert result.deleted == [orphan]
    assert f"private/{trajectory.raw_path}" in bucket()
    assert f"private/{orphan}" not in bucket()
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
