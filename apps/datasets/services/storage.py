"""Release files in the "releases" storage (django-storages: files under var/ or S3): each
release under a versioned prefix of its own, written once, taken down only on purpose."""

from __future__ import annotations

import logging
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
