"""Re-run the importers over stored raw uploads, so that what a newer importer keeps (the final
patch of an evaluation row, whole; SWE-agent's info; tool schemas; image names) reaches
trajectories shared before it did.

The metadata the importer derives from the file is refreshed, and so are the events where the
importer now makes different ones of the same file (a tool call's arguments rendered as a
command, a screenshot kept, an event that used to be dropped): the events are replaced whole,
in one transaction with the trajectory row, the way a re-share of the same file would replace
them. New metadata and new event text are trajectory text a visitor may read (the Result card,
the page, the API, exports), and the scan has not seen them: a trajectory that was approved goes
back to pending and is scanned again, like a re-share, so the scan redacts the new text (and
a secret in a patch or an event never reaches a public page unredacted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from apps.trajectories.importers import FormatError, parse
from apps.trajectories.importers.base import CanonicalTrajectory
from apps.trajectories.models import Event, Image, ReviewState, Trajectory, TrajectoryImage
from apps.trajectories.services import events, storage
from apps.trajectories.services.events import PreparedEvents
from apps.trajectories.services.notify import announce_public_change, announce_stored
from apps.trajectories.services.outcomes import outcome_columns
from apps.trajectories.services.storage import WrittenFiles, raw_read
from apps.trajectories.services.summary import event_summary_save


@dataclass(frozen=True)
class ReimportOutcome:
    share_id: str
    # "updated" (metadata only) | "updated events" | "updated outcome" (its columns only)
    # | "unchanged" | "no raw upload" | "not importable: <why>"
    status: str


EVENT_COLUMNS = ("position", "original_id", "timestamp", "source", "kind", "type", "cause", "text")


def trajectory_reimport(*, trajectory: Trajectory) -> ReimportOutcome:
    """Refresh one trajectory's metadata and events from its raw upload (the module docstring)."""
    try:
        raw = raw_read(trajectory) if trajectory.raw_path else b""
    except OSError:
        raw = b""
    if not raw:
        return ReimportOutcome(trajectory.share_id, "no raw upload")
    try:
        result = parse(raw, format=trajectory.source_format or None)
    except FormatError as exc:
        return ReimportOutcome(trajectory.share_id, f"not importable: {exc}")
    if not result.trajectories:
        why = str(result.errors[0].error) if result.errors else "no trajectory in it"
        return ReimportOutcome(trajectory.share_id, f"not importable: {why}")
    canonical = result.trajectories[0]
    written = WrittenFiles()
    try:
        # As ingest does: images out of the events into storage (content-addressed, so those
        # stored before are found, not written again), data serialised, NULs replaced.
        prepared = events.prepare(canonical.events, canonical.metadata, _store_image(written))
        with transaction.atomic():
            status = _apply(trajectory.pk, canonical, prepared)
    except BaseException:
        written.cleanup()
        raise
    if status != "updated events":
        written.cleanup()  # nothing links what was written (files that rows use are kept)
    return ReimportOutcome(trajectory.share_id, status)


def _store_image(written: WrittenFiles) -> Callable[[str, bytes, str], None]:
    """Ingest's image writer, except for images a moderator dropped: the raw upload still holds
    their bytes, and re-importing must not put them back into storage."""
    store = storage.image_writer(written)

    def guarded(sha: str, blob: bytes, content_type: str) -> None:
        if Image.objects.filter(sha256=sha, dropped_at__isnull=False).exists():
            return
        store(sha, blob, content_type)

    return guarded


def _events_differ(trajectory_id: int, prepared: PreparedEvents) -> bool:
    """Whether the stored events are not exactly the ones the importer makes now."""
    stored = Event.objects.filter(trajectory_id=trajectory_id).order_by("position")
    count = 0
    for row, event in zip(
        stored.values_list(*EVENT_COLUMNS, "data").iterator(chunk_size=500),
        prepared.events,
        strict=False,
    ):
        count += 1
        if tuple(row[:-1]) != tuple(getattr(event, name) for name in EVENT_COLUMNS):
            return True
        # The database's JSON against the importer's, both with sorted keys.
        if orjson.dumps(row[-1], option=orjson.OPT_SORT_KEYS) != event.data_json:
            return True
    return count != len(prepared.events) or stored.count() != len(prepared.events)


def _apply(pk: int, canonical: CanonicalTrajectory, prepared: PreparedEvents) -> str:
    row = (
        Trajectory.objects.select_for_update()
        .filter(pk=pk)
        .only(
            "metadata",
            "review_state",
            "title",
            "redactions",
            "dropped_images",
            "share_id",
            "source_format",
            "owner_outcome",
            "outcome",
            "outcome_score",
            "outcome_source",
        )
        .first()
    )
    if row is None:
        return "no raw upload"  # deleted meanwhile
    metadata = {**(row.metadata if isinstance(row.metadata, dict) else {}), **prepared.metadata}
    events_changed = _events_differ(pk, prepared)
    # The outcome the importer reads now (the owner's word where the file records none).
    outcome = outcome_columns(
        metadata=metadata, source_format=row.source_format, owner_outcome=row.owner_outcome
    )
    if metadata == row.metadata and not events_changed:
        if outcome == {name: getattr(row, name) for name in outcome}:
            return "unchanged"
        # Only the columns were behind the metadata: no new text, nothing to scan again.
        Trajectory.objects.filter(pk=pk).update(**outcome)
        return "updated outcome"
    # New events and metadata: the redaction index is rebuilt by the scan that follows (or the
    # sweep); until then every surface reads the full map.
    fields: dict[str, Any] = {
        "metadata": metadata,
        **outcome,
        "updated_at": timezone.now(),
        "indexed_at": None,
    }
    if row.review_state == ReviewState.APPROVED:
        # Unscanned text: out of public() until the scan has seen it.
        fields["review_state"] = ReviewState.PENDING
    if events_changed:
        fields.update(
            num_events=len(prepared.events),
            head_fingerprint=prepared.head,
            chain_fingerprint=prepared.chain[-1] if prepared.chain else "",
            **events.totals(canonical, prepared),
            # Unscanned events: the scan that follows builds their search text from the
            # redacted view (services/search.py); until then no search finds them.
            search_text="",
            search_vector=None,
        )
    Trajectory.objects.filter(pk=pk).update(**fields)
    if events_changed:
        old_images = list(
            TrajectoryImage.objects.filter(trajectory_id=pk).values_list("image_id", flat=True)
        )
        Event.objects.filter(trajectory_id=pk).delete()
        TrajectoryImage.objects.filter(trajectory_id=pk).delete()
        events.insert(row, prepared.events)
        event_summary_save(trajectory_id=pk, summary=prepared.summary)
        storage.link_images(row, prepared.images)
        storage.delete_orphans(old_images)
    announce_stored(pk, created=False)
    announce_public_change([pk])
    return "updated events" if events_changed else "updated"
