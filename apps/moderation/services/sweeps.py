"""The periodic scans: trajectories whose on-commit scan was lost, and public ones scanned by
older rules. Bounded and safe to run twice; the tasks (and `manage.py scan_pending`, `rescan`)
call these under their lock.
"""

from __future__ import annotations

from django.conf import settings

from apps.moderation.scanning import scanner as engine
from apps.moderation.selectors import trajectories_pending_scan, trajectories_rescan_due
from apps.moderation.services import scan
from apps.moderation.services.scan import ScanResult


def rescan_due_sweep(*, limit: int) -> list[ScanResult]:
    """Rescan up to `limit` public trajectories scanned by other rules than today's (an upgrade
    of the library or a change of the hand rules), newest first. Bounded and safe to run twice:
    each scan's write is conditional, and a rescanned trajectory is no longer due."""
    version = engine.version(settings.TRAJHUB_SCAN_RULE_CACHE)
    return [
        scan.trajectory_scan(trajectory=trajectory)
        for trajectory in trajectories_rescan_due(version=version, limit=limit)
    ]


def pending_scan_sweep(*, limit: int, older_than_seconds: float = 60) -> list[ScanResult]:
    """Scan up to `limit` trajectories still pending `older_than_seconds` after their last change
    (their on-commit scan was lost, e.g. a worker died). Safe to run concurrently: each scan's
    write is conditional."""
    results = []
    for trajectory in trajectories_pending_scan(older_than_seconds=older_than_seconds, limit=limit):
        results.append(scan.trajectory_scan(trajectory=trajectory))
    return results
