"""Ingest: parse an upload, and store each trajectory in it (cleaned, deduplicated against what
the same submitter shared before) in its own transaction.

A file with many trajectories stores each valid one and reports each invalid one, and nothing
of a failed one stays behind (files written to storage for it are removed again).
"""

from __future__ import annotations

import io
import itertools
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from django.db import DataError, transaction

from apps.trajectories.importers import FormatError, Limits, decode_upload, parse_document, stream
from apps.trajectories.importers.archive import is_zip
from apps.trajectories.importers.base import CanonicalEvent, CanonicalTrajectory, ImportItem
from apps.trajectories.models import (
    Event,
    Polarity,
    ReviewState,
    Trajectory,
    TrajectoryImage,
    Visibility,
)
from apps.trajectories.services import events, storage
from apps.trajectories.services.dedup import Match, continued_share, session_digest
from apps.trajectories.services.errors import InvalidShare, license_not_agreed
from apps.trajectories.services.events import NUL_REPLACEMENT, PreparedEvents, clip
from apps.trajectories.services.limits import (
    anonymous_share_check,
    email_share_check,
    ingest_limits,
    normalize_email,
)
from apps.trajectories.services.notify import announce_public_change, announce_stored
from apps.trajectories.services.outcomes import outcome_columns
from apps.trajectories.services.passwords import hash_deletion_password, new_deletion_password
from apps.trajectories.services.review import needs_rescan, note_published
from apps.trajectories.services.storage import RawCopy, WrittenFiles
from apps.trajectories.services.summary import event_summary_save

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)


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


def trajectory_ingest(
    *, data: bytes | IO[bytes], user: User | None, options: ShareOptions
) -> IngestResult:
    """Parse an upload and store every trajectory in it (each in its own transaction).

    `data` is the upload's bytes, or a file holding them (a request body read to a temporary
    file): an OpenHands share payload is then read from it as a stream, never whole.

    Raises FormatError when nothing in `data` is readable at all, InvalidShare for options that
    cannot be honoured, SharingRefused / RateLimited for anonymous callers over their limits.
    Per-trajectory problems come back in `errors`, located by line or index.
    """
    # Options first: a share that cannot be honoured counts against no limit.
    validate_options(options)
    anonymous = user is None or not user.is_authenticated
    if anonymous:
        user = None
        anonymous_share_check(options.client_ip)

    limits = ingest_limits()
    file = io.BytesIO(data) if isinstance(data, bytes) else data
    del data
    found = None
    if not is_zip(_head(file)):
        found = stream.scan(file, format=options.format, limits=limits)
    if found is not None:
        return _ingest_streamed(found, user=user, options=options, limits=limits)
    # Any other upload is read whole (JSON Lines are then read one record at a time).
    data = file.read()
    del file
    # A zip of one trajectory file gives that file's bytes: its records are cut from them.
    data, value, lines = decode_upload(data, limits)
    result = parse_document(value, format=options.format or None, limits=limits, lines=lines)
    # Each record's raw copy, cut where the importer read it; the parsed JSON goes with them.
    raw_copies = storage.raw_copies(data, value, result.items)
    del value

    outcome = IngestResult(stored=[], errors=[])
    email_checked = False
    for item, raw in zip(result.items, raw_copies, strict=True):
        if raw is None or item.trajectory is None:
            error = item.error or FormatError("no trajectory found", item.where)
            outcome.errors.append({"where": error.where or item.where, "message": error.message})
            continue
        email = normalize_email(options.email or item.trajectory.email) if user is None else ""
        if user is None and email and not email_checked:
            email_share_check(email)
            email_checked = True
        _ingest_item(item, raw, user=user, email=email, options=options, outcome=outcome)
    return outcome


def _head(file: IO[bytes]) -> bytes:
    head = file.read(4)
    file.seek(0)
    return head


