"""Every write of Learn-by-interact: runs, windows, examples, filter verdicts, derived-data removal.

Resumable by construction: a window is a row (unique per trajectory and bounds), taken with a
conditional update (pending -> claimed, or a claim older than TRAJHUB_SYNTH_CLAIM_SECONDS, whose
worker died), and an example is a row unique per (window, prompt type). A run started again asks
the LLM only for what has no row yet: no window is written twice and none is lost.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.core.locks import Lease
from apps.feedback.consensus import readers_verdicts
from apps.learn import prompts, quality
from apps.learn.guard import SynthesisAborted, UnreadableGuard
from apps.learn.llm import Answer, LLMConfig, LLMError, LLMNotConfigured, Usage, chat
from apps.learn.models import (
    Example,
    ExampleState,
    RunState,
    SynthesisRun,
    Window,
    WindowState,
)
from apps.learn.selectors import public_events, trajectories_to_synthesize
from apps.learn.windows import (
    Step,
    actions_in,
    build_steps,
    choose_windows,
    drop_repeats,
    window_steps,
)
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.redactions import map_digest

logger = logging.getLogger(__name__)
# Failures that no retry or later run fixes: the endpoint refuses us (key, model, URL).
FATAL_STATUS = {401, 403, 404}


def llm_config() -> LLMConfig:
    return LLMConfig(
        base_url=settings.TRAJHUB_LLM_BASE_URL,
        api_key=settings.TRAJHUB_LLM_API_KEY,
        model=settings.TRAJHUB_LLM_MODEL,
        judge_models=list(settings.TRAJHUB_LLM_JUDGE_MODELS or [])
        or ([settings.TRAJHUB_LLM_MODEL] if settings.TRAJHUB_LLM_MODEL else []),
        concurrency=max(1, settings.TRAJHUB_LLM_CONCURRENCY),
        timeout=settings.TRAJHUB_LLM_TIMEOUT,
        max_retries=settings.TRAJHUB_LLM_MAX_RETRIES,
        backoff=settings.TRAJHUB_LLM_BACKOFF,
        price_input=settings.TRAJHUB_LLM_PRICE_INPUT,
        price_output=settings.TRAJHUB_LLM_PRICE_OUTPUT,
    )


@contextmanager
def llm_slot(config: LLMConfig) -> Iterator[None]:
    """One of TRAJHUB_LLM_CONCURRENCY slots per endpoint, shared by every worker process through
    the cache (Redis in production). A slot is a short lease (TRAJHUB_LLM_SLOT_SECONDS) that a
    thread of its holder renews while the call runs: a holder that is killed (SIGKILL, OOM)
    frees its slot within that lease, instead of after a whole call's timeout and retries
    (2.5 minutes by default) during which every other worker waited on fewer slots."""
    endpoint = hashlib.sha256(config.base_url.encode()).hexdigest()[:16]
    while True:
        for slot in range(config.concurrency):
            lease = Lease(f"learn:llm-slot:{endpoint}:{slot}", settings.TRAJHUB_LLM_SLOT_SECONDS)
            if lease.acquire():
                try:
                    yield
                finally:
                    lease.release()
                return
        time.sleep(0.02)


def llm_call(config: LLMConfig, messages: list[dict], model: str | None = None) -> Answer:
    with llm_slot(config):
        return chat(config, messages, model=model)


def _account(run_id: int, usage: Usage, *, failed: int = 0) -> None:
    SynthesisRun.objects.filter(pk=run_id).update(
        llm_calls=F("llm_calls") + usage.calls,
        llm_retries=F("llm_retries") + usage.retries,
        llm_failures=F("llm_failures") + failed,
        prompt_tokens=F("prompt_tokens") + usage.prompt_tokens,
        completion_tokens=F("completion_tokens") + usage.completion_tokens,
        cost=F("cost") + usage.cost,
    )


def run_start(*, limit: int | None = None, trajectory_id: int | None = None) -> SynthesisRun:
    """A new run over approved public trajectories. Raises LLMNotConfigured without an endpoint."""
    config = llm_config()
    if not config.configured:
        raise LLMNotConfigured()
    total = trajectories_to_synthesize(limit=limit, trajectory_id=trajectory_id).count()
    return SynthesisRun.objects.create(
        model=config.model,
        judge_models=config.judge_models,
        prompt_version=prompts.VERSION,
        limit=limit,
        trajectories_total=total,
    )


def run_trajectory_ids(run: SynthesisRun, trajectory_id: int | None = None) -> list[int]:
    return list(
        trajectories_to_synthesize(limit=run.limit, trajectory_id=trajectory_id).values_list(
            "pk", flat=True
        )
    )


def windows_create(*, run: SynthesisRun, trajectory: Trajectory) -> int:
    """The chosen windows of one trajectory as rows (those that exist already are left alone).
    Returns how many windows the trajectory has now."""
    steps, repeats = drop_repeats(
        build_steps(public_events(trajectory), limit=settings.TRAJHUB_SYNTH_OBSERVATION_CHARS)
    )
    chosen = choose_windows(
        actions_in(steps),
        cap=settings.TRAJHUB_SYNTH_MAX_WINDOWS,
        short_max=settings.TRAJHUB_SYNTH_SHORT_STEPS,
        short_share=settings.TRAJHUB_SYNTH_SHORT_SHARE,
        seed=trajectory.share_id,
    )
    digest = map_digest(trajectory.redactions)
    rows = []
    for i, j in chosen:
        part = window_steps(steps, i, j)
        removed = sum(step.repeats for step in part) if repeats else 0
        rows.append(
            Window(
                trajectory=trajectory,
                run=run,
                start_step=i,
                end_step=j,
                start_position=part[0].first,
                end_position=part[-1].last,
                num_actions=j - i,
                steps=[step.as_dict() for step in part],
                redactions_hash=digest,
                repeats_removed=removed,
            )
        )
    Window.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return Window.objects.filter(trajectory=trajectory).count()


def window_claim(window_id: int) -> bool:
    """Take a window to write: pending, or claimed by a worker that has been gone too long."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.TRAJHUB_SYNTH_CLAIM_SECONDS)
    return (
        Window.objects.filter(pk=window_id)
        .filter(Q(state=WindowState.PENDING) | Q(state=WindowState.CLAIMED, claimed_at__lt=stale))
        .update(state=WindowState.CLAIMED, claimed_at=now, attempts=F("attempts") + 1)
        == 1
    )


