"""Events made ready to store, and stored: each event cleaned (NULs replaced, embedded images
moved out to storage, over-long fields clipped), serialised once and fingerprinted as a chain
(selectors/chains.py: dedup compares chains) in one pass; then inserted (one COPY on
PostgreSQL).

`prepare()` and `insert()` are the seams ingest and reimport use; `clip()` cuts the
trajectory's own header fields the same way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import pickle
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from django.db import connection

from apps.trajectories.event_rows import EVENT_FIELDS, EventRow
from apps.trajectories.importers.base import CanonicalEvent, CanonicalTrajectory
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.outcome import known_amount
from apps.trajectories.selectors.chains import chain_link, event_fingerprint
from apps.trajectories.services.summary import Summary, SummaryMaker

IMAGE_REF_PREFIX = "trajhub-image:"
# PostgreSQL refuses U+0000 in text and jsonb; U+2400 (SYMBOL FOR NULL) keeps it visible.
NUL_REPLACEMENT = "\u2400"
# Rows a bulk_create (SQLite) builds at once: Django holds their data as dicts, as JSON text
# and as query parameters together (100 rows of a 1 MB share peaked at 1.6 MB), so few.
EVENT_BATCH = 25

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF87a", "image/gif", "gif"),
    (b"GIF89a", "image/gif", "gif"),
    (b"BM", "image/bmp", "bmp"),
)
IMAGE_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/bmp": "bmp",
}
# Raster images only: SVG is markup (scripts) and stays inline, escaped like any other text.
_DATA_URL = re.compile(r"data:image/(?:png|jpe?g|gif|webp|bmp);base64,([A-Za-z0-9+/]+={0,2})")
_BASE64_KEYS = {"screenshot_data"}  # OpenHands V1: bare base64 without a data: prefix

# Where an image found in an event goes: (sha256, bytes, content type). storage.image_writer.
ImageStore = Callable[[str, bytes, str], None]


@dataclass
class PreparedEvent(EventRow):
    """An event ready to insert. Its `data` is None once prepared: `data_json` (sorted keys,
    also the input of the fingerprint) is what is written, and holding both would keep every
    event's data twice until the insert."""

    data_json: bytes
    fingerprint: bytes


# Prepared rows up to this stay in memory; beyond, they wait for the insert in a temporary file
# (small, under glibc's mmap threshold: see core/http.CHUNK).
EVENT_SPOOL_BYTES = 64 * 1024


class EventSpool:
    """Prepared events in the order made, written out as they come (pickled, to a temporary file
    once past EVENT_SPOOL_BYTES) and read back one at a time to insert: a trajectory's rows,
    their data and text, are never all held while dedup decides where they go (held, they took
    twice a 1 MB payload of text, and the 20 MB share's event data). Iterations may overlap."""

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=EVENT_SPOOL_BYTES)
        self.count = 0
        self.end = 0

    def append(self, row: PreparedEvent) -> None:
        record = pickle.dumps(
            (
                row.position,
                row.original_id,
                row.timestamp,
                row.source,
                row.kind,
                row.type,
                row.cause,
                row.text,
                row.data_json,
            ),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        self.file.seek(self.end)
        self.file.write(len(record).to_bytes(4, "little") + record)
        self.end = self.file.tell()
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[PreparedEvent]:
        offset = 0
        for _ in range(self.count):
            self.file.seek(offset)
            size = int.from_bytes(self.file.read(4), "little")
            # Our own file, written just above: nothing from outside is unpickled.
            position, original_id, timestamp, source, kind, type_, cause, text, data_json = (
                pickle.loads(self.file.read(size))  # noqa: S301
            )
            offset += 4 + size
            yield PreparedEvent(
                position=position,
                original_id=original_id,
                timestamp=timestamp,
                source=source,
                kind=kind,
                type=type_,
                cause=cause,
                text=text,
                data=None,
                data_json=data_json,
                fingerprint=b"",
            )

    def __getitem__(self, index: int) -> PreparedEvent:
        if not -self.count <= index < self.count:
            raise IndexError(index)
        return next(itertools.islice(iter(self), index % self.count, None))


@dataclass
class PreparedEvents:
    """A trajectory's events ready to insert, the images taken out of them, its cleaned
    metadata, the chain fingerprint after each event, and the summary of the events (counts,
    timeline, compare steps: made as they were prepared) with their first and last timestamp."""

    events: EventSpool
    images: dict[str, tuple[int, str]] = field(default_factory=dict)  # sha -> (size, type)
    metadata: dict[str, Any] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)  # chain fingerprint after each event
    summary: Summary = field(default_factory=Summary)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None

    @property
    def head(self) -> str:
        return self.chain[0] if self.chain else ""