def _ingest_streamed(
    found: stream.Scan, *, user: User | None, options: ShareOptions, limits: Limits
) -> IngestResult:
    """One share payload read as a stream: its events prepared (images stored, data
    serialised) as its items are parsed, its raw copy compressed as they go by; nothing is
    written to the database until the last one is read and checked."""
    raw = storage.ShareRawWriter(found.keys, found.envelope)
    canonical, events_in = stream.convert(found, limits=limits, on_item=raw.item)
    email = normalize_email(options.email or canonical.email) if user is None else ""
    if user is None and email:
        email_share_check(email)
    outcome = IngestResult(stored=[], errors=[])
    item = ImportItem(where="", trajectory=canonical)
    _ingest_item(
        item,
        raw.done,
        user=user,
        email=email,
        options=options,
        outcome=outcome,
        events_in=events_in,
    )
    return outcome


def _ingest_item(
    item: ImportItem,
    raw: RawCopy | Callable[[], RawCopy],
    *,
    user: User | None,
    email: str,
    options: ShareOptions,
    outcome: IngestResult,
    events_in: Iterable[CanonicalEvent] | None = None,
) -> None:
    """Store one trajectory of the upload; its warnings, or its error, go to `outcome`.
    `events_in`: its events as they are read (a stream), when not in the trajectory."""
    canonical = item.trajectory
    assert canonical is not None
    try:
        outcome.stored.append(
            _store_one(
                canonical=canonical,
                events_in=canonical.events if events_in is None else events_in,
                raw=raw,
                user=user,
                email=email,
                options=options,
                # Records of one upload are distinct entries, never updates of each other.
                exclude=[stored.trajectory.pk for stored in outcome.stored],
            )
        )
        # After the events: a stream's warnings are known once it is read.
        outcome.warnings.extend(
            {
                "where": f"{item.where}, {w['where']}" if item.where else w["where"],
                "message": w["message"],
            }
            for w in canonical.warnings
        )
    except FormatError as exc:
        outcome.errors.append({"where": exc.where or item.where, "message": exc.message})
    except DataError as exc:
        # A value the database refuses that the checks above did not catch: report it for
        # this trajectory rather than failing the whole upload. (Nothing of it was stored.)
        logger.warning("ingest: database refused a trajectory: %s", type(exc).__name__)
        outcome.errors.append(
            {"where": item.where, "message": "the database refused a value in this trajectory"}
        )


def validate_options(options: ShareOptions) -> None:
    """The one authority on share options (the API passes them on as sent, beyond their types):
    InvalidShare naming the field whose value cannot be honoured."""
    if options.visibility not in Visibility.values:
        raise InvalidShare(
            f"visibility must be one of {', '.join(Visibility.values)}", "visibility"
        )
    if options.polarity and options.polarity not in Polarity.values:
        raise InvalidShare(f"polarity must be one of {', '.join(Polarity.values)}", "polarity")
    if options.visibility == Visibility.PUBLIC and not options.license_agreed:
        raise license_not_agreed()
    if len(options.session_id) > 200:
        raise InvalidShare("session_id is longer than 200 characters", "session_id")
    if len(options.title) > 300:
        raise InvalidShare("title is longer than 300 characters", "title")


def _store_one(
    *,
    canonical: CanonicalTrajectory,
    events_in: Iterable[CanonicalEvent],
    raw: RawCopy | Callable[[], RawCopy],
    user: User | None,
    email: str,
    options: ShareOptions,
    exclude: list[int],
) -> StoredTrajectory:
    written = WrittenFiles()
    try:
        prepared = events.prepare(events_in, canonical.metadata, storage.image_writer(written))
        with transaction.atomic():
            stored = _store_in_transaction(
                canonical=canonical,
                prepared=prepared,
                # A stream's raw copy is complete once its events are read.
                raw=raw if isinstance(raw, RawCopy) else raw(),
                user=user,
                email=email,
                options=options,
                written=written,
                exclude=exclude,
            )
    except BaseException:
        written.cleanup()
        raise
    return stored


