"""manage.py reimport: re-run the importers over stored raw uploads (services/reimport.py), so
that trajectories shared before an importer kept more (an evaluation row's whole final patch,
SWE-agent's info, tool calls rendered as commands) get it too, events included. Changed ones go
back through the scan."""

from __future__ import annotations

from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.trajectories.models import Trajectory
from apps.trajectories.services.reimport import trajectory_reimport


class Command(BaseCommand):
    help = (
        "Re-run the importers over stored raw uploads and refresh what they derive "
        "(metadata, and the events where the importer now makes different ones)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("share_ids", nargs="*", help="only these trajectories (default: all)")
        parser.add_argument(
            "--format", dest="source_format", default="", help="only trajectories of this format"
        )

    def handle(self, *args, share_ids: list[str], source_format: str, **options):
        queryset = Trajectory.objects.exclude(raw_path="").only(
            "id", "share_id", "raw_path", "source_format"
        )
        if share_ids:
            queryset = queryset.filter(share_id__in=share_ids)
            missing = set(share_ids) - set(queryset.values_list("share_id", flat=True))
            if missing:
                raise CommandError(
                    f"no trajectory with a raw upload and id {', '.join(sorted(missing))}"
                )
        if source_format:
            queryset = queryset.filter(source_format=source_format)
        queryset = queryset.order_by("id")
        total = queryset.count()
        outcomes: Counter[str] = Counter()
        progress = tqdm(
            queryset.iterator(chunk_size=100),
            total=total,
            unit="traj",
            file=self.stderr,
            disable=total == 0 or options["verbosity"] == 0,
        )
        for trajectory in progress:
            outcome = trajectory_reimport(trajectory=trajectory)
            kind = outcome.status.split(":", 1)[0]
            outcomes[kind] += 1
            if kind == "not importable" and options["verbosity"] > 1:
                self.stderr.write(f"{outcome.share_id}: {outcome.status}")
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(outcomes.items()))
        self.stdout.write(f"Re-imported {total} trajectories: {summary or 'nothing to do'}.")
