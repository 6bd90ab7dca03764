"""Every write to trajectories: ingest (parse, clean, store, dedup), update, delete, passwords.

Views, API views, commands and tasks call these; nothing else writes Trajectory, Event, Image.

Ingest stores each trajectory of an upload in its own transaction, so a file with many
trajectories stores each valid one and reports each invalid one, and nothing of a failed one
stays behind (files written to storage for it are removed again).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
import zstandard
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.core.validators import validate_email
from django.db import DataError, connection, transaction
from django.db.models import Exists, OuterRef

from apps.trajectories.importers import (
    FormatError,
    Limits,
    decode_json,
    parse_document,
    split_lines,
)
from apps.trajectories.importers.base import CanonicalEvent, CanonicalTrajectory
from apps.trajectories.models import (
    Event,
    Image,
    Polarity,
    ReviewState,
    Tombstone,
    Trajectory,
    TrajectoryImage,
    Visibility,
)
from apps.trajectories.redaction import redactor
from apps.trajectories.signals import trajectory_deleted, trajectory_stored

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)

IMAGE_REF_PREFIX = "trajhub-image:"
# PostgreSQL refuses U+0000 in text and jsonb; U+2400 (SYMBOL FOR NULL) keeps it visible.
NUL_REPLACEMENT = "\u2400"
# Enough for search to find a trajectory by what happens in it; to_tsvector's cost grows with it.
SEARCH_TEXT_CHARS = 100_000
EVENT_BATCH = 1000
ANON_EMAIL_PLACEHOLDERS = {"", "not_provided", "none", "null", "anonymous"}


# --- Errors ---------------------------------------------------------------------------------


class InvalidShare(FormatError):
    """Share options that cannot be honoured (a field's value). Reported like a format error."""


class SharingRefused(Exception):
    """The caller may not share right now (anonymous sharing off, rate limit)."""

    status_code = 403

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.message = message
        self.where = where


class RateLimited(SharingRefused):
    status_code = 429


# --- Data -----------------------------------------------------------------------------------


@dataclass
class ShareOptions:
    visibility: str = "private"
    polarity: str = ""
    feedback_text: str = ""
    session_id: str = ""
    title: str = ""
    license_agreed: bool = False
    email: str = ""
    format: str | None = None
    filename: str = ""
    content_type: str = ""
    client_ip: str = ""


@dataclass
class StoredTrajectory:
    trajectory: Trajectory
    created: bool
    password: str | None  # anonymous only, shown once


@dataclass
class IngestResult:
    stored: list[StoredTrajectory]
    errors: list[dict]  # {"where": "line 3", "message": "..."}


@dataclass
class _PreparedEvent:
    position: int
    original_id: str
    timestamp: Any
    source: str
    kind: str
    type: str
    cause: str
    text: str
    data: Any
    data_json: bytes  # sorted keys: also the input of the fingerprint
    fingerprint: bytes


@dataclass
class _Prepared:
    events: list[_PreparedEvent]
    images: dict[str, tuple[int, str]] = field(default_factory=dict)  # sha -> (size, type)
    metadata: dict[str, Any] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)  # chain fingerprint after each event

    @property
    def head(self) -> str:
        return self.chain[0] if self.chain else ""


# --- Limits and anonymous sharing -----------------------------------------------------------


def ingest_limits() -> Limits:
    return Limits(
        max_events=settings.TRAJHUB_MAX_EVENTS,
        max_field_bytes=settings.TRAJHUB_MAX_FIELD_BYTES,
        max_depth=settings.TRAJHUB_MAX_JSON_DEPTH,
    )


def _hashed(value: str) -> str:
    # Cache keys must not carry email addresses in clear (they may end up in Redis dumps).
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def _rate_limit_hit(scope: str, value: str) -> bool:
    """Count one anonymous share against `scope`; True when the hourly limit is exceeded."""
    limit = settings.TRAJHUB_ANON_SHARES_PER_HOUR
    key = f"trajhub:anon-share:{scope}:{_hashed(value)}"
    cache.add(key, 0, timeout=3600)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=3600)
        count = 1
    return count > limit


