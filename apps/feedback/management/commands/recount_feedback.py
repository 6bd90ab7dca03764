"""Recount what lists and stats read of the feedback (corrections, first-wrong marks and their
deciles, kept on the trajectories) for every trajectory that has any. The services keep them
current; this is for counts made before they existed or after a change made outside them (a
row edited by hand)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.feedback.counts import all_counts_recount


class Command(BaseCommand):
    help = (
        "Recount each trajectory's shown corrections and current first-wrong marks (and where "
        "in the run they are) from its feedback rows."
    )

    def handle(self, *args, **options) -> None:
        changed = all_counts_recount()
        self.stdout.write(f"recounted: {changed} trajector{'y' if changed == 1 else 'ies'} changed")
