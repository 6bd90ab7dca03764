"""Delete stored files no row refers to (the periodic orphan_sweep task does the same, bounded)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.trajectories.services import storage_orphan_sweep


class Command(BaseCommand):
    help = (
        "Delete raw copies and image files that no trajectory or image row refers to (left by "
        "an ingest whose process was killed), once older than the grace period."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--older-than",
            type=float,
            default=None,
            help="grace period in seconds (default TRAJHUB_ORPHAN_GRACE_SECONDS); must exceed "
            "the longest ingest, or a file still being committed is deleted",
        )
        parser.add_argument("--limit", type=int, default=1_000_000, help="delete at most this many")

    def handle(self, *args, older_than: float | None, limit: int, **options) -> None:
        grace = settings.TRAJHUB_ORPHAN_GRACE_SECONDS if older_than is None else older_than
        result = storage_orphan_sweep(older_than_seconds=grace, limit=limit)
        for path in result.deleted if options["verbosity"] > 1 else ():
            self.stdout.write(f"deleted {path}")
        self.stdout.write(
            f"checked {result.checked} files older than {grace:g} s; "
            f"deleted {len(result.deleted)} that nothing refers to"
        )