def _check_anonymous_allowed(client_ip: str) -> None:
    if not settings.TRAJHUB_ANONYMOUS_SHARING:
        raise SharingRefused(
            "anonymous sharing is turned off on this site: sign in or send an API token"
        )
    if client_ip and _rate_limit_hit("ip", client_ip):
        raise RateLimited(
            f"too many anonymous shares from this address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later or use an API token"
        )


def _check_email_rate(email: str) -> None:
    if email and _rate_limit_hit("email", email.lower()):
        raise RateLimited(
            f"too many anonymous shares for this email address (limit "
            f"{settings.TRAJHUB_ANON_SHARES_PER_HOUR} per hour); try again later"
        )


def normalize_email(value: str) -> str:
    """A usable contact address, or "" (OpenHands sends "" or "NOT_PROVIDED" when there is none)."""
    value = (value or "").strip() if isinstance(value, str) else ""
    if value.lower() in ANON_EMAIL_PLACEHOLDERS or len(value) > 254:
        return ""
    try:
        validate_email(value)
    except ValidationError:
        return ""
    return value


# --- Cleaning: NUL characters and embedded images -------------------------------------------

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF87a", "image/gif", "gif"),
    (b"GIF89a", "image/gif", "gif"),
    (b"BM", "image/bmp", "bmp"),
)
_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/bmp": "bmp",
}
# Raster images only: SVG is markup (scripts) and stays inline, escaped like any other text.
_DATA_URL = re.compile(r"data:image/(?:png|jpe?g|gif|webp|bmp);base64,([A-Za-z0-9+/]+={0,2})")
_BASE64_KEYS = {"screenshot_data"}  # OpenHands V1: bare base64 without a data: prefix


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


_ImageStore = Callable[[str, bytes, str], None]


class _Cleaner:
    """Replaces NULs and moves images out: each image goes to `store` as soon as it is found
    (so a payload with 50 screenshots never holds them all decoded), and is listed in `images`
    as sha256 -> (size, content type)."""

    def __init__(self, store: _ImageStore) -> None:
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


def _needs_cleaning(dumped: bytes) -> bool:
    return b"\\u0000" in dumped or b"data:image/" in dumped or b"screenshot_data" in dumped


def _clip(value: Any, length: int) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\x00", NUL_REPLACEMENT)
    return text[:length]


def _prepare_events(
    events: list[CanonicalEvent], metadata: dict[str, Any], store_image: _ImageStore
) -> _Prepared:
    """Clean every event (NULs, images out), serialise its data, fingerprint the chain.

    The canonical events are emptied as they are done, so the original strings (screenshots as
    data URLs) can be freed while the rest is prepared.
    """
    cleaner = _Cleaner(store_image)
    prepared: list[_PreparedEvent] = []
    chain: list[str] = []
    previous = b""
    for position, event in enumerate(events):
        data = event.data if isinstance(event.data, dict) else {"value": event.data}
        dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        if _needs_cleaning(dumped):
            data = cleaner.value(data)
            dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        text = event.text or ""
        if "\x00" in text or "data:image/" in text:
            text = cleaner.text(text)
        fingerprint = _event_fingerprint(
            event.source, event.kind, event.type, event.original_id, dumped
        )
        link = hashlib.sha256(previous + fingerprint).digest()
        chain.append(link.hex())
        previous = link
        prepared.append(
            _PreparedEvent(
                position=position,
                original_id=_clip(event.original_id, 100),
                timestamp=_safe_timestamp(event.timestamp),
                source=_clip(event.source, 12),
                kind=_clip(event.kind, 12),
                type=_clip(event.type, 60),
                cause=_clip(event.cause, 100),
                text=text,
                data=data,
                data_json=dumped,
                fingerprint=fingerprint,
            )
        )
        event.data, event.text = {}, ""
    clean_metadata = cleaner.value(metadata or {})
    return _Prepared(events=prepared, images=cleaner.images, chain=chain, metadata=clean_metadata)


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


def _event_fingerprint(
    source: str, kind: str, type_: str, original_id: str, dumped: bytes
) -> bytes:
    head = orjson.dumps([source, kind, type_, original_id])
    return hashlib.sha256(head + b"\n" + dumped).digest()


