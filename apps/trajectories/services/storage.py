"""Files: raw copies of uploads (zstd), content-addressed images, reading them back, and
removing files nobody needs any more (a failed ingest's, a deleted trajectory's, and the sweep
of orphans that a killed process left behind)."""

from __future__ import annotations

import hashlib
import logging
import secrets
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson
import zstandard
from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.db.models import Exists, OuterRef

from apps.trajectories.importers.base import ImportItem
from apps.trajectories.models import Image, Trajectory, TrajectoryImage
from apps.trajectories.services.events import IMAGE_EXTENSIONS, ImageStore

logger = logging.getLogger(__name__)


def _storage() -> Storage:
    return storages["default"]


def _image_path(sha: str, content_type: str) -> str:
    return f"images/{sha[:2]}/{sha}.{IMAGE_EXTENSIONS.get(content_type, 'bin')}"


def raw_read(trajectory: Trajectory) -> bytes:
    """The raw upload as it was sent (decompressed)."""
    if not trajectory.raw_path:
        return b""
    with _storage().open(trajectory.raw_path, "rb") as handle:
        # A streamed frame records no content size: decompress incrementally, not one-shot.
        return zstandard.ZstdDecompressor().decompressobj().decompress(handle.read())


def image_read(image: Image) -> bytes:
    with _storage().open(image.path, "rb") as handle:
        return handle.read()


class WrittenFiles:
    """Files this ingest wrote: removed again if the transaction that needed them fails."""

    def __init__(self) -> None:
        self.raw: list[str] = []
        self.images: list[str] = []  # (path) of content-addressed files that did not exist

    def cleanup(self) -> None:
        storage = _storage()
        for path in self.raw:
            _delete_quietly(storage, path)
        # An image file may be shared with a concurrent ingest that committed: keep it if a row
        # refers to it now.
        _delete_unused_image_files(self.images)


def _delete_unused_image_files(paths: list[str]) -> None:
    """Delete the image files of `paths` that no Image row refers to (now)."""
    storage = _storage()
    kept = set(Image.objects.filter(path__in=paths).values_list("path", flat=True))
    for path in paths:
        if path not in kept:
            _delete_quietly(storage, path)


def _delete_quietly(storage: Storage, path: str) -> None:
    try:
        storage.delete(path)
    except Exception:  # storage hiccup: an orphan file is harmless, a 500 after commit is not
        logger.warning("could not delete %s from storage", path, exc_info=True)


def image_writer(written: WrittenFiles) -> ImageStore:
    """Where prepared events put their images: content-addressed files, each written once (and
    listed in `written`, to be removed again if the ingest fails)."""
    storage = _storage()

    def store(sha: str, blob: bytes, content_type: str) -> None:
        path = _image_path(sha, content_type)
        if storage.exists(path):
            return
        written.images.append(storage.save(path, ContentFile(blob)))

    return store


def delete_on_commit(path: str) -> None:
    """Delete a stored file (a raw copy a re-share or a deletion replaced) once the transaction
    commits; a storage hiccup leaves an orphan for the sweep, never an error."""
    transaction.on_commit(lambda: _delete_quietly(_storage(), path))


# A raw copy over this is spooled to a temporary file until it is stored: a 20 MB upload of
# screenshots compresses to little less, and would otherwise be held through the whole ingest.
# (Small, under glibc's mmap threshold: see core/http.CHUNK.)
RAW_SPOOL_BYTES = 64 * 1024


# One compressor a thread, kept: level 3's context (its window and match tables, ~3.6 MB) made
# afresh for each upload grew the process by ~2 MB on a 1 MB upload, alone twice its size (issue
# 24); kept, it is the process's own from the first upload on. A context serves one stream at a
# time (a new stream resets it, an abandoned one included): a writer opened while another of the
# thread's is still alive gets a fresh one.
_compressors = threading.local()


def _compressor(owner: object) -> zstandard.ZstdCompressor:
    current = getattr(_compressors, "owner", None)
    if current is not None and current() is not None:
        return zstandard.ZstdCompressor(level=3)
    compressor = getattr(_compressors, "compressor", None)
    if compressor is None:
        compressor = _compressors.compressor = zstandard.ZstdCompressor(level=3)
    _compressors.owner = weakref.ref(owner)
    return compressor


@dataclass
class RawCopy:
    """A raw upload, already compressed (in memory, or spooled to a temporary file when big):
    its size and hash are those of the original bytes."""

    compressed: IO[bytes]
    size: int
    sha256: str


