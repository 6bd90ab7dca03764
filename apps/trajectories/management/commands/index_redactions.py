"""Index the redactions of trajectories whose index is not current (the periodic
redaction_index_sweep task does the same, a batch at a time)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.trajectories.services import redaction_index_sweep


class Command(BaseCommand):
    help = (
        "Store each trajectory's per-event redactions, redacted text and own redactions (what "
        "pages, lists and find read instead of the whole map), for those not indexed yet, "
        "public first, newest first."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=1_000_000, help="index at most this many")

    def handle(self, *args, limit: int, **options) -> None:
        done = redaction_index_sweep(limit=limit)
        self.stdout.write(f"indexed {done} trajectories")
