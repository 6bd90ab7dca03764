"""Which step feedback a release holds (ReleaseFeedback), fixed when it is published, and what
changed since the previous one: as trajectories have their entries, so that a deleted piece of
feedback (or one whose author's account was deleted, or that was held, rejected, outdated or
switched off since) is left out of the next release, listed there as removed, and supersedes
the published release that holds it (removals.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import BigIntegerField, CharField, Exists, F, OuterRef, Q, QuerySet, Value

from apps.datasets import selectors
from apps.datasets.models import Release, ReleaseEntry, ReleaseFeedback
from apps.feedback import releasing

Kind = ReleaseFeedback.Kind
BATCH = 2000


def releasable(kind: str, trajectory_ids: Any) -> QuerySet[Any]:
    """The feedback of one kind on these trajectories that may be released now."""
    if kind == Kind.RATING:
        return releasing.releasable_ratings(trajectory_ids)
    if kind == Kind.FIRST_WRONG:
        return releasing.releasable_marks(trajectory_ids)
    return releasing.releasable_notes(trajectory_ids).filter(kind=kind)


def _insert(release: Release, trajectory_ids: Any, within: Release | None) -> None:
    """The release's entries: the releasable feedback of these trajectories (only what
    `within` holds, when given), one `INSERT ... SELECT` per kind, so that no row passes
    through Python (a release holds hundreds of thousands of ratings)."""
    table = ReleaseFeedback._meta.db_table
    for kind in Kind.values:
        found = releasable(kind, trajectory_ids)
        if within is not None:
            held = ReleaseFeedback.objects.filter(release=within, kind=kind, item_id=OuterRef("pk"))
            found = found.filter(Exists(held))
        notes = kind in (Kind.CORRECTION, Kind.COMMENT)
        # All annotations, in the order of the INSERT's columns (values_list keeps it).
        columns = {
            "e_release": Value(release.pk, output_field=BigIntegerField()),
            "e_kind": Value(kind, output_field=CharField()),
            "e_item": F("pk"),
            "e_trajectory": F("trajectory_id"),
            "e_share": F("trajectory__share_id"),
            "e_step": F("position") + 1,
            "e_public": F("public_id") if notes else Value("", output_field=CharField()),
        }
        # All annotations, in the order of the INSERT's columns (values_list keeps it).
        rows = found.order_by().annotate(**columns).values_list(*columns)
        sql, params = rows.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (release_id, kind, item_id, trajectory_id, share_id, step,"
                f" public_id) {sql}",
                params,
            )


def feedback_fix(release: Release, previous: Release | None) -> None:
    """At publish: the releasable feedback of the release's trajectories becomes its
    ReleaseFeedback (for a removal-only release, only what `previous` held: nothing is added),
    and `feedback_added` and `feedback_removed` say what changed since `previous`."""
    ReleaseFeedback.objects.filter(release=release).delete()
    trajectories = ReleaseEntry.objects.filter(release=release, trajectory__isnull=False).values(
        "trajectory_id"
    )
    _insert(release, trajectories, previous if release.removal_only else None)
    if previous is None:
        release.feedback_added = ReleaseFeedback.objects.filter(release=release).count()
        release.feedback_removed = []
    else:
        release.feedback_added = (
            ReleaseFeedback.objects.filter(release=release)
            .exclude(Exists(_same_item(previous)))
            .count()
        )
        release.feedback_removed = removed_list(
            ReleaseFeedback.objects.filter(release=previous).exclude(Exists(_same_item(release)))
        )
    release.save(update_fields=["feedback_added", "feedback_removed"])


def _same_item(release: Release) -> QuerySet[ReleaseFeedback]:
    return ReleaseFeedback.objects.filter(
        release=release, kind=OuterRef("kind"), item_id=OuterRef("item_id")
    )


def removed_list(entries: QuerySet[ReleaseFeedback]) -> list[dict[str, Any]]:
    """What the manifest lists as removed: each correction and comment by its public id, and
    ratings and first-wrong marks as a count per step (they have no id of their own, and who
    gave them is never said)."""
    notes: list[dict[str, Any]] = []
    counted: Counter[tuple[str, str, int]] = Counter()
    for kind, share_id, step, public_id in (
        entries.order_by("share_id", "step", "kind", "item_id")
        .values_list("kind", "share_id", "step", "public_id")
        .iterator(chunk_size=BATCH)
    ):
        if public_id:
            notes.append({"kind": kind, "id": public_id, "trajectory_id": share_id, "step": step})
        else:
            counted[(kind, share_id, step)] += 1
    counts = [
        {"kind": kind, "trajectory_id": share_id, "step": step, "count": count}
        for (kind, share_id, step), count in sorted(counted.items())
    ]
    return notes + counts


def gone_q(trajectory_ids: Iterable[int] | None = None) -> Q:
    """ReleaseFeedback whose feedback is deleted or may no longer be released (on trajectories
    that are still eligible: a trajectory that left is found by the entries' own rule).
    `trajectory_ids` narrows it to those trajectories."""
    eligible: Any = selectors.trajectory_eligible()
    scope = Q()
    if trajectory_ids is not None:
        ids = list(trajectory_ids)
        eligible = eligible.filter(pk__in=ids)
        scope = Q(trajectory_id__in=ids)
    eligible = eligible.values("id")
    gone = Q(pk__in=[])
    for kind in Kind.values:
        # NOT EXISTS, not NOT IN: PostgreSQL plans an anti-join, where NOT IN over a subquery
        # larger than work_mem is checked row by row.
        kept = releasable(kind, eligible).filter(pk=OuterRef("item_id"))
        gone |= Q(Q(kind=kind), ~Exists(kept))
    return scope & gone


def feedback_gone(release: Release) -> bool:
    """Whether `release` holds feedback that may no longer be released."""
    return ReleaseFeedback.objects.filter(release=release).filter(gone_q()).exists()


def feedback_new_since(previous: Release) -> bool:
    """Whether the trajectories of `previous` have releasable feedback it does not hold
    (asked when the next release would hold the same trajectories: something new to
    publish)."""
    ids = ReleaseEntry.objects.filter(release=previous, trajectory__isnull=False).values(
        "trajectory_id"
    )
    for kind in Kind.values:
        held = ReleaseFeedback.objects.filter(release=previous, kind=kind, item_id=OuterRef("pk"))
        if releasable(kind, ids).exclude(Exists(held)).exists():
            return True
    return False