def _stored_chain(trajectory: Trajectory, count: int) -> list[str]:
    """Chain fingerprints of the first `count` stored events (to test "new is a prefix of it")."""
    chain: list[str] = []
    previous = b""
    rows = (
        Event.objects.filter(trajectory=trajectory, position__lt=count)
        .order_by("position")
        .values_list("source", "kind", "type", "original_id", "data")
    )
    for source, kind, type_, original_id, data in rows.iterator(chunk_size=500):
        dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        link = hashlib.sha256(
            previous + _event_fingerprint(source, kind, type_, original_id, dumped)
        )
        previous = link.digest()
        chain.append(link.hexdigest())
    return chain


# --- Storage ---------------------------------------------------------------------------------


def _storage():
    return storages["default"]


def _image_path(sha: str, content_type: str) -> str:
    return f"images/{sha[:2]}/{sha}.{_EXTENSIONS.get(content_type, 'bin')}"


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


class _WrittenFiles:
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
        kept = set(Image.objects.filter(path__in=self.images).values_list("path", flat=True))
        for path in self.images:
            if path not in kept:
                _delete_quietly(storage, path)


def _delete_quietly(storage, path: str) -> None:
    try:
        storage.delete(path)
    except Exception:  # storage hiccup: an orphan file is harmless, a 500 after commit is not
        logger.warning("could not delete %s from storage", path, exc_info=True)


def _image_writer(written: _WrittenFiles) -> _ImageStore:
    storage = _storage()

    def store(sha: str, blob: bytes, content_type: str) -> None:
        path = _image_path(sha, content_type)
        if storage.exists(path):
            return
        written.images.append(storage.save(path, ContentFile(blob)))

    return store


@dataclass
class _RawCopy:
    """A raw upload, already compressed: its size and hash are those of the original bytes."""

    compressed: bytes
    size: int
    sha256: str


def _compress_raw(chunks: Iterable[bytes]) -> _RawCopy:
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    digest = hashlib.sha256()
    size = 0
    parts: list[bytes] = []
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
        parts.append(compressor.compress(chunk))
    parts.append(compressor.flush())
    return _RawCopy(compressed=b"".join(parts), size=size, sha256=digest.hexdigest())


def _write_raw(raw: _RawCopy, share_id: str, written: _WrittenFiles) -> str:
    name = f"raw/{share_id[:2]}/{share_id}/{secrets.token_hex(8)}.zst"
    saved = _storage().save(name, ContentFile(raw.compressed))
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
        yield (b"" if first else b",") + orjson.dumps(key) + b":"
        first = False
        if key == "trajectory" and isinstance(value, list):
            yield b"["
            for position, item in enumerate(value):
                if isinstance(item, dict) and "token" in item:
                    item = {k: v for k, v in item.items() if k != "token"}
                yield (b"," if position else b"") + orjson.dumps(item)
            yield b"]"
        else:
            yield orjson.dumps(value)
    yield b"}"


def _is_share_envelope(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and "trajectory" in record
        and ("email" in record or "token" in record)
    )


# --- Ingest -----------------------------------------------------------------------------------