@dataclass
class _Share:
    """One trajectory of an upload on its way in: what was sent, and what it continues."""

    canonical: CanonicalTrajectory
    prepared: PreparedEvents
    raw: RawCopy
    user: User | None
    options: ShareOptions
    written: WrittenFiles
    match: Match
    fields: dict[str, Any]  # the columns the share sets, whichever row it lands in
    password: str | None  # anonymous: a new deletion password, shown once


def _store_in_transaction(
    *,
    canonical: CanonicalTrajectory,
    prepared: PreparedEvents,
    raw: RawCopy,
    user: User | None,
    email: str,
    options: ShareOptions,
    written: WrittenFiles,
    exclude: list[int],
) -> StoredTrajectory:
    session = _session(canonical, options, anonymous=user is None)
    share = _Share(
        canonical=canonical,
        prepared=prepared,
        raw=raw,
        user=user,
        options=options,
        written=written,
        match=continued_share(
            user=user, email=email, session=session, prepared=prepared, exclude=exclude
        ),
        fields=_shared_fields(canonical, prepared, options),
        password=new_deletion_password() if user is None else None,
    )
    if share.match.how == "contained":
        return _keep_contained(share)
    share.fields.update(
        num_events=len(prepared.events),
        num_bytes=raw.size,
        head_fingerprint=prepared.head,
        chain_fingerprint=prepared.chain[-1] if prepared.chain else "",
        raw_sha256=raw.sha256,
        client_session_id=session,
        **events.totals(canonical, prepared),
    )
    # The outcome the new file records; where it records none, the owner's word on the row it
    # continues stays (a re-share of the same run does not take it back).
    existing = share.match.existing
    share.fields.update(
        outcome_columns(
            metadata=prepared.metadata,
            source_format=share.fields["source_format"],
            owner_outcome=existing.owner_outcome if existing is not None else "",
        )
    )
    title = clip(options.title or canonical.title, 300)
    old_images: list[int] = []
    if share.match.existing is None:
        trajectory, first_new = _store_new(share, title, email), 0
    else:
        trajectory, first_new, old_images = _store_over(share, title)
    events.insert(trajectory, itertools.islice(prepared.events, first_new, None))
    # Counts by type and the timeline, made as the events were prepared: page views never
    # count them.
    event_summary_save(trajectory_id=trajectory.pk, summary=prepared.summary)
    storage.link_images(trajectory, prepared.images)
    # After the new links: an image the new events use too is no orphan.
    storage.delete_orphans(old_images)
    created = share.match.existing is None
    announce_stored(trajectory.pk, created=created)
    if not created:
        # A re-share goes back to pending (and may change visibility): it may leave public().
        # A new share is pending, outside public() until its scan says otherwise.
        announce_public_change([trajectory.pk])
    return StoredTrajectory(trajectory=trajectory, created=created, password=share.password)


def _session(canonical: CanonicalTrajectory, options: ShareOptions, *, anonymous: bool) -> str:
    """The digest of the session id that proves a re-share is the submitter's.

    Signed in, the account vouches for any session id, the file's own included. Anonymously
    only one the client sent counts: one an importer derives from the content (an evaluation
    row's instance id) is known to anyone who has the file.
    """
    if anonymous:
        return session_digest(options.session_id)
    return session_digest(options.session_id or canonical.session_id[:200])


def _shared_fields(
    canonical: CanonicalTrajectory, prepared: PreparedEvents, options: ShareOptions
) -> dict[str, Any]:
    """The columns a share sets from its options and its file (the options win)."""
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
        "source_format": clip(canonical.source_format, 40),
        "agent": clip(canonical.agent, 100),
        "model_name": clip(canonical.model, 200),
        "agent_version": clip(canonical.agent_version, 100),
        "metadata": prepared.metadata,
        "raw_filename": clip(options.filename, 255),
        "raw_content_type": clip(options.content_type, 100),
    }
    if agreed:
        fields["license"] = settings.TRAJHUB_LICENSE
    return fields


