"""Celery tasks: thin, they take ids and call one service.

A run fans out one task per trajectory; the task that finishes the last trajectory queues the
filter phase, which queues an index rebuild. A worker killed mid-trajectory loses nothing: the
broker redelivers the task (acks_late) and its stale window claims are taken up again.
"""

from __future__ import annotations

from celery import shared_task

from apps.learn import services
from apps.learn.models import RunState, SynthesisRun


@shared_task(ignore_result=True)
def synthesis_run(run_id: int) -> None:
    """Queue one synthesize_trajectory per trajectory of the run."""
    run = SynthesisRun.objects.filter(pk=run_id, state=RunState.SYNTHESIZING).first()
    if run is None:
        return
    ids = services.run_trajectory_ids(run)
    SynthesisRun.objects.filter(pk=run_id).update(trajectories_total=len(ids))
    if not ids:
        if services.run_synthesis_finished(run_id):
            filter_run.delay(run_id)
        return
    for trajectory_id in ids:
        synthesize_trajectory.delay(run_id, trajectory_id)


@shared_task(ignore_result=True, acks_late=True)
def synthesize_trajectory(run_id: int, trajectory_id: int) -> None:
    run = SynthesisRun.objects.filter(pk=run_id, state=RunState.SYNTHESIZING).first()
    if run is None:
        return
    try:
        services.trajectory_synthesize(run=run, trajectory_id=trajectory_id)
    except services.SynthesisAborted as error:
        services.run_fail(run_id=run_id, error=str(error))
        return
    if services.run_trajectory_finished(run, trajectory_id):
        filter_run.delay(run_id)


@shared_task(ignore_result=True, acks_late=True)
def filter_run(run_id: int) -> None:
    if not SynthesisRun.objects.filter(pk=run_id, state=RunState.FILTERING).exists():
        return
    try:
        services.run_filter(run_id=run_id)
    except services.SynthesisAborted as error:
        services.run_fail(run_id=run_id, error=str(error))
        return
    index_rebuild.delay()


@shared_task(ignore_result=True)
def index_rebuild() -> None:
    """Build the retrieval index from the kept public examples and swap it in."""
    from apps.learn.retrieval import index

    index.index_build()


@shared_task(ignore_result=True)
def derived_cleanup(trajectory_ids: list[int]) -> None:
    if services.derived_delete(trajectory_ids=trajectory_ids):
        index_rebuild.delay()