def raw_copies(data: bytes, document: Any, items: list[ImportItem]) -> Iterator[RawCopy | None]:
    """The raw copy of each item's record (None for an item in error), cut where the importer
    read it: its line (JSON Lines), its element (an array of records), else the whole upload.
    A share payload is stored without its envelope's email and any token.

    Each copy is compressed at once and its record let go from `document`: big uploads should
    not hold the parsed JSON, a re-serialised copy and the compressed one together.
    """
    whole = len(items) == 1 and items[0].line is None
    for item in items:
        if item.error is not None or item.trajectory is None:
            yield None
            continue
        chunks: Iterable[bytes]
        if whole or item.index is None:
            record, document = document, None
            chunks = [data]
        elif item.line is not None:
            # JSON Lines (importers.JsonLines): the line's own bytes; parsed again only if it
            # may be a share envelope, whose email and token are never stored.
            line = document.raw(item.index)
            record = document[item.index][1] if _may_be_envelope(line) else None
            chunks = [line]
        else:
            record = document[item.index]
            document[item.index] = None
            chunks = [orjson.dumps(record)]
        if _is_share_envelope(record):
            chunks = _share_payload_chunks(record)
        del record
        yield _compress_raw(chunks)


def _compress_raw(chunks: Iterable[bytes]) -> RawCopy:
    writer = RawWriter()
    for chunk in chunks:
        writer.write(chunk)
    return writer.done()