def _release(window_ids: list[int]) -> None:
    if window_ids:
        Window.objects.filter(pk__in=window_ids, state=WindowState.CLAIMED).update(
            state=WindowState.PENDING, claimed_at=None
        )


def _steps_of(window: Window) -> list[Step]:
    return [
        Step(s["role"], s.get("text", ""), s.get("first", 0), s.get("last", 0))
        for s in window.steps
    ]


def _ask(
    config: LLMConfig, window: Window, prompt_type: str, guard: UnreadableGuard | None = None
) -> Answer:
    """One instruction asked for; with a guard, not asked once the run must stop, and the
    answer counted in this thread (so that the other threads stop asking at once)."""
    if guard is not None:
        guard.check()
    prompt = prompts.render(prompt_type, trajectory=prompts.render_steps(_steps_of(window)))
    answer = llm_call(config, [{"role": "user", "content": prompt}])
    if guard is not None:
        readable = prompts.instruction_from(prompt_type, answer.text) is not None
        guard.watch(answer.model or config.model, readable=readable)
    return answer


def trajectory_synthesize(
    *,
    run: SynthesisRun,
    trajectory_id: int,
    config: LLMConfig | None = None,
    on_window: Callable[[], None] | None = None,
) -> int:
    """Write the instructions of one trajectory's windows that have none yet. Returns how many
    windows this call completed. Windows it took but could not finish go back to pending."""
    config = config or llm_config()
    trajectory = Trajectory.objects.public().filter(pk=trajectory_id).first()
    if trajectory is None:
        return 0  # gone or no longer public since the run started
    windows_create(run=run, trajectory=trajectory)
    candidates = Window.objects.filter(trajectory=trajectory).exclude(
        state__in=[WindowState.DONE, WindowState.FAILED]
    )
    claimed: dict[int, Window] = {}
    for window in candidates:
        if window_claim(window.pk):
            claimed[window.pk] = window
    if claimed:
        Window.objects.filter(pk__in=claimed).update(run=run)
    have = set(
        Example.objects.filter(window_id__in=claimed).values_list("window_id", "prompt_type")
    )
    jobs = [(w, t) for w in claimed.values() for t in prompts.PROMPT_TYPES if (w.pk, t) not in have]
    remaining = {pk: {t for t in prompts.PROMPT_TYPES if (pk, t) not in have} for pk in claimed}
    errors: dict[int, list[str]] = {}
    done = 0
    aborted: LLMError | SynthesisAborted | None = None
    guard = UnreadableGuard(run_id=run.pk, started=run.started_at.timestamp(), phase="synthesis")
    try:
        for pk in [pk for pk, left in remaining.items() if not left]:
            done += _window_done(pk, errors.get(pk, []), on_window)
        with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
            futures = {pool.submit(_ask, config, w, t, guard): (w, t) for w, t in jobs}
            for future in as_completed(futures):
                window, prompt_type = futures[future]
                try:
                    answer = future.result()
                except SynthesisAborted as stop:  # not asked: the run stops
                    aborted = stop
                    continue
                except LLMError as error:
                    _account(run.pk, Usage(retries=error.retries), failed=1)
                    if error.status in FATAL_STATUS:
                        aborted = error
                        for other in futures:
                            other.cancel()
                        break
                    if error.transient:
                        continue  # stays claimed, released below, retried by the next run
                    errors.setdefault(window.pk, []).append(f"{prompt_type}: {error}")
                else:
                    _account(run.pk, answer.usage)
                    _answer_keep(run, window, prompt_type, answer, errors)
                remaining[window.pk].discard(prompt_type)
                if not remaining[window.pk]:
                    done += _window_done(window.pk, errors.get(window.pk, []), on_window)
    finally:
        _release([pk for pk, left in remaining.items() if left])
    if aborted is None and guard.stopped:
        aborted = SynthesisAborted(guard.stopped)
    if aborted is not None:
        raise SynthesisAborted(str(aborted))
    return done


