"""Which step feedback a release holds (ReleaseFeedback), fixed when it is published, and what
changed since the previous one: as trajectories have their entries, so that a deleted piece of
feedback (or one whose author's account was deleted, or that was held, rejected, outdated or
switched off since) is left out of the next release, listed there as removed, and supersedes
the published release that holds it (removals.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

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


def _rows(
    release: Release, trajectory_ids: Any, within: Release | None
) -> Iterator[ReleaseFeedback]:
    """The release's entries to be: the releasable feedback of these trajectories (only what
    `within` holds, when given), streamed in key order."""
    for kind in Kind.values:
        notes = kind in (Kind.CORRECTION, Kind.COMMENT)
        columns = ["pk", "trajectory_id", "trajectory__share_id", "position"]
        found = releasable(kind, trajectory_ids)
        if within is not None:
            held = ReleaseFeedback.objects.filter(release=within, kind=kind).values("item_id")
            found = found.filter(pk__in=held)
        values = found.values_list(*columns, *(["public_id"] if notes else []))
        for pk, trajectory_id, share_id, position, *public_id in values.order_by("pk").iterator(
            chunk_size=BATCH
        ):
            yield ReleaseFeedback(
                release=release,
                kind=kind,
                item_id=pk,
                trajectory_id=trajectory_id,
                share_id=share_id,
                step=position + 1,
                public_id=public_id[0] if public_id else "",
            )


def _bulk(rows: Iterable[ReleaseFeedback]) -> None:
    batch: list[ReleaseFeedback] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            ReleaseFeedback.objects.bulk_create(batch)
            batch = []
    if batch:
        ReleaseFeedback.objects.bulk_create(batch)


def feedback_fix(release: Release, previous: Release | None) -> None:
    """At publish: the releasable feedback of the release's trajectories becomes its
    ReleaseFeedback (for a removal-only release, only what `previous` held: nothing is added),
    and `feedback_added` and `feedback_removed` say what changed since `previous`."""
    ReleaseFeedback.objects.filter(release=release).delete()
    trajectories = ReleaseEntry.objects.filter(release=release, trajectory__isnull=False).values(
        "trajectory_id"
    )
    within = previous if release.removal_only else None
    _bulk(_rows(release, trajectories, within))
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