class RawWriter:
    """A raw copy written piece by piece (compressed as it comes, spooled to a temporary file
    when big), with the size and hash of what was written."""

    def __init__(self) -> None:
        self.spool = tempfile.SpooledTemporaryFile(max_size=RAW_SPOOL_BYTES)
        self.digest = hashlib.sha256()
        self.size = 0
        self.writer = _compressor(self).stream_writer(self.spool, closefd=False)

    def write(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.size += len(chunk)
        self.writer.write(chunk)

    def done(self) -> RawCopy:
        self.writer.close()
        if getattr(_compressors, "owner", None) is not None and _compressors.owner() is self:
            _compressors.owner = None
        self.spool.seek(0)
        return RawCopy(compressed=self.spool, size=self.size, sha256=self.digest.hexdigest())


class ShareRawWriter(RawWriter):
    """The raw copy of a share payload read as a stream (importers.stream): the same bytes
    as _share_payload_chunks makes of the parsed payload, written as its items go by: the
    envelope's `keys` in order (without email and token), each item as it is parsed."""

    def __init__(self, keys: list[str], envelope: dict[str, Any]) -> None:
        super().__init__()
        self.after: list[str] = []
        self.envelope = envelope
        self.items = 0
        self.write(b"{")
        first = True
        for position, key in enumerate(keys):
            if key == "trajectory":
                self.write((b"" if first else b",") + orjson.dumps(key) + b":[")
                self.after = keys[position + 1 :]
                return
            if key not in ("email", "token"):
                self.write((b"" if first else b",") + _key_value(key, envelope[key]))
                first = False
        raise ValueError("a share payload without a trajectory")  # scan() never gives one

    def item(self, item: Any) -> None:
        self.write((b"," if self.items else b"") + _item_bytes(item))
        self.items += 1

    def done(self) -> RawCopy:
        self.write(b"]")
        for key in self.after:
            if key not in ("email", "token"):
                self.write(b"," + _key_value(key, self.envelope[key]))
        self.write(b"}")
        return super().done()


def _key_value(key: str, value: Any) -> bytes:
    return orjson.dumps(key) + b":" + orjson.dumps(value)


def _item_bytes(item: Any) -> bytes:
    if isinstance(item, dict) and "token" in item:
        item = {k: v for k, v in item.items() if k != "token"}
    return orjson.dumps(item)


def write_raw(raw: RawCopy, share_id: str, written: WrittenFiles) -> str:
    """Store a raw copy under the trajectory's share id; its path (listed in `written`)."""
    name = f"raw/{share_id[:2]}/{share_id}/{secrets.token_hex(8)}.zst"
    raw.compressed.seek(0)
    saved = _storage().save(name, File(raw.compressed))
    written.raw.append(saved)
    return saved


def _share_payload_chunks(record: dict) -> Iterator[bytes]:
    """A share payload as sent, without the envelope's email and any token (never stored).

    Serialised piece by piece (one trajectory item at a time), in the order it came, so a
    20 MB payload is never held twice.
    """
    yield b"{"
    first = True
    for key, value in record.items():
        if key in ("email", "token"):
            continue
        if key == "trajectory" and isinstance(value, list):
            yield (b"" if first else b",") + orjson.dumps(key) + b":["
            for position, item in enumerate(value):
                yield (b"," if position else b"") + _item_bytes(item)
            yield b"]"
        else:
            yield (b"" if first else b",") + _key_value(key, value)
        first = False
    yield b"}"


def _may_be_envelope(line: bytes) -> bool:
    """Whether a JSON line can be a share envelope with an email or token (a key may be
    written with escapes, so any line with one is parsed to see)."""
    if b"\\u" in line:
        return True
    return b"trajectory" in line and (b"email" in line or b"token" in line)


def _is_share_envelope(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and "trajectory" in record
        and ("email" in record or "token" in record)
    )


def link_images(trajectory: Trajectory, images: dict[str, tuple[int, str]]) -> None:
    """The Image rows of images prepared events wrote (sha -> (size, type)), linked to
    `trajectory` (rows that exist already are reused)."""
    if not images:
        return
    Image.objects.bulk_create(
        [
            Image(
                sha256=sha,
                content_type=content_type,
                size=size,
                path=_image_path(sha, content_type),
            )
            for sha, (size, content_type) in images.items()
        ],
        ignore_conflicts=True,
    )
    ids = Image.objects.filter(sha256__in=list(images)).values_list("id", flat=True)
    TrajectoryImage.objects.bulk_create(
        [TrajectoryImage(trajectory=trajectory, image_id=image_id) for image_id in ids],
        ignore_conflicts=True,
    )


def delete_orphans(image_ids: list[int]) -> None:
    """Of `image_ids`, delete those no trajectory refers to any more (rows now, files on commit)."""
    if not image_ids:
        return
    orphans = Image.objects.filter(pk__in=image_ids).filter(
        ~Exists(TrajectoryImage.objects.filter(image=OuterRef("pk")))
    )
    paths = list(orphans.values_list("path", flat=True))
    if not paths:
        return
    orphans.delete()
    # After the commit, a concurrent ingest may have stored the same image again: it keeps it.
    transaction.on_commit(lambda: _delete_unused_image_files(paths))


# --- The orphan sweep ---------------------------------------------------------------------------

# What ingest writes to the "default" storage, by prefix (the /healthz probe and releases live
# elsewhere and are never swept).
RAW_PREFIX = "raw/"
IMAGE_PREFIX = "images/"
_SWEEP_BATCH = 500


@dataclass(frozen=True)
class OrphanSweepResult:
    """What one sweep looked at and what it removed."""

    checked: int  # files older than the grace period
    deleted: list[str]  # their paths, in storage


def storage_orphan_sweep(*, older_than_seconds: float, limit: int) -> OrphanSweepResult:
    """Delete raw copies and image files that no row refers to, once `older_than_seconds` old.

    Ingest writes its files before the transaction that refers to them commits, and removes them
    when that transaction fails; a process killed in between (a gunicorn worker past its
    timeout, an out-of-memory kill) leaves them behind with no row. The grace period must exceed
    the longest ingest (GUNICORN_TIMEOUT), so that a file whose transaction is still running is
    never taken for an orphan. Deletes at most `limit` files; safe to run concurrently.
    """
    storage = _storage()
    cutoff = time.time() - older_than_seconds
    checked = 0
    deleted: list[str] = []
    for batch in _batches(_files_older_than(storage, cutoff), _SWEEP_BATCH):
        checked += len(batch)
        referenced = _referenced(batch)
        for path in batch:
            if path in referenced:
                continue
            _delete_quietly(storage, path)
            deleted.append(path)
            if len(deleted) >= limit:
                return OrphanSweepResult(checked=checked, deleted=deleted)
    return OrphanSweepResult(checked=checked, deleted=deleted)


def _referenced(paths: list[str]) -> set[str]:
    """Those of `paths` a row refers to, looked up by the indexed id each path is named after:
    raw/<2>/<share id>/<token>.zst and images/<2>/<sha256>.<ext>."""
    share_ids = {path.split("/")[2] for path in paths if path.startswith(RAW_PREFIX)}
    shas = {
        path.rsplit("/", 1)[-1].split(".", 1)[0] for path in paths if path.startswith(IMAGE_PREFIX)
    }
    referenced = set(
        Trajectory.objects.filter(share_id__in=share_ids)
        .exclude(raw_path="")
        .values_list("raw_path", flat=True)
    )
    referenced |= set(Image.objects.filter(sha256__in=shas).values_list("path", flat=True))
    return referenced


def _files_older_than(storage: Storage, cutoff: float) -> Iterator[str]:
    for prefix in (RAW_PREFIX, IMAGE_PREFIX):
        for path, modified in _walk(storage, prefix):
            if modified < cutoff and _is_swept_name(path):
                yield path


def _is_swept_name(path: str) -> bool:
    parts = path.split("/")
    if path.startswith(RAW_PREFIX):
        return len(parts) == 4 and parts[3].endswith(".zst")
    return len(parts) == 3


def _walk(storage: Storage, prefix: str) -> Iterator[tuple[str, float]]:
    """(path, modified as a Unix time) of every file under `prefix`.

    On S3 one flat listing (1,000 keys a request, with their times) instead of a request per
    folder; elsewhere the Storage API's listdir, folder by folder.
    """
    bucket = getattr(storage, "bucket", None)
    if bucket is not None:
        location = str(getattr(storage, "location", "") or "").strip("/")
        start = f"{location}/" if location else ""
        for item in bucket.objects.filter(Prefix=start + prefix):
            yield item.key[len(start) :], item.last_modified.timestamp()
        return
    pending = [prefix.rstrip("/")]
    while pending:
        folder = pending.pop()
        try:
            folders, files = storage.listdir(folder)
        except FileNotFoundError:
            continue
        pending.extend(f"{folder}/{name}" for name in folders)
        for name in files:
            path = f"{folder}/{name}"
            try:
                yield path, storage.get_modified_time(path).timestamp()
            except FileNotFoundError:  # deleted meanwhile
                continue


def _batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