def prepare(
    events: Iterable[CanonicalEvent], metadata: dict[str, Any], store_image: ImageStore
) -> PreparedEvents:
    """Clean every event (NULs, images out), serialise its data, fingerprint the chain.

    The canonical events are emptied as they are done, so the original strings (screenshots as
    data URLs) can be freed while the rest is prepared; `events` may be an iterator that makes
    each as it is read (a share payload read as a stream), and `metadata` is read once they are
    exhausted.
    """
    cleaner = _Cleaner(store_image)
    prepared = EventSpool()
    chain: list[str] = []
    summary = SummaryMaker()
    first: datetime | None = None
    last: datetime | None = None
    previous = b""
    for position, event in enumerate(events):
        row = _prepare_one(position, event, cleaner)
        previous = chain_link(previous, row.fingerprint)
        chain.append(previous.hex())
        summary.add(row)
        if row.timestamp is not None:
            first = row.timestamp if first is None else min(first, row.timestamp)
            last = row.timestamp if last is None else max(last, row.timestamp)
        row.data = None
        prepared.append(row)
        event.data, event.text = {}, ""
    clean_metadata = cleaner.value(metadata or {})
    return PreparedEvents(
        events=prepared,
        images=cleaner.images,
        chain=chain,
        metadata=clean_metadata,
        summary=summary.done(chain[-1] if chain else ""),
        first_timestamp=first,
        last_timestamp=last,
    )


def _prepare_one(position: int, event: CanonicalEvent, cleaner: _Cleaner) -> PreparedEvent:
    """One event, in one pass: its data cleaned only when its JSON shows something to clean,
    its text likewise, its fields clipped to their columns, and its fingerprint."""
    data = event.data if isinstance(event.data, dict) else {"value": event.data}
    dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    if b"\\u0000" in dumped or b"data:image/" in dumped or b"screenshot_data" in dumped:
        data = cleaner.value(data)
        dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    text = event.text or ""
    if "\x00" in text or "data:image/" in text:
        text = cleaner.text(text)
    return PreparedEvent(
        position=position,
        original_id=clip(event.original_id, 100),
        timestamp=_safe_timestamp(event.timestamp),
        source=clip(event.source, 12),
        kind=clip(event.kind, 12),
        type=clip(event.type, 60),
        cause=clip(event.cause, 100),
        text=text,
        data=data,
        # A copy of its exact size: orjson's output keeps a buffer of at least 4 KB, which
        # 50,000 events would hold for the whole ingest.
        data_json=memoryview(dumped).tobytes(),
        fingerprint=event_fingerprint(
            event.source, event.kind, event.type, event.original_id, dumped
        ),
    )


def totals(canonical: CanonicalTrajectory, prepared: PreparedEvents) -> dict[str, Any]:
    """The trajectory's columns derived from its events and metadata: first and last timestamp,
    tokens and cost (when the metadata holds known ones: a recorded 0 is unknown, so null, as
    outcome.known_amount says why)."""
    tokens = canonical.metadata.get("total_tokens")
    cost = canonical.metadata.get("total_cost")
    return {
        "started_at": prepared.first_timestamp,
        "ended_at": prepared.last_timestamp,
        "total_tokens": tokens if isinstance(tokens, int) and known_amount(tokens) else None,
        "total_cost": float(cost)
        if isinstance(cost, (int, float)) and known_amount(cost)
        else None,
    }