def trajectory_ingest(*, data: bytes, user: User | None, options: ShareOptions) -> IngestResult:
    """Parse an upload and store every trajectory in it (each in its own transaction).

    Raises FormatError when nothing in `data` is readable at all, InvalidShare for options that
    cannot be honoured, SharingRefused / RateLimited for anonymous callers over their limits.
    Per-trajectory problems come back in `errors`, located by line or index.
    """
    anonymous = user is None or not user.is_authenticated
    if anonymous:
        user = None
        _check_anonymous_allowed(options.client_ip)
    _validate_options(options)

    value, lines = _decode(data)
    result = parse_document(
        value, format=options.format or None, limits=ingest_limits(), lines=lines
    )

    text_lines: list[str] | None = None
    single = len(result.items) == 1 and not lines
    stored: list[StoredTrajectory] = []
    errors: list[dict] = []
    email_checked = False
    for index, item in enumerate(result.items):
        if item.error is not None or item.trajectory is None:
            error = item.error or FormatError("no trajectory found", item.where)
            errors.append({"where": error.where or item.where, "message": error.message})
            continue
        canonical = item.trajectory
        # The raw copy of the record this trajectory came from, compressed at once: big uploads
        # should not hold the parsed JSON, a re-serialised copy and the compressed one together.
        if lines:
            if text_lines is None:
                text_lines = split_lines(data.decode("utf-8").removeprefix("\ufeff"))
            number, record = value[index]
            value[index] = None
            raw = _compress_raw([text_lines[number - 1].encode("utf-8")])
        elif single:
            record, value = value, None
            raw = None if _is_share_envelope(record) else _compress_raw([data])
        else:
            record = value[index] if isinstance(value, list) and index < len(value) else value
            if isinstance(value, list) and index < len(value):
                value[index] = None
            raw = None if _is_share_envelope(record) else _compress_raw([orjson.dumps(record)])
        if raw is None or _is_share_envelope(record):
            raw = _compress_raw(_share_payload_chunks(record))
        del record

        email = normalize_email(options.email or canonical.email) if user is None else ""
        if user is None and email and not email_checked:
            _check_email_rate(email)
            email_checked = True
        try:
            stored.append(
                _store_one(
                    canonical=canonical,
                    raw=raw,
                    user=user,
                    email=email,
                    options=options,
                    # Records of one upload are distinct entries, never updates of each other.
                    exclude=[item.trajectory.pk for item in stored],
                )
            )
            del canonical, raw
        except FormatError as exc:
            errors.append({"where": exc.where or item.where, "message": exc.message})
        except DataError as exc:
            # A value the database refuses that the checks above did not catch: report it for
            # this trajectory rather than failing the whole upload. (Nothing of it was stored.)
            logger.warning("ingest: database refused a trajectory: %s", type(exc).__name__)
            errors.append(
                {"where": item.where, "message": "the database refused a value in this trajectory"}
            )
    return IngestResult(stored=stored, errors=errors)


def _decode(data: bytes) -> tuple[Any, bool]:
    """decode_json, with a fast path for the common case of one valid JSON document: orjson
    reads the bytes directly (validating UTF-8), so a 20 MB body is not also held as a str."""
    if not data.startswith(b"\xef\xbb\xbf"):
        try:
            return orjson.loads(data), False
        except orjson.JSONDecodeError:
            pass  # JSON Lines, or an error that decode_json reports precisely
    return decode_json(data)


def _validate_options(options: ShareOptions) -> None:
    if options.visibility not in Visibility.values:
        raise InvalidShare(
            f"visibility must be one of {', '.join(Visibility.values)}", "visibility"
        )
    if options.polarity and options.polarity not in Polarity.values:
        raise InvalidShare(f"polarity must be one of {', '.join(Polarity.values)}", "polarity")
    if options.visibility == Visibility.PUBLIC and not options.license_agreed:
        raise InvalidShare(
            f"a public trajectory must agree to the site's licence ({settings.TRAJHUB_LICENSE}): "
            "send license_agreed=true",
            "license_agreed",
        )
    if len(options.session_id) > 200:
        raise InvalidShare("session_id is longer than 200 characters", "session_id")
    if len(options.title) > 300:
        raise InvalidShare("title is longer than 300 characters", "title")


def _totals(canonical: CanonicalTrajectory, prepared: _Prepared) -> dict[str, Any]:
    stamps = [event.timestamp for event in prepared.events if event.timestamp is not None]
    tokens = canonical.metadata.get("total_tokens")
    cost = canonical.metadata.get("total_cost")
    return {
        "started_at": min(stamps) if stamps else None,
        "ended_at": max(stamps) if stamps else None,
        "total_tokens": tokens
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0
        else None,
        "total_cost": float(cost)
        if isinstance(cost, (int, float)) and not isinstance(cost, bool)
        else None,
    }


def _search_text(title: str, texts: Iterable[str], redactions: dict[str, str] | None) -> str:
    """Title and event texts, capped, with the trajectory's redactions applied: search must not
    find a trajectory by what its public pages hide (searching an email address would confirm
    that a trajectory contains it)."""
    parts = [title]
    size = len(title)
    for text in texts:
        if size >= SEARCH_TEXT_CHARS:
            break
        if text:
            parts.append(text[: SEARCH_TEXT_CHARS - size])
            size += len(parts[-1]) + 1
    return redactor(redactions)("\n".join(parts)[:SEARCH_TEXT_CHARS])


