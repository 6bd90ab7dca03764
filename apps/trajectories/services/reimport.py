"""Re-run the importers over stored raw uploads, so that what a newer importer keeps (the final
patch of an evaluation row, whole; SWE-agent's info; tool schemas; image names) reaches
trajectories shared before it did.

Only the metadata the importer derives from the file is refreshed; the events stay as stored.
New metadata is trajectory text a visitor may read (the Result card, the API, exports), and the
scan has not seen it: a trajectory that was approved goes back to pending and is scanned again,
like a re-share, so a secret in a patch never reaches a public page unredacted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.trajectories.importers import FormatError, parse
from apps.trajectories.models import ReviewState, Trajectory
from apps.trajectories.services.notify import _on_commit_stored, announce_public_change
from apps.trajectories.services.storage import raw_read


@dataclass(frozen=True)
class ReimportOutcome:
    share_id: str
    status: str  # "updated" | "unchanged" | "no raw upload" | "not importable: <why>"


def trajectory_reimport(*, trajectory: Trajectory) -> ReimportOutcome:
    """Refresh one trajectory's metadata from its raw upload (see the module docstring)."""
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
    fresh = result.trajectories[0].metadata
    with transaction.atomic():
        row = (
            Trajectory.objects.select_for_update()
            .filter(pk=trajectory.pk)
            .only("metadata", "review_state")
            .first()
        )
        if row is None:
            return ReimportOutcome(trajectory.share_id, "no raw upload")  # deleted meanwhile
        metadata = {**(row.metadata if isinstance(row.metadata, dict) else {}), **fresh}
        if metadata == row.metadata:
            return ReimportOutcome(trajectory.share_id, "unchanged")
        fields = {"metadata": metadata, "updated_at": timezone.now()}
        if row.review_state == ReviewState.APPROVED:
            # Unscanned text: out of public() until the scan has seen it.
            fields["review_state"] = ReviewState.PENDING
        Trajectory.objects.filter(pk=row.pk).update(**fields)
        _on_commit_stored(row.pk, created=False)
        announce_public_change([row.pk])
    return ReimportOutcome(trajectory.share_id, "updated")