def insert(trajectory: Trajectory, events: Iterable[PreparedEvent]) -> None:
    """Insert prepared events of `trajectory`: one COPY on PostgreSQL, batches elsewhere."""
    if connection.vendor == "postgresql":
        _copy_events(trajectory.pk, events)
        return
    rows = iter(events)
    while batch := list(itertools.islice(rows, EVENT_BATCH)):
        Event.objects.bulk_create(
            [
                Event(
                    trajectory=trajectory,
                    position=event.position,
                    original_id=event.original_id,
                    timestamp=event.timestamp,
                    source=event.source,
                    kind=event.kind,
                    type=event.type,
                    cause=event.cause,
                    text=event.text,
                    data=orjson.loads(event.data_json),
                )
                for event in batch
            ]
        )


def _copy_events(trajectory_id: int, events: Iterable[PreparedEvent]) -> None:
    """One COPY for all rows: several times faster than INSERTs for big trajectories."""
    rows = iter(events)
    first = next(rows, None)
    if first is None:
        return
    table = connection.ops.quote_name(Event._meta.db_table)
    columns = ("trajectory_id", *EVENT_FIELDS)
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor:
        with cursor.cursor.copy(sql) as copy:
            for event in itertools.chain((first,), rows):
                copy.write_row(
                    (
                        trajectory_id,
                        event.position,
                        event.original_id,
                        event.timestamp,
                        event.source,
                        event.kind,
                        event.type,
                        event.cause,
                        event.text,
                        event.data_json.decode("utf-8"),
                    )
                )


def clip(value: Any, length: int) -> str:
    """`value` as text that fits a column of `length`, NULs replaced."""
    text = "" if value is None else str(value)
    text = text.replace("\x00", NUL_REPLACEMENT)
    return text[:length]


def _safe_timestamp(value: Any) -> datetime | None:
    """A timestamp the database and Python can both hold, else None (the event is kept)."""
    if not isinstance(value, datetime):
        return None
    try:
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return utc if 1 < utc.year < 9999 else None


# --- Cleaning: NULs and embedded images ---------------------------------------------------------


def _sniff(blob: bytes) -> str | None:
    for magic, content_type, _ in _IMAGE_MAGIC:
        if blob.startswith(magic):
            return content_type
    if blob[:4] == b"RIFF" and blob[8:12] == b"WEBP":
        return "image/webp"
    return None


def _complete(blob: bytes, content_type: str) -> bool:
    """Whether the image ends where its format says (a truncated one is kept as text)."""
    if content_type == "image/png":
        return blob.endswith(b"IEND\xaeB`\x82")
    if content_type == "image/jpeg":
        return b"\xff\xd9" in blob[-64:]
    if content_type == "image/gif":
        return blob.endswith(b";") or blob.rstrip(b"\x00").endswith(b";")
    if content_type == "image/webp":
        return len(blob) >= 12 and int.from_bytes(blob[4:8], "little") + 8 <= len(blob)
    if content_type == "image/bmp":
        return len(blob) >= 6 and int.from_bytes(blob[2:6], "little") <= len(blob)
    return False


class _Cleaner:
    """Replaces NULs and moves images out: each image goes to `store` as soon as it is found
    (so a payload with 50 screenshots never holds them all decoded), and is listed in `images`
    as sha256 -> (size, content type)."""

    def __init__(self, store: ImageStore) -> None:
        self.store = store
        self.images: dict[str, tuple[int, str]] = {}

    def _image_ref(self, payload: str) -> str | None:
        try:
            blob = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
        content_type = _sniff(blob)
        if content_type is None or not _complete(blob, content_type):
            return None  # not an image, or a truncated one: it stays text
        sha = hashlib.sha256(blob).hexdigest()
        if sha not in self.images:
            self.store(sha, blob, content_type)
            self.images[sha] = (len(blob), content_type)
        return IMAGE_REF_PREFIX + sha

    def text(self, value: str, key: str = "") -> str:
        if "\x00" in value:
            value = value.replace("\x00", NUL_REPLACEMENT)
        if key in _BASE64_KEYS and len(value) > 64 and "data:" not in value[:8]:
            ref = self._image_ref(value.strip())
            if ref:
                return ref
        if "data:image/" in value:
            value = _DATA_URL.sub(lambda m: self._image_ref(m.group(1)) or m.group(0), value)
        return value

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return self.text(value, key)
        if isinstance(value, dict):
            return {
                (k.replace("\x00", NUL_REPLACEMENT) if isinstance(k, str) else k): self.value(v, k)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, key) for item in value]
        return value