def _advisory_lock(key: str) -> None:
    """Serialise ingests of one submitter scope (PostgreSQL; SQLite serialises all writes)."""
    if connection.vendor != "postgresql":
        return
    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [number])


def _scope(user: User | None, email: str):
    if user is not None:
        return Trajectory.objects.filter(owner=user), f"owner:{user.pk}"
    if email:
        return (
            Trajectory.objects.filter(owner__isnull=True, contact_email__iexact=email),
            f"email:{email.lower()}",
        )
    return None, ""


def _find_same_session(
    scope_qs, session_id: str, prepared: _Prepared
) -> tuple[Trajectory | None, str]:
    """The stored trajectory this share continues, and how: "session", "extends", "contained"."""
    count = len(prepared.events)
    if session_id:
        match = scope_qs.filter(client_session_id=session_id).order_by("-updated_at").first()
        if match is None:
            return None, ""
        if 0 < match.num_events <= count and (
            prepared.chain[match.num_events - 1] == match.chain_fingerprint
        ):
            return match, "extends"  # a later step of the same session: append the rest
        return match, "session"
    candidates = list(
        scope_qs.filter(head_fingerprint=prepared.head)
        .order_by("-num_events", "-id")
        .only("id", "num_events", "chain_fingerprint")
    )
    for candidate in candidates:  # the longest stored prefix of the new events wins
        if 0 < candidate.num_events <= count and (
            prepared.chain[candidate.num_events - 1] == candidate.chain_fingerprint
        ):
            return candidate, "extends"
    for candidate in candidates:
        if candidate.num_events > count and _stored_chain(candidate, count) == prepared.chain:
            return candidate, "contained"
    return None, ""


def _store_one(
    *,
    canonical: CanonicalTrajectory,
    raw: _RawCopy,
    user: User | None,
    email: str,
    options: ShareOptions,
    exclude: list[int] | None = None,
) -> StoredTrajectory:
    written = _WrittenFiles()
    try:
        prepared = _prepare_events(canonical.events, canonical.metadata, _image_writer(written))
        with transaction.atomic():
            stored = _store_in_transaction(
                canonical=canonical,
                prepared=prepared,
                raw=raw,
                user=user,
                email=email,
                options=options,
                written=written,
                exclude=exclude or [],
            )
    except BaseException:
        written.cleanup()
        raise
    return stored


