"""Scan pending trajectories now, with a progress bar (the periodic scan_sweep task does the same
in bounded batches)."""

from __future__ import annotations

from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.moderation.selectors import trajectories_pending_scan
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory


class Command(BaseCommand):
    help = "Scan pending trajectories (or the given ones, in any state) and decide their review."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=None, help="scan at most this many")
        parser.add_argument(
            "--older-than",
            type=float,
            default=0,
            help="only those unchanged for this many seconds (default 0: all pending)",
        )
        parser.add_argument(
            "share_ids",
            nargs="*",
            help="rescan these trajectories whatever their state (refreshes redactions/findings)",
        )

    def handle(self, *args, share_ids: list[str], limit: int | None, older_than: float, **options):
        if share_ids:
            queryset = Trajectory.objects.filter(share_id__in=share_ids).order_by("id")
            missing = set(share_ids) - set(queryset.values_list("share_id", flat=True))
            if missing:
                raise CommandError(f"no trajectory with id {', '.join(sorted(missing))}")
        else:
            queryset = trajectories_pending_scan(older_than_seconds=older_than, limit=limit)
        total = queryset.count()
        states: Counter[str] = Counter()
        stale = 0
        progress = tqdm(
            queryset.iterator(chunk_size=100),
            total=total,
            unit="traj",
            file=self.stderr,
            disable=total == 0 or options["verbosity"] == 0,
        )
        for trajectory in progress:
            result = trajectory_scan(trajectory=trajectory)
            if result.stale:
                stale += 1
            else:
                states[result.review_state] += 1
        summary = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
        self.stdout.write(
            f"scanned {total} trajectories"
            + (f": {summary}" if summary else "")
            + (f"; {stale} changed while scanned (rescanned by their own task)" if stale else "")
        )
