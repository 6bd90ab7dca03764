"""What the scan would redact in an upload, for the preview (trajectories/preview.py): before
the sharer stores anything they see each value the scan finds, its kind, where it stands and
the placeholder every public page would show instead.

The same scanner, allowlist and placeholders as the stored scan, over the importer's output;
OCR apart (reading screenshots takes seconds each: the stored scan does it). The value itself is
never echoed back whole, only masked as the admin shows it: the answer may pass through logs
and proxies on its way back.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from apps.moderation.scanning import scanner as engine
from apps.moderation.services.decisions import scan_decision
from apps.moderation.services.findings import Located, canonical_entries, find_in_entries
from apps.moderation.services.placeholders import masked_preview, placeholders
from apps.moderation.services.scan import scanner_from_settings
from apps.trajectories.importers.base import CanonicalTrajectory
from apps.trajectories.redaction import redactor

MAX_VALUES = 100
MAX_PLACES = 20


def preview_fields(trajectory: CanonicalTrajectory) -> dict[str, Any]:
    """The preview item's `redactions` and its `title` as the pages would show it (the title is
    often the first prompt, and the key pasted into it)."""
    report, mapping = _report(trajectory)
    return {"redactions": report, "title": redactor(mapping)(trajectory.title)}


def redaction_report(trajectory: CanonicalTrajectory) -> dict[str, Any]:
    return _report(trajectory)[0]


def _report(trajectory: CanonicalTrajectory) -> tuple[dict[str, Any], dict[str, str]]:
    """{"values": [{kind, placeholder, masked, secret, auto, count, places: [{event, path,
    start, end}]}], "total": n, "decision": "approved" | "held"}: one entry per distinct
    value, in order of first appearance; the decision the scan would take on it (held: a
    moderator looks before anyone else sees it). With the value -> placeholder map."""
    found = find_in_entries(scanner_from_settings(), canonical_entries(trajectory))
    mapping = placeholders(found, {})
    auto = set(settings.TRAJHUB_AUTO_REDACT_KINDS)
    values: dict[str, dict[str, Any]] = {}
    for located in found:
        detection = located.detection
        entry = values.get(detection.shown)
        if entry is None:
            entry = values[detection.shown] = {
                "kind": detection.kind,
                "placeholder": mapping.get(detection.shown, ""),
                "masked": masked_preview(detection.shown),
                "secret": detection.kind in engine.SECRET_KINDS,
                # Redacted and shown at once; any other kind holds the share for a moderator.
                "auto": detection.kind in auto,
                "count": 0,
                "places": [],
            }
        entry["count"] += 1
        if len(entry["places"]) < MAX_PLACES:
            entry["places"].append(_place(located))
    listed = list(values.values())
    counts: dict[str, int] = {}
    for entry in listed:
        counts[entry["kind"]] = counts.get(entry["kind"], 0) + entry["count"]
    report = {
        "values": listed[:MAX_VALUES],
        "total": len(listed),
        "decision": str(scan_decision(counts, len(listed))),
    }
    return report, mapping


def _place(located: Located) -> dict[str, Any]:
    return {
        "event": located.position,
        "path": located.path,
        "start": located.detection.start,
        "end": located.detection.end,
    }
