"""Rescan public trajectories with today's rules, with a progress bar (the periodic rescan_sweep
task does the same in bounded batches, newest first)."""

from __future__ import annotations

from collections import Counter

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.moderation.scanning import scanner
from apps.moderation.selectors import trajectories_rescan_due
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory, Visibility


class Command(BaseCommand):
    help = "Rescan public trajectories scanned by older rules (or all of them, or the given ones)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=None, help="rescan at most this many")
        parser.add_argument(
            "--all", action="store_true", help="every public trajectory, whatever its version"
        )
        parser.add_argument("share_ids", nargs="*", help="rescan these trajectories")

    def handle(self, *args, share_ids: list[str], limit: int | None, all: bool, **options):
        version = scanner.version(settings.TRAJHUB_SCAN_RULE_CACHE)
        if share_ids:
            queryset = Trajectory.objects.filter(share_id__in=share_ids).order_by("-created_at")
            missing = set(share_ids) - set(queryset.values_list("share_id", flat=True))
            if missing:
                raise CommandError(f"no trajectory with id {', '.join(sorted(missing))}")
        elif all:
            queryset = Trajectory.objects.filter(visibility=Visibility.PUBLIC).order_by(
                "-created_at", "-id"
            )
        else:
            queryset = trajectories_rescan_due(version=version)
        if limit is not None:
            queryset = queryset[:limit]
        total = queryset.count()
        states: Counter[str] = Counter()
        for trajectory in tqdm(queryset.iterator(chunk_size=100), total=total, unit="traj"):
            states[trajectory_scan(trajectory=trajectory).review_state] += 1
        summary = ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "nothing due"
        self.stdout.write(f"rescanned {total} trajectories with {version}: {summary}")