def _add_password(trajectory: Trajectory, password: str | None) -> None:
    if password:
        trajectory.deletion_password_hashes = [
            *trajectory.deletion_password_hashes,
            hash_deletion_password(password),
        ]


def _keep_contained(share: _Share) -> StoredTrajectory:
    """The stored trajectory already holds everything this share sends: keep the longer one,
    with the share's visibility, polarity, licence and feedback."""
    trajectory = share.match.existing
    assert trajectory is not None  # "contained" is only ever said of a row that exists
    fields = {k: v for k, v in share.fields.items() if k in ("visibility", "polarity", "license")}
    if share.options.feedback_text or share.canonical.feedback_text:
        fields["feedback_text"] = share.options.feedback_text or share.canonical.feedback_text
    if needs_rescan(trajectory, fields):
        fields["review_state"] = ReviewState.PENDING
    for name, value in fields.items():
        setattr(trajectory, name, value)
    _add_password(trajectory, share.password)
    trajectory.save()
    note_published(trajectory)
    announce_stored(trajectory.pk, created=False)
    announce_public_change([trajectory.pk])  # its visibility or review state may have moved
    return StoredTrajectory(trajectory=trajectory, created=False, password=share.password)


def _store_new(share: _Share, title: str, email: str) -> Trajectory:
    """A new row for a share that continues nothing (it may join the chain it extends)."""
    user = share.user
    trajectory = Trajectory(
        owner=user, contact_email=email if user is None else "", title=title, **share.fields
    )
    if share.match.chain_of is not None:
        trajectory.chain_key = _join_chain(share.match.chain_of)
    _add_password(trajectory, share.password)
    trajectory.raw_path = storage.write_raw(share.raw, trajectory.share_id, share.written)
    trajectory.save()
    return trajectory


def _store_over(share: _Share, title: str) -> tuple[Trajectory, int, list[int]]:
    """The stored trajectory a share continues, with the share's content: the events it extends
    kept, or all of them replaced. Returns it, the position of its first event to insert and
    the images its replaced events used (orphans, unless the new events use them too)."""
    trajectory = share.match.existing
    assert trajectory is not None
    old_raw = trajectory.raw_path
    for name, value in share.fields.items():
        setattr(trajectory, name, value)
    if share.options.title or not trajectory.title or share.user is None:
        # Anonymously, continuing a share proves only the email and its events (which a
        # public share shows anyone): keep nothing of the stored one they did not send (its
        # title may hold what the public page redacts, and their password would open it).
        trajectory.title = title
    if trajectory.review_state not in (ReviewState.REJECTED, ReviewState.HIDDEN):
        # New content has not been scanned: it waits for the scan like a new share.
        trajectory.review_state = ReviewState.PENDING
    _add_password(trajectory, share.password)
    # The old content's search text goes: the scan that follows builds the new one from the
    # redacted view (services/search.py); until then no search finds it.
    trajectory.search_text, trajectory.search_vector = "", None
    trajectory.raw_path = storage.write_raw(share.raw, trajectory.share_id, share.written)
    # New events and title: the redaction index waits for the scan that follows (or the
    # sweep); until then every surface reads the full map.
    trajectory.indexed_at = None
    trajectory.save()
    first_new, old_images = 0, []
    if share.match.how == "extends":
        # The stored events are a prefix of the new ones: only the rest needs writing.
        first_new = Event.objects.filter(trajectory=trajectory).count()
    else:
        Event.objects.filter(trajectory=trajectory).delete()
        old_images = list(
            TrajectoryImage.objects.filter(trajectory=trajectory).values_list("image_id", flat=True)
        )
        TrajectoryImage.objects.filter(trajectory=trajectory).delete()
    if old_raw and old_raw != trajectory.raw_path:
        storage.delete_on_commit(old_raw)
    return trajectory, first_new, old_images


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