def _answer_keep(
    run: SynthesisRun,
    window: Window,
    prompt_type: str,
    answer: Answer,
    errors: dict[int, list[str]],
) -> None:
    """The instruction of one answer as an example, or the window's error."""
    instruction = prompts.instruction_from(prompt_type, answer.text)
    if instruction is None:
        errors.setdefault(window.pk, []).append(f"{prompt_type}: the answer had no fenced block")
    else:
        _example_create(run, window, prompt_type, answer, instruction)


def _example_create(
    run: SynthesisRun, window: Window, prompt_type: str, answer: Answer, instruction: str
) -> None:
    try:
        with transaction.atomic():
            Example.objects.create(
                window=window,
                trajectory_id=window.trajectory_id,
                run=run,
                prompt_type=prompt_type,
                prompt_version=prompts.VERSION,
                model=answer.model[:200],
                instruction=instruction,
            )
    except IntegrityError:
        pass  # written meanwhile by a worker that took over a stale claim; one is enough


def _window_done(pk: int, errors: list[str], on_window: Callable[[], None] | None) -> int:
    updated = Window.objects.filter(pk=pk, state=WindowState.CLAIMED).update(
        state=WindowState.DONE, error="\n".join(errors)[:2000]
    )
    if on_window is not None:
        on_window()
    return updated


def run_trajectory_finished(run: SynthesisRun, trajectory_id: int) -> bool:
    """Count one trajectory of the run as done; True for exactly the call that finished the
    synthesis phase (the run moves to filtering with a conditional update).

    Counted once per trajectory: a task the broker delivers twice (a worker killed after the
    work but before its acknowledgement) must not count twice, or the run would be filtered
    while a trajectory is still being written and its examples would stay unjudged."""
    # The start time too: a database restored or recreated reuses run ids, Redis keeps keys.
    mark = f"learn:run:{run.pk}:{run.started_at.timestamp()}:done:{trajectory_id}"
    if cache.add(mark, 1, settings.TRAJHUB_SYNTH_DONE_MARK_SECONDS):
        SynthesisRun.objects.filter(pk=run.pk).update(trajectories_done=F("trajectories_done") + 1)
    return run_synthesis_finished(run.pk)


def run_synthesis_finished(run_id: int) -> bool:
    return (
        SynthesisRun.objects.filter(
            pk=run_id,
            state=RunState.SYNTHESIZING,
            trajectories_done__gte=F("trajectories_total"),
        ).update(state=RunState.FILTERING)
        == 1
    )


def run_fail(*, run_id: int, error: str) -> None:
    SynthesisRun.objects.filter(pk=run_id).exclude(state=RunState.DONE).update(
        state=RunState.FAILED, error=error[:2000], finished_at=timezone.now()
    )


FILTER_BATCH = 200


