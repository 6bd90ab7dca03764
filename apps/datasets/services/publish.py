"""Publishing a release whose Parquet files are written (in one process or by shard tasks):
upload what is not uploaded yet, the card, `dataset_info.json` and then the manifest, mark it
published, and supersede the older releases it leaves trajectories out of; and failing a build,
whose files are deleted."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.datasets.models import Release, ReleaseEntry, ReleaseFile, ReleaseStatus
from apps.datasets.parquet import WrittenFile, sha256_of
from apps.datasets.services import card as cards
from apps.datasets.services import storage
from apps.datasets.services.removals import release_mark_superseded

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (step, done, total)


class ReleaseError(RuntimeError):
    pass


def release_fail(release: Release, error: str) -> None:
    updated = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
        status=ReleaseStatus.FAILED, error=error[:2000]
    )
    if updated:
        logger.warning("release %s failed: %s", release.name, error)
        storage.delete_prefix(release.prefix or storage.release_prefix(release.version))


def build_dir() -> str:
    path = Path(settings.TRAJHUB_RELEASE_BUILD_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def file_dict(written: WrittenFile) -> dict:
    return {
        "config": written.config,
        "path": written.path,
        "size": written.size,
        "sha256": written.sha256,
        "num_rows": written.num_rows,
        "num_bytes": written.num_bytes,
        "local": str(written.local),
    }


def release_finish(
    release: Release, files: list[dict], folder: Path, *, progress: Progress | None
) -> None:
    """Upload what is not uploaded yet, write the card and then the manifest, and publish."""
    for number, item in enumerate(files, start=1):
        if item.get("local"):
            storage.upload(release.prefix, item["path"], Path(item["local"]))
        if progress is not None:
            progress("upload", number, len(files))
    written = [
        WrittenFile(
            config=item["config"],
            path=item["path"],
            local=Path(),
            size=item["size"],
            sha256=item["sha256"],
            num_rows=item["num_rows"],
            num_bytes=item.get("num_bytes", 0),
        )
        for item in files
    ]
    # The manifest lists what is on disk (the card has the Arrow sizes).
    public_files = [
        {k: v for k, v in item.items() if k not in ("local", "num_bytes")} for item in files
    ]
    published_at = timezone.now()
    release.published_at = published_at
    release.download_size = sum(item["size"] for item in public_files)
    previous = release.previous if release.previous_id else None
    cards.index_entries(release)
    card = cards.card_text(release, written, previous)
    readme = folder / "README.md"
    readme.write_text(card, encoding="utf-8")
    storage.upload(release.prefix, "README.md", readme)
    # LLaMA-Factory finds the synthesized examples' ShareGPT config by this entry.
    info = folder / "dataset_info.json"
    info.write_text(json.dumps(cards.llama_factory_info(), indent=2) + "\n", encoding="utf-8")
    storage.upload(release.prefix, "dataset_info.json", info)
    listed = [
        *public_files,
        _meta_file("README.md", readme),
        _meta_file("dataset_info.json", info),
    ]
    manifest = cards.manifest(release, listed, previous, published_at.isoformat())
    manifest_path = folder / "manifest.json"
    manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    # The manifest last: a reader that finds it finds every file it lists.
    storage.upload(release.prefix, "manifest.json", manifest_path)
    listed.append(_meta_file("manifest.json", manifest_path))
    with transaction.atomic():
        ReleaseFile.objects.filter(release=release).delete()
        ReleaseFile.objects.bulk_create(
            [
                ReleaseFile(
                    release=release,
                    config=item["config"],
                    path=item["path"],
                    size=item["size"],
                    sha256=item["sha256"],
                    num_rows=item["num_rows"],
                )
                for item in listed
            ]
        )
        published = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.PUBLISHED,
            published_at=published_at,
            card=card,
            download_size=release.download_size,
            progress_done=release.num_rows,
            progress_total=release.num_rows,
        )
        if not published:
            raise ReleaseError(f"{release.name} is no longer building; not published")
        # An announced release (a removal-only one was published during its window) is
        # published from this one: what it adds and removes is counted against the newest.
        Release.objects.filter(status=ReleaseStatus.ANNOUNCED, version__gt=release.version).update(
            previous=release
        )
    _supersede(release)


def _meta_file(path: str, local: Path) -> dict:
    return {
        "config": "",
        "path": path,
        "size": local.stat().st_size,
        "sha256": sha256_of(local),
        "num_rows": 0,
    }


def _supersede(newest: Release) -> None:
    """Older published releases holding a trajectory the newest left out (deleted, private,
    taken out since), or marked superseded already, are superseded by it; with
    TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED their files are deleted. The newest itself is checked
    too: a trajectory deleted while it was being written is in its files."""
    kept = ReleaseEntry.objects.filter(release=newest).values("share_id")
    older = Release.objects.filter(status=ReleaseStatus.PUBLISHED, version__lt=newest.version)
    now = timezone.now()
    for release in older:
        if (
            release.is_superseded
            or ReleaseEntry.objects.filter(release=release).exclude(share_id__in=kept).exists()
        ):
            Release.objects.filter(pk=release.pk).update(
                superseded_by=newest, superseded_at=release.superseded_at or now
            )
    release_mark_superseded(releases=[newest])
    if settings.TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED:
        release_take_down_superseded()


def release_take_down_superseded() -> int:
    """Delete the files of every superseded release (their rows, card and lists stay)."""
    count = 0
    for release in Release.objects.filter(
        status=ReleaseStatus.PUBLISHED, superseded_by__isnull=False, files_deleted=False
    ):
        storage.delete_prefix(release.prefix, list(release.files.values_list("path", flat=True)))
        Release.objects.filter(pk=release.pk).update(files_deleted=True)
        count += 1
    return count