def _store_in_transaction(
    *,
    canonical: CanonicalTrajectory,
    prepared: _Prepared,
    raw: _RawCopy,
    user: User | None,
    email: str,
    options: ShareOptions,
    written: _WrittenFiles,
    exclude: list[int],
) -> StoredTrajectory:
    scope_qs, scope_key = _scope(user, email)
    if scope_qs is not None and exclude:
        scope_qs = scope_qs.exclude(pk__in=exclude)
    session_id = options.session_id or canonical.session_id[:200]
    existing, how = None, ""
    if scope_qs is not None:
        _advisory_lock(f"{scope_key}|{session_id or prepared.head}")
        existing, how = _find_same_session(scope_qs, session_id, prepared)
        if existing is not None:
            existing = Trajectory.objects.select_for_update().filter(pk=existing.pk).first()
            if existing is None:  # deleted meanwhile: this share starts afresh
                how = ""

    public = options.visibility == Visibility.PUBLIC or canonical.permissions == "public"
    agreed = options.license_agreed or canonical.permissions == "public"
    polarity = options.polarity or canonical.polarity or Polarity.NONE
    if polarity not in Polarity.values:
        polarity = Polarity.NONE
    fields: dict[str, Any] = {
        "visibility": Visibility.PUBLIC if public else Visibility.PRIVATE,
        "polarity": polarity,
        "feedback_text": (options.feedback_text or canonical.feedback_text).replace(
            "\x00", NUL_REPLACEMENT
        ),
        "source_format": _clip(canonical.source_format, 40),
        "agent": _clip(canonical.agent, 100),
        "model_name": _clip(canonical.model, 200),
        "agent_version": _clip(canonical.agent_version, 100),
        "metadata": prepared.metadata,
        "raw_filename": _clip(options.filename, 255),
        "raw_content_type": _clip(options.content_type, 100),
    }
    if agreed:
        fields["license"] = settings.TRAJHUB_LICENSE
    password = new_deletion_password() if user is None else None

    if how == "contained":
        # The stored trajectory already holds everything this share sends: keep the longer one.
        trajectory = existing
        fields = {k: v for k, v in fields.items() if k in ("visibility", "polarity", "license")}
        if options.feedback_text or canonical.feedback_text:
            fields["feedback_text"] = options.feedback_text or canonical.feedback_text
        if _needs_rescan(trajectory, fields):
            fields["review_state"] = ReviewState.PENDING
        for name, value in fields.items():
            setattr(trajectory, name, value)
        if password:
            trajectory.deletion_password_hashes = [
                *trajectory.deletion_password_hashes,
                hash_deletion_password(password),
            ]
        trajectory.save()
        _on_commit_stored(trajectory.pk, created=False)
        return StoredTrajectory(trajectory=trajectory, created=False, password=password)

    title = _clip(options.title or canonical.title, 300)
    fields.update(
        num_events=len(prepared.events),
        num_bytes=raw.size,
        head_fingerprint=prepared.head,
        chain_fingerprint=prepared.chain[-1] if prepared.chain else "",
        raw_sha256=raw.sha256,
        client_session_id=session_id,
        **_totals(canonical, prepared),
    )
    created = existing is None
    old_images: list[int] = []
    if created:
        trajectory = Trajectory(
            owner=user, contact_email=email if user is None else "", title=title, **fields
        )
        if password:
            trajectory.deletion_password_hashes = [hash_deletion_password(password)]
        trajectory.search_text = _search_text(title, (e.text for e in prepared.events), None)
        trajectory.raw_path = _write_raw(raw, trajectory.share_id, written)
        trajectory.save()
        first_new = 0
    else:
        trajectory = existing
        old_raw = trajectory.raw_path
        for name, value in fields.items():
            setattr(trajectory, name, value)
        if options.title:
            trajectory.title = title
        elif not trajectory.title:
            trajectory.title = title
        if trajectory.review_state not in (ReviewState.REJECTED, ReviewState.HIDDEN):
            # New content has not been scanned: it waits for the scan like a new share.
            trajectory.review_state = ReviewState.PENDING
        if password:
            trajectory.deletion_password_hashes = [
                *trajectory.deletion_password_hashes,
                hash_deletion_password(password),
            ]
        trajectory.search_text = _search_text(
            trajectory.title, (e.text for e in prepared.events), trajectory.redactions
        )
        trajectory.raw_path = _write_raw(raw, trajectory.share_id, written)
        trajectory.save()
        if how == "extends":
            # The stored events are a prefix of the new ones: only the rest needs writing.
            first_new = Event.objects.filter(trajectory=trajectory).count()
        else:
            Event.objects.filter(trajectory=trajectory).delete()
            old_images = list(
                TrajectoryImage.objects.filter(trajectory=trajectory).values_list(
                    "image_id", flat=True
                )
            )
            TrajectoryImage.objects.filter(trajectory=trajectory).delete()
            first_new = 0
        if old_raw and old_raw != trajectory.raw_path:
            transaction.on_commit(lambda: _delete_quietly(_storage(), old_raw))

    _insert_events(trajectory, prepared.events[first_new:])
    _link_images(trajectory, prepared.images)
    if old_images:
        _delete_orphan_images(old_images)
    _update_search_vector(trajectory)
    _on_commit_stored(trajectory.pk, created=created)
    return StoredTrajectory(trajectory=trajectory, created=created, password=password)


def _on_commit_stored(pk: int, *, created: bool) -> None:
    transaction.on_commit(
        lambda: _send_robust(trajectory_stored, trajectory_id=pk, created=created)
    )


def _send_robust(signal, **kwargs: Any) -> None:
    """Tell listeners, after the commit. A failing listener (say, a broker that is down when the
    scan is queued) must not turn a stored trajectory into an error answer: it is logged, and
    the periodic scan sweep picks the trajectory up."""
    for receiver, result in signal.send_robust(sender=Trajectory, **kwargs):
        if isinstance(result, Exception):
            logger.error(
                "a %s listener failed: %s",
                getattr(receiver, "__name__", receiver),
                result,
                exc_info=result,
            )