def filter_pipeline(run_id: int, config: LLMConfig) -> list[quality.Filter]:
    from apps.moderation.scanning.scanner import scan

    kept = list(Example.objects.filter(state=ExampleState.KEPT).values_list("pk", "instruction"))

    def on_answer(answer: Answer) -> None:
        _account(run_id, answer.usage)

    def on_failure(error: LLMError) -> None:
        _account(run_id, Usage(retries=error.retries), failed=1)

    run = SynthesisRun.objects.filter(pk=run_id).only("started_at").first()
    guard = UnreadableGuard(
        run_id=run_id, started=run.started_at.timestamp() if run else 0.0, phase="judge"
    )

    return [
        quality.ScanFilter(scan),
        quality.LengthFilter(
            min_actions=settings.TRAJHUB_FILTER_MIN_ACTIONS,
            max_actions=settings.TRAJHUB_FILTER_MAX_ACTIONS,
            min_chars=settings.TRAJHUB_FILTER_MIN_INSTRUCTION_CHARS,
            max_chars=settings.TRAJHUB_FILTER_MAX_INSTRUCTION_CHARS,
        ),
        quality.ErrorsOnlyFilter(),
        # Before near_duplicate: a flagged window must not stand in its index for later ones.
        quality.FlaggedByReadersFilter(readers_verdicts),
        quality.NearDuplicateFilter(threshold=settings.TRAJHUB_FILTER_NEAR_DUPLICATE, kept=kept),
        quality.CommitteeFilter(
            config=config,
            call=lambda messages, model: llm_call(config, messages, model),
            on_answer=on_answer,
            on_failure=on_failure,
            guard=guard,
        ),
    ]


def run_filter(
    *,
    run_id: int,
    config: LLMConfig | None = None,
    on_example: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run the filters over every unfiltered example of public trajectories; record each verdict
    and, on the run, kept / dropped per filter. Examples the committee could not judge (the
    endpoint failed) stay candidates for the next run. SynthesisAborted when the judges' first
    answers cannot be read (apps/learn/guard.py): the batch being judged is left as it was."""
    config = config or llm_config()
    pipeline = filter_pipeline(run_id, config)
    counts: dict[str, dict[str, int]] = {f.name: {"kept": 0, "dropped": 0} for f in pipeline}
    total = {"candidates": 0, "kept": 0, "dropped": 0, "not_judged": 0}
    last_id = 0
    while True:
        batch = list(
            Example.objects.filter(
                state=ExampleState.CANDIDATE,
                pk__gt=last_id,
                trajectory__in=Trajectory.objects.public(),
            )
            .select_related("window")
            .order_by("pk")[:FILTER_BATCH]
        )
        if not batch:
            break
        last_id = batch[-1].pk
        total["candidates"] += len(batch)
        standing = [
            quality.Candidate(
                e.pk,
                e.instruction,
                _steps_of(e.window),
                e.window.num_actions,
                trajectory_id=e.trajectory_id,
                start_position=e.window.start_position,
                end_position=e.window.end_position,
            )
            for e in batch
        ]
        verdicts: dict[int, list[quality.Verdict]] = {e.pk: [] for e in batch}
        for step in pipeline:
            if not standing:
                break
            results = step.check(standing)
            survivors = []
            for candidate, verdict in zip(standing, results, strict=True):
                verdicts[candidate.id].append(verdict)
                if verdict.kept:
                    survivors.append(candidate)
                elif not verdict.details.get("error"):
                    counts[step.name]["dropped"] += 1
            counts[step.name]["kept"] += len(survivors)
            standing = survivors
        for example in batch:
            found = verdicts[example.pk]
            last = found[-1]
            if last.details.get("error"):
                total["not_judged"] += 1
                continue
            kept = all(v.kept for v in found)
            updated = Example.objects.filter(pk=example.pk, state=ExampleState.CANDIDATE).update(
                state=ExampleState.KEPT if kept else ExampleState.DROPPED,
                dropped_by="" if kept else last.filter,
                verdicts=[v.as_dict() for v in found],
            )
            if updated:
                total["kept" if kept else "dropped"] += 1
        if on_example is not None:
            on_example(len(batch))
    repeats = sum(Window.objects.filter(run_id=run_id).values_list("repeats_removed", flat=True))
    stats = {"repeats": {"removed": repeats}, **counts, "total": total}
    SynthesisRun.objects.filter(pk=run_id).update(
        stats=stats, state=RunState.DONE, finished_at=timezone.now()
    )
    return stats


def derived_delete(*, trajectory_ids: list[int]) -> int:
    """Remove windows and examples of trajectories that left public() or whose redactions
    changed since their windows were cut. Returns how many windows went."""
    ids = list(trajectory_ids)
    if not ids:
        return 0
    public = {
        pk: map_digest(redactions)
        for pk, redactions in Trajectory.objects.public()
        .filter(pk__in=ids)
        .values_list("pk", "redactions")
    }
    gone = [pk for pk in ids if pk not in public]
    doomed = Window.objects.filter(trajectory_id__in=gone)
    stale = Q()
    for pk, digest in public.items():
        stale |= Q(trajectory_id=pk) & ~Q(redactions_hash=digest)
    count = doomed.count()
    doomed.delete()
    if public:
        changed = Window.objects.filter(stale)
        count += changed.count()
        changed.delete()
    return count
