"""Ingest: parse an upload, and store each trajectory in it (cleaned, deduplicated against what
the same submitter shared before) in its own transaction.

A file with many trajectories stores each valid one and reports each invalid one, and nothing
of a failed one stays behind (files written to storage for it are removed again).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from django.conf import settings
from django.db import DataError, connection, transaction

from apps.trajectories.importers import (
    FormatError,
    decode_json,
    parse_document,
    split_lines,
)
from apps.trajectories.importers.base import CanonicalTrajectory
from apps.trajectories.models import (
    EVENT_FIELDS,
    Event,
    Polarity,
    ReviewState,
    Trajectory,
    TrajectoryImage,
    Visibility,
)
from apps.trajectories.services.changes import _needs_rescan, _note_published
from apps.trajectories.services.cleaning import NUL_REPLACEMENT, _clip
from apps.trajectories.services.dedup import (
    _advisory_lock,
    _find_continued,
    _Match,
    _scope,
    session_digest,
)
from apps.trajectories.services.errors import InvalidShare
from apps.trajectories.services.limits import (
    anonymous_share_check,
    email_share_check,
    ingest_limits,
    normalize_email,
)
from apps.trajectories.services.notify import _on_commit_stored, announce_public_change
from apps.trajectories.services.passwords import hash_deletion_password, new_deletion_password
from apps.trajectories.services.prepare import _prepare_events, _Prepared, _PreparedEvent
from apps.trajectories.services.search import _search_text, _update_search_vector
from apps.trajectories.services.storage import (
    _compress_raw,
    _delete_orphan_images,
    _delete_quietly,
    _image_writer,
    _is_share_envelope,
    _link_images,
    _RawCopy,
    _share_payload_chunks,
    _storage,
    _write_raw,
    _WrittenFiles,
)

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)
EVENT_BATCH = 1000


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
    # What stored trajectories left out (events that are not events): {"where", "message"}.
    warnings: list[dict] = field(default_factory=list)


def trajectory_ingest(*, data: bytes, user: User | None, options: ShareOptions) -> IngestResult:
    """Parse an upload and store every trajectory in it (each in its own transaction).

    Raises FormatError when nothing in `data` is readable at all, InvalidShare for options that
    cannot be honoured, SharingRefused / RateLimited for anonymous callers over their limits.
    Per-trajectory problems come back in `errors`, located by line or index.
    """
    anonymous = user is None or not user.is_authenticated
    if anonymous:
        user = None
        anonymous_share_check(options.client_ip)
    _validate_options(options)

    value, lines = _decode(data)
    result = parse_document(
        value, format=options.format or None, limits=ingest_limits(), lines=lines
    )

    text_lines: list[str] | None = None
    single = len(result.items) == 1 and not lines
    stored: list[StoredTrajectory] = []
    errors: list[dict] = []
    warnings: list[dict] = []
    email_checked = False
    for index, item in enumerate(result.items):
        if item.error is not None or item.trajectory is None:
            error = item.error or FormatError("no trajectory found", item.where)
            errors.append({"where": error.where or item.where, "message": error.message})
            continue
        canonical = item.trajectory
        # The raw copy of the record this trajectory came from, compressed at once: big uploads
        # should not hold the parsed JSON, a re-serialised copy and the compressed one together.
        raw: _RawCopy | None
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
            email_share_check(email)
            email_checked = True
        left_out = [
            {
                "where": f"{item.where}, {w['where']}" if item.where else w["where"],
                "message": w["message"],
            }
            for w in canonical.warnings
        ]
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
            warnings.extend(left_out)
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
    return IngestResult(stored=stored, errors=errors, warnings=warnings)


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
    # Signed in, the account vouches for any session id, the file's own included. Anonymously
    # only one the client sent counts: one an importer derives from the content (an evaluation
    # row's instance id) is known to anyone who has the file.
    if user is None:
        session = session_digest(options.session_id)
    else:
        session = session_digest(options.session_id or canonical.session_id[:200])
    match = _Match()
    if scope_qs is not None:
        _advisory_lock(f"{scope_key}|{session or prepared.head}")
        match = _find_continued(scope_qs, session, prepared, anonymous=user is None)
        if match.existing is not None:
            match.existing = (
                Trajectory.objects.select_for_update().filter(pk=match.existing.pk).first()
            )
            if match.existing is None:  # deleted meanwhile: this share starts afresh
                match.how = ""
    existing, how = match.existing, match.how

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
        assert existing is not None  # "contained" is only ever said of a row that exists
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
        _note_published(trajectory)
        _on_commit_stored(trajectory.pk, created=False)
        announce_public_change([trajectory.pk])  # its visibility or review state may have moved
        return StoredTrajectory(trajectory=trajectory, created=False, password=password)

    title = _clip(options.title or canonical.title, 300)
    fields.update(
        num_events=len(prepared.events),
        num_bytes=raw.size,
        head_fingerprint=prepared.head,
        chain_fingerprint=prepared.chain[-1] if prepared.chain else "",
        raw_sha256=raw.sha256,
        client_session_id=session,
        **_totals(canonical, prepared),
    )
    created = existing is None
    old_images: list[int] = []
    if existing is None:
        trajectory = Trajectory(
            owner=user, contact_email=email if user is None else "", title=title, **fields
        )
        if match.chain_of is not None:
            trajectory.chain_key = _join_chain(match.chain_of)
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
        if options.title or not trajectory.title or user is None:
            # Anonymously, continuing a share proves only the email and its events (which a
            # public share shows anyone): keep nothing of the stored one they did not send (its
            # title may hold what the public page redacts, and their password would open it).
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
        # New events and title: the redaction index waits for the scan that follows (or the
        # sweep); until then every surface reads the full map.
        trajectory.indexed_at = None
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
    if not created:
        # A re-share goes back to pending (and may change visibility): it may leave public().
        # A new share is pending, outside public() until its scan says otherwise.
        announce_public_change([trajectory.pk])
    return StoredTrajectory(trajectory=trajectory, created=created, password=password)


def _join_chain(earlier: Trajectory) -> str:
    """The chain a new share joins by extending `earlier`: the first member's share id, written
    on `earlier` too when it starts the chain now (lists then show only the longest)."""
    if earlier.chain_key:
        return earlier.chain_key
    Trajectory.objects.filter(pk=earlier.pk, chain_key="").update(chain_key=earlier.share_id)
    return (
        Trajectory.objects.filter(pk=earlier.pk).values_list("chain_key", flat=True).first()
        or earlier.share_id
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
    columns = ("trajectory_id", *EVENT_FIELDS)
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
