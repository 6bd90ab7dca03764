"""manage.py synthesize [--limit N] [--trajectory ID] [--background] [--dry-run]"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.learn import services, tasks
from apps.learn.estimate import run_estimate
from apps.learn.llm import LLMNotConfigured
from apps.learn.models import SynthesisRun, Window, WindowState
from apps.learn.retrieval import index


class Command(BaseCommand):
    help = (
        "Backward construction over approved public trajectories, then the filters; prints kept "
        "/ dropped per filter. Run again, it writes no window twice and picks up what an "
        "interrupted run left."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, help="at most N trajectories (oldest first)")
        parser.add_argument("--trajectory", type=int, help="only this trajectory (database id)")
        parser.add_argument(
            "--background",
            action="store_true",
            help="queue the run for the Celery workers (one task per trajectory) and return",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="say how many LLM calls and prompt tokens the run would spend; spend nothing",
        )

    def handle(
        self, *args, limit=None, trajectory=None, background=False, dry_run=False, **options
    ):
        if dry_run:
            self.stdout.write(run_estimate(limit=limit, trajectory_id=trajectory).describe())
            return
        try:
            run = services.run_start(limit=limit, trajectory_id=trajectory)
        except LLMNotConfigured as error:
            raise CommandError(str(error)) from None
        if background:
            tasks.synthesis_run.delay(run.pk)
            self.stdout.write(f"run {run.pk} queued for {run.trajectories_total} trajectories")
            return
        ids = services.run_trajectory_ids(run, trajectory)
        self.stdout.write(f"run {run.pk}: {len(ids)} trajectories, model {run.model}")
        bar = tqdm(total=0, unit="window", desc="synthesis", disable=None)
        try:
            for trajectory_id in ids:
                pending = Window.objects.filter(trajectory_id=trajectory_id).exclude(
                    state__in=[WindowState.DONE, WindowState.FAILED]
                )
                before = pending.count()
                bar.total += before
                bar.refresh()
                services.trajectory_synthesize(
                    run=run, trajectory_id=trajectory_id, on_window=lambda: bar.update(1)
                )
                # Windows created just now were not counted before the call.
                bar.total = max(bar.total, bar.n)
                services.run_trajectory_finished(run, trajectory_id)
        except services.SynthesisAborted as error:
            services.run_fail(run_id=run.pk, error=str(error))
            raise CommandError(f"run {run.pk} stopped: {error}") from None
        except KeyboardInterrupt:
            services.run_fail(run_id=run.pk, error="interrupted")
            raise CommandError(
                f"run {run.pk} interrupted: run synthesize again to resume"
            ) from None
        finally:
            bar.close()
        services.run_synthesis_finished(run.pk)
        fbar = tqdm(unit="example", desc="filters", disable=None)
        try:
            stats = services.run_filter(run_id=run.pk, on_example=fbar.update)
        except services.SynthesisAborted as error:
            services.run_fail(run_id=run.pk, error=str(error))
            raise CommandError(f"run {run.pk} stopped: {error}") from None
        finally:
            fbar.close()
        index.index_build()
        run = SynthesisRun.objects.get(pk=run.pk)
        self.stdout.write(self.report(run, stats))

    @staticmethod
    def report(run: SynthesisRun, stats: dict) -> str:
        lines = [f"run {run.pk}: kept / dropped per filter"]
        lines.append(f"  repeats          {stats['repeats']['removed']} repeated steps removed")
        for name, counts in stats.items():
            if name in ("repeats", "total"):
                continue
            lines.append(f"  {name:<16} kept {counts['kept']:>6}  dropped {counts['dropped']:>6}")
        total = stats["total"]
        lines.append(
            f"  total            {total['candidates']} examples: kept {total['kept']}, dropped "
            f"{total['dropped']}, not judged {total['not_judged']}"
        )
        lines.append(
            f"LLM: {run.llm_calls} calls, {run.llm_retries} retries, {run.llm_failures} failures, "
            f"{run.prompt_tokens} prompt + {run.completion_tokens} completion tokens, "
            f"cost {run.cost:.4f}"
        )
        return "\n".join(lines)
