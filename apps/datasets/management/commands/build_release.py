"""manage.py build_release: what the schedule does, now, with a progress bar."""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.datasets import services


class Command(BaseCommand):
    help = (
        "Build, announce or publish whatever dataset release is due (the same service as the "
        "schedule) and say which. --now builds even if TRAJHUB_RELEASE_EVERY_DAYS have not passed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--now", action="store_true", help="build now, whatever the schedule says"
        )
        parser.add_argument(
            "--take-down-superseded",
            action="store_true",
            help="delete the files of every superseded release (their pages stay)",
        )

    def handle(self, *args, now: bool = False, take_down_superseded: bool = False, **options):
        if take_down_superseded:
            count = services.release_take_down_superseded()
            self.stdout.write(f"took down the files of {count} superseded releases")
            return
        bars: dict[str, tqdm] = {}
        # A terminal gets progress bars; a log (cron, CI, a pipe) gets a line per step at most
        # every few seconds, and the last one.
        interactive = self.stderr.isatty()
        said: dict[str, float] = {}

        def progress(step: str, done: int, total: int) -> None:
            unit = "trajectories" if step == "rows" else "files"
            if not interactive:
                now_ = time.monotonic()
                if done >= total or now_ - said.get(step, 0.0) >= 5.0:
                    said[step] = now_
                    self.stderr.write(f"{step}: {done}/{total} {unit}")
                return
            bar = bars.get(step)
            if bar is None:
                bar = bars[step] = tqdm(total=total, desc=step, unit=unit, file=sys.stderr)
            bar.update(done - bar.n)

        result = services.release_run(force=now, progress=progress)
        for bar in bars.values():
            bar.close()
        if result.action == "failed":
            raise CommandError(result.message)
        self.stdout.write(result.message)