def _insert_events(trajectory: Trajectory, events: list[_PreparedEvent]) -> None:
    if not events:
        return
    if connection.vendor == "postgresql":
        _copy_events(trajectory.pk, events)
        return
    for start in range(0, len(events), EVENT_BATCH):
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
                    data=event.data,
                )
                for event in events[start : start + EVENT_BATCH]
            ]
        )


def _copy_events(trajectory_id: int, events: list[_PreparedEvent]) -> None:
    """One COPY for all rows: several times faster than INSERTs for big trajectories."""
    table = connection.ops.quote_name(Event._meta.db_table)
    columns = (
        "trajectory_id",
        "position",
        "original_id",
        "timestamp",
        "source",
        "kind",
        "type",
        "cause",
        "text",
        "data",
    )
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor:
        with cursor.cursor.copy(sql) as copy:
            for event in events:
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


def _link_images(trajectory: Trajectory, images: dict[str, tuple[int, str]]) -> None:
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


def _delete_orphan_images(image_ids: list[int]) -> None:
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

    def remove() -> None:
        storage = _storage()
        still_used = set(Image.objects.filter(path__in=paths).values_list("path", flat=True))
        for path in paths:
            if path not in still_used:
                _delete_quietly(storage, path)

    transaction.on_commit(remove)


def _update_search_vector(trajectory: Trajectory) -> None:
    """The PostgreSQL search vector: the (redacted) title weighted above the event text."""
    if connection.vendor != "postgresql":
        return
    from django.contrib.postgres.search import SearchVector
    from django.db.models import Value

    title = redactor(trajectory.redactions)(trajectory.title)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        search_vector=SearchVector(Value(title), weight="A", config="english")
        + SearchVector("search_text", weight="B", config="english")
    )


# --- Update, delete, passwords ------------------------------------------------------------------

UPDATABLE = ("visibility", "title", "polarity", "feedback_text", "license_agreed", "license")


@transaction.atomic
def trajectory_update(*, trajectory: Trajectory, **fields: Any) -> Trajectory:
    """Change what the owner may change: visibility, title, polarity, feedback text, licence.

    Making a trajectory public needs the site's licence agreed (now or before).
    """
    unknown = set(fields) - set(UPDATABLE)
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidShare(f"'{name}' cannot be changed", name)
    changed: list[str] = []
    agreed = bool(fields.pop("license_agreed", False)) or bool(fields.pop("license", False))
    if agreed and not trajectory.license:
        trajectory.license = settings.TRAJHUB_LICENSE
        changed.append("license")
    if "visibility" in fields:
        visibility = fields["visibility"]
        if visibility not in Visibility.values:
            raise InvalidShare(
                f"visibility must be one of {', '.join(Visibility.values)}", "visibility"
            )
        if visibility == Visibility.PUBLIC and not trajectory.license:
            raise InvalidShare(
                f"a public trajectory must agree to the site's licence "
                f"({settings.TRAJHUB_LICENSE}): send license_agreed=true",
                "license_agreed",
            )
        trajectory.visibility = visibility
        changed.append("visibility")
    if "polarity" in fields:
        polarity = fields["polarity"] or Polarity.NONE
        if polarity not in Polarity.values:
            raise InvalidShare(f"polarity must be one of {', '.join(Polarity.values)}", "polarity")
        trajectory.polarity = polarity
        changed.append("polarity")
    if "title" in fields:
        title = str(fields["title"] or "").replace("\x00", NUL_REPLACEMENT)
        if len(title) > 300:
            raise InvalidShare("title is longer than 300 characters", "title")
        trajectory.title = title
        changed.append("title")
    if "feedback_text" in fields:
        trajectory.feedback_text = str(fields["feedback_text"] or "").replace(
            "\x00", NUL_REPLACEMENT
        )
        changed.append("feedback_text")
    if changed:
        rescan = _needs_rescan(trajectory, {name: getattr(trajectory, name) for name in changed})
        if rescan:
            trajectory.review_state = ReviewState.PENDING
            changed.append("review_state")
        trajectory.save(update_fields=[*changed, "updated_at"])
        if "title" in changed:
            trajectory_search_refresh(trajectory=trajectory)
        if rescan:
            _on_commit_stored(trajectory.pk, created=False)
    return trajectory


