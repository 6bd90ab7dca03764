"""Release files in the "releases" storage (django-storages: files under var/ or S3): each
release under a versioned prefix of its own, written once, taken down only on purpose."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

logger = logging.getLogger(__name__)


def release_storage() -> Storage:
    return storages["releases"]


def release_prefix(version: int) -> str:
    return f"v{version}"


def upload(prefix: str, path: str, local: Path) -> None:
    storage = release_storage()
    name = f"{prefix}/{path}"
    if storage.exists(name):
        # Left by a failed attempt at this version: replace it, never rename it aside.
        storage.delete(name)
    with local.open("rb") as handle:
        saved = storage.save(name, File(handle, name=Path(path).name))
    if saved != name:
        raise RuntimeError(f"storage saved {name} as {saved}")


def rename(prefix: str, old: str, new: str) -> None:
    """Move one file of a release to its final name (a shard task's part, once the number of
    shards is known). On the filesystem a rename; on S3 a copy inside the bucket, then the
    delete (nothing passes through this machine); elsewhere a copy through it."""
    storage = release_storage()
    source, target = f"{prefix}/{old}", f"{prefix}/{new}"
    if isinstance(storage, FileSystemStorage):
        path = Path(storage.path(target))
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(storage.path(source), path)
        return
    bucket = getattr(storage, "bucket", None)
    normalize = getattr(storage, "_normalize_name", None)
    if bucket is not None and normalize is not None:  # django-storages' S3Storage
        # (Our names are clean already: forward slashes, no "..".)
        key = normalize(source)
        bucket.Object(normalize(target)).copy({"Bucket": bucket.name, "Key": key})
    else:
        if storage.exists(target):
            storage.delete(target)
        with storage.open(source, "rb") as handle:
            saved = storage.save(target, File(handle, name=Path(new).name))
        if saved != target:
            raise RuntimeError(f"storage saved {target} as {saved}")
    storage.delete(source)


def delete_prefix(prefix: str, paths: list[str] | None = None) -> None:
    """Delete what a release wrote (`paths`, or everything under the prefix). Quietly: a file
    that is already gone is no error."""
    storage = release_storage()
    names = [f"{prefix}/{path}" for path in paths] if paths is not None else _walk(storage, prefix)
    for name in names:
        try:
            storage.delete(name)
        except Exception:
            logger.warning("could not delete release file %s", name, exc_info=True)


def _walk(storage: Storage, prefix: str) -> list[str]:
    try:
        folders, files = storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = [f"{prefix}/{name}" for name in files]
    for folder in folders:
        names.extend(_walk(storage, f"{prefix}/{folder}"))
    return names


def is_local() -> bool:
    return isinstance(release_storage(), FileSystemStorage)


def open_file(prefix: str, path: str) -> File:
    return release_storage().open(f"{prefix}/{path}", "rb")


def signed_url(prefix: str, path: str) -> str:
    """A time-limited URL on S3 (querystring auth), for the download links."""
    storage = release_storage()
    return storage.url(f"{prefix}/{path}", expire=settings.TRAJHUB_RELEASE_URL_SECONDS)  # type: ignore[call-arg]
