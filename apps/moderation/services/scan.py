"""The scan that moves a trajectory out of `pending`: every string read and scanned
(findings.py), its placeholders numbered (placeholders.py), then its redactions, findings and
decision (decisions.scan_decide) written in one transaction.

The scan reads the trajectory outside any transaction (it may be large), then writes only if
the trajectory did not change meanwhile; if it did, the change sent its own `trajectory_stored`
and a new scan follows.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.moderation.models import IMAGE_PATH, Finding, FindingCategory
from apps.moderation.scanning import scanner as engine
from apps.moderation.services.decisions import hold_after_rescan, scan_decide
from apps.moderation.services.findings import (
    Located,
    dropped_images,
    find_in_trajectory,
    new_secrets,
    ocr_flagged_images,
    ocr_key,
    record_ocr,
    unchecked_images,
)
from apps.moderation.services.placeholders import (
    manual_placeholders,
    masked_preview,
    placeholders,
)
from apps.trajectories.models import ReviewState, Trajectory
from apps.trajectories.services import (
    announce_public_change,
    search_built,
    trajectory_redaction_index_refresh,
    trajectory_search_refresh,
)

logger = logging.getLogger(__name__)

# Fields compared before writing: if any changed while we scanned, the scan is stale.
_SNAPSHOT_FIELDS = (
    "updated_at",
    "num_events",
    "chain_fingerprint",
    "title",
    "feedback_text",
    "metadata",
)


@dataclass(frozen=True)
class ScanResult:
    """What one scan found and decided."""

    trajectory_id: int
    review_state: str  # the state after the scan
    counts: dict[str, int] = field(default_factory=dict)  # kind -> occurrences
    redactions: int = 0  # distinct originals with a placeholder
    stored_findings: int = 0  # Finding rows written (capped by TRAJHUB_SCAN_MAX_FINDINGS)
    changed: bool = False  # the scan moved the trajectory out of `pending`
    stale: bool = (
        False  # the trajectory changed (or vanished) while it was scanned: nothing written
    )

    @property
    def has_secrets(self) -> bool:
        return any(kind in engine.SECRET_KINDS for kind in self.counts)


def scanner_from_settings() -> engine.Scanner:
    return engine.Scanner(
        engine.Allowlist.build(settings.TRAJHUB_SCAN_ALLOWLIST),
        cache_dir=settings.TRAJHUB_SCAN_RULE_CACHE,
    )


@dataclass
class _Read:
    """What the scan read and found outside any transaction, and the rows it would write."""

    snapshot: dict[str, Any]
    previous_redactions: dict[str, str]
    previous_dropped: list[str]
    previous_unchecked: list[str]
    previous_flagged: list[str]
    version: str
    read: list[str]  # images OCR read
    found: list[Located]
    counts: dict[str, int]
    redactions: dict[str, str]
    rows: list[Finding]


def trajectory_scan(*, trajectory: Trajectory) -> ScanResult:
    """Scan every string of a trajectory, store its redactions and findings, and decide.

    A `pending` trajectory becomes `approved` (no findings, or only auto-redactable kinds such as
    email, phone and IP address: shown redacted) or `held` (any secret, or pre-moderation). A
    trajectory in another state keeps it; its redactions and findings are refreshed.
    """
    pk = trajectory.pk
    try:
        trajectory.refresh_from_db()
    except Trajectory.DoesNotExist:
        return ScanResult(trajectory_id=pk, review_state="", stale=True)
    scanned = _read(trajectory)
    written = _write(pk, scanned)
    if isinstance(written, ScanResult):
        return written
    changed, state = written
    trajectory.refresh_from_db(
        fields=[
            "review_state",
            "redactions",
            "dropped_images",
            "unchecked_images",
            "flagged_images",
            "published_at",
        ]
    )
    if (
        not search_built(trajectory)
        or trajectory.redactions != scanned.previous_redactions
        or trajectory.dropped_images != scanned.previous_dropped
        or trajectory.unchecked_images != scanned.previous_unchecked
        or trajectory.flagged_images != scanned.previous_flagged
    ):
        # The one build of the search text (ingest never writes it), from the redacted view:
        # search must never find a trajectory by what its redactions hide.
        trajectory_search_refresh(trajectory=trajectory)
    # After the search text: what pages, lists and find read instead of the whole map.
    trajectory_redaction_index_refresh(trajectory_id=pk)
    return ScanResult(
        trajectory_id=pk,
        review_state=state,
        counts=scanned.counts,
        redactions=len(scanned.redactions),
        stored_findings=len(scanned.rows),
        changed=changed,
    )


def _read(trajectory: Trajectory) -> _Read:
    """Read and scan the trajectory (no transaction: it may be large) and build what to write."""
    pk = trajectory.pk
    snapshot = {name: getattr(trajectory, name) for name in _SNAPSHOT_FIELDS}
    previous_redactions = dict(trajectory.redactions or {})
    previous_dropped = list(trajectory.dropped_images or [])
    previous_unchecked = list(trajectory.unchecked_images or [])
    previous_flagged = list(trajectory.flagged_images or [])
    scanner = scanner_from_settings()
    version = engine.version(settings.TRAJHUB_SCAN_RULE_CACHE)
    read: list[str] = []  # images OCR read
    found = find_in_trajectory(scanner, trajectory, read)
    counts = dict(Counter(located.detection.kind for located in found))
    redactions = placeholders(found, trajectory.redactions or {})
    redactions.update(manual_placeholders(pk, redactions, previous_redactions))
    limit = settings.TRAJHUB_SCAN_MAX_FINDINGS
    rows = [
        Finding(
            trajectory_id=pk,
            position=located.position,
            path=located.path[:300],
            start=located.detection.start,
            end=located.detection.end,
            kind=located.detection.kind,
            category=FindingCategory.SECRET
            if located.detection.kind in engine.SECRET_KINDS
            else FindingCategory.PERSONAL,
            placeholder=redactions[located.detection.shown],
            preview=masked_preview(located.detection.shown),
        )
        for located in found[:limit]
    ]
    return _Read(
        snapshot=snapshot,
        previous_redactions=previous_redactions,
        previous_dropped=previous_dropped,
        previous_unchecked=previous_unchecked,
        previous_flagged=previous_flagged,
        version=version,
        read=read,
        found=found,
        counts=counts,
        redactions=redactions,
        rows=rows,
    )


def _write(pk: int, scanned: _Read) -> tuple[bool, str] | ScanResult:
    """In one transaction, if the trajectory did not change while it was read: its findings,
    redactions and OCR state, and the scan's decision (decisions.scan_decide; a rescan that
    finds a new secret in an approved one holds it again). Returns (changed, state), or the
    stale result when it changed meanwhile (nothing written: the change queued its own scan)."""
    found, counts, redactions = scanned.found, scanned.counts, scanned.redactions
    with transaction.atomic():
        current = Trajectory.objects.select_for_update().filter(pk=pk).first()
        if current is None or any(
            getattr(current, name) != value for name, value in scanned.snapshot.items()
        ):
            # Changed while we read it: the change queued its own scan.
            logger.info("scan of trajectory %s is stale; a newer scan follows", pk)
            return ScanResult(
                trajectory_id=pk,
                review_state=current.review_state if current else "",
                counts=counts,
                stale=True,
            )
        Finding.objects.filter(trajectory_id=pk).delete()
        Finding.objects.bulk_create(scanned.rows, batch_size=500)
        record_ocr(scanned.read, found, ocr_key())
        dropped = dropped_images(pk)
        # After record_ocr: an image read now is checked (apps/trajectories/image_rule.py).
        unchecked = unchecked_images(pk)
        flagged = ocr_flagged_images(pk)
        changed = False
        state = current.review_state
        if state == ReviewState.PENDING:
            decided = scan_decide(
                current=current,
                fields={
                    "redactions": redactions,
                    **_index_stale(current, redactions),
                    "dropped_images": dropped,
                    "unchecked_images": unchecked,
                    "flagged_images": flagged,
                    "scan_version": scanned.version,
                },
                counts=counts,
                distinct=len({located.detection.shown for located in found}),
                in_images=any(located.path.startswith(IMAGE_PATH) for located in found),
            )
            if decided is not None:
                changed, state = True, decided
        if not changed:
            Trajectory.objects.filter(pk=pk).update(
                redactions=redactions,
                **_index_stale(current, redactions),
                dropped_images=dropped,
                unchecked_images=unchecked,
                flagged_images=flagged,
                scan_version=scanned.version,
                scanned_at=timezone.now(),
            )
            if state == ReviewState.APPROVED and new_secrets(found, scanned.previous_redactions):
                # A rescan (newer rules) found a secret the scan that approved it had not: it
                # stays redacted, and a moderator looks again.
                if hold_after_rescan(current, counts):
                    changed, state = True, ReviewState.HELD
        if (
            changed
            or redactions != scanned.previous_redactions
            or dropped != scanned.previous_dropped
            or unchecked != scanned.previous_unchecked
            or flagged != scanned.previous_flagged
        ):
            # Approved (enters public() if public), held, or shown with other placeholders.
            announce_public_change([pk])
    return changed, state


def _index_stale(current: Trajectory, redactions: dict[str, str]) -> dict[str, Any]:
    """Clear the redaction index in the statement that changes the map (against the map read
    under the row lock), so that no request reads entries older than the map. The database
    trigger of migration trajectories 0008 does the same for any writer; this keeps it so
    where the trigger is not installed (a database restored without it)."""
    return {"indexed_at": None} if redactions != (current.redactions or {}) else {}