def _needs_rescan(trajectory: Trajectory, fields: dict[str, Any]) -> bool:
    """Whether a change must go back through the scan before anyone else sees it.

    New text (title, feedback) has not been scanned; a trajectory made public under
    pre-moderation must be held. Rejected and hidden ones stay as the moderator left them.
    """
    if trajectory.review_state in (ReviewState.REJECTED, ReviewState.HIDDEN, ReviewState.PENDING):
        return False
    stored = Trajectory.objects.filter(pk=trajectory.pk).values(
        "title", "feedback_text", "visibility"
    ).first() or {}
    for name in ("title", "feedback_text"):
        if name in fields and fields[name] != stored.get(name):
            return True
    made_public = (
        fields.get("visibility") == Visibility.PUBLIC
        and stored.get("visibility") != Visibility.PUBLIC
    )
    return made_public and bool(settings.TRAJHUB_PREMODERATION)


@transaction.atomic
def trajectory_search_refresh(*, trajectory: Trajectory) -> Trajectory:
    """Rebuild search_text (and the PostgreSQL search vector) from the title and event texts
    with the trajectory's current redactions applied. Call it after changing `redactions`."""
    texts = (
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .values_list("text", flat=True)
        .iterator(chunk_size=500)
    )
    trajectory.search_text = _search_text(trajectory.title, texts, trajectory.redactions)
    Trajectory.objects.filter(pk=trajectory.pk).update(search_text=trajectory.search_text)
    _update_search_vector(trajectory)
    return trajectory


@transaction.atomic
def trajectory_delete(*, trajectory: Trajectory, reason: str = "owner") -> Tombstone:
    """Delete a trajectory with its events, raw upload and images nobody else uses; keep a tombstone."""
    share_id = trajectory.share_id
    was_public = trajectory.is_public
    raw_path = trajectory.raw_path
    tombstone, _ = Tombstone.objects.get_or_create(
        share_id=share_id, defaults={"was_public": was_public, "reason": reason[:40]}
    )
    image_ids = list(
        TrajectoryImage.objects.filter(trajectory=trajectory).values_list("image_id", flat=True)
    )
    Trajectory.objects.filter(pk=trajectory.pk).delete()
    _delete_orphan_images(image_ids)
    if raw_path:
        transaction.on_commit(lambda: _delete_quietly(_storage(), raw_path))
    transaction.on_commit(
        lambda: _send_robust(trajectory_deleted, share_id=share_id, was_public=was_public)
    )
    return tombstone


PASSWORD_SCHEME = "sha256"


def new_deletion_password() -> str:
    return secrets.token_urlsafe(18)


def hash_deletion_password(password: str, salt: str | None = None) -> str:
    """A salted SHA-256 of a deletion password.

    Deletion passwords are 144 random bits made by us, not chosen by people, so a slow hash
    would add nothing against guessing; it would only cost about half a second of CPU per share
    and per delete attempt (a denial-of-service lever). API tokens are hashed the same way.
    """
    salt = salt if salt is not None else secrets.token_hex(8)
    digest = hashlib.sha256(f"{salt}${password}".encode()).hexdigest()
    return f"{PASSWORD_SCHEME}${salt}${digest}"


def trajectory_check_password(*, trajectory: Trajectory, password: str) -> bool:
    """Whether `password` is one of the deletion passwords issued for this trajectory.

    Every issued hash is checked with a constant-time comparison and no early exit, so the
    answer's timing does not tell which one (or whether any) matched.
    """
    password = password if isinstance(password, str) else ""
    ok = False
    for encoded in trajectory.deletion_password_hashes or []:
        scheme, _, rest = str(encoded).partition("$")
        salt, _, digest = rest.partition("$")
        expected = hash_deletion_password(password, salt)
        ok |= scheme == PASSWORD_SCHEME and hmac.compare_digest(expected, str(encoded))
    return bool(password) and ok
