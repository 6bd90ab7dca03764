"""What lists and stats read of a trajectory's feedback, kept on the trajectory: how many
corrections anyone may read (`Trajectory.correction_count`), how many current first-wrong
marks (`first_wrong_count`), and in which tenths of the run those marks are (`FlaggedDecile`,
and as bits in `first_wrong_deciles`, what the list's ?flagged_at= filters by).

Trajectories sit below feedback and never read it, so this module writes their columns. Every
service that changes what these count calls `trajectory_counts_recount` inside its
transaction: a give, an edit or a deletion, a moderator's decision, a report that holds a
note, the owner's rejection, the switch, the re-anchoring after a re-import, an account's
erasure (receivers.py). A recount of one trajectory (a few queries over its own feedback rows)
rather than +1 / -1 updates: each of those changes moves a row in or out of several counts at
once, and a recount cannot drift.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q
from django.dispatch import Signal

from apps.feedback.models import FeedbackSwitch, FirstWrongMark, NoteKind, NoteState, StepNote
from apps.trajectories.deciles import deciles_bits
from apps.trajectories.models import FlaggedDecile, Trajectory

DECILES = 10

# Sent after the commit that changed a trajectory's first-wrong marks by decile, with
# trajectory_ids=list[int] (the stats histogram forgets its cached numbers).
flagged_deciles_changed = Signal()


def decile(position: int, num_events: int) -> int:
    """The tenth of the run a step is in: its position (from 0) over the number of steps, so
    that the first step of ten is in decile 0 and the last in decile 9."""
    if num_events <= 0:
        return 0
    return max(0, min(DECILES - 1, position * DECILES // num_events))


def counted_corrections(trajectory_id: int):
    """The corrections a trajectory's count counts: those everyone may read (passed the scan or
    a moderator), not rejected by the owner, on a step that still reads as it did."""
    return StepNote.objects.filter(
        trajectory_id=trajectory_id,
        kind=NoteKind.CORRECTION,
        state=NoteState.SHOWN,
        owner_rejected_at__isnull=True,
        outdated=False,
    )


def trajectory_counts_recount(*, trajectory_id: int) -> bool:
    """Count the trajectory's shown corrections and current first-wrong marks again and store
    them, with the marks' deciles; all zero while feedback is switched off (what was given
    stays, hidden). Returns whether anything changed. A trajectory that is gone is left alone.

    The trajectory's row is locked first (FOR NO KEY UPDATE: the feedback rows' foreign keys
    take KEY SHARE on it and must not deadlock with this), so that two gives committing at
    once each count the other's row: the second waits, then counts what the first committed."""
    with transaction.atomic():
        row = (
            Trajectory.objects.select_for_update(no_key=True)
            .filter(pk=trajectory_id)
            .values_list(
                "num_events", "correction_count", "first_wrong_count", "first_wrong_deciles"
            )
            .first()
        )
        if row is None:
            return False
        num_events, old_corrections, old_marks, old_bits = row
        if FeedbackSwitch.objects.filter(trajectory_id=trajectory_id).exists():
            corrections, positions = 0, []
        else:
            corrections = counted_corrections(trajectory_id).count()
            positions = list(
                FirstWrongMark.objects.filter(
                    trajectory_id=trajectory_id, outdated=False
                ).values_list("position", flat=True)
            )
        wanted = Counter(decile(position, num_events) for position in positions)
        stored = dict(
            FlaggedDecile.objects.filter(trajectory_id=trajectory_id).values_list("decile", "marks")
        )
        bits = deciles_bits(wanted)
        changed = (corrections, len(positions), bits) != (old_corrections, old_marks, old_bits)
        if changed:
            Trajectory.objects.filter(pk=trajectory_id).update(
                correction_count=corrections,
                first_wrong_count=len(positions),
                first_wrong_deciles=bits,
            )
        deciles_changed = stored != dict(wanted)
        if deciles_changed:
            FlaggedDecile.objects.filter(trajectory_id=trajectory_id).delete()
            FlaggedDecile.objects.bulk_create(
                FlaggedDecile(trajectory_id=trajectory_id, decile=tenth, marks=marks)
                for tenth, marks in sorted(wanted.items())
            )
    if deciles_changed:
        transaction.on_commit(
            lambda: flagged_deciles_changed.send(sender=None, trajectory_ids=[trajectory_id])
        )
    return changed or deciles_changed


def trajectories_counts_recount(trajectory_ids: Iterable[int]) -> int:
    """Recount several trajectories (an erased account's, `manage.py recount_feedback`);
    returns how many changed."""
    return sum(
        trajectory_counts_recount(trajectory_id=trajectory_id)
        for trajectory_id in sorted(set(trajectory_ids))
    )


def all_counts_recount() -> int:
    """Recount every trajectory that has first-wrong marks or corrections, or counts or
    deciles stored (one whose feedback is all gone gets zeros); returns how many changed."""
    ids: set[int] = set()
    ids.update(FirstWrongMark.objects.values_list("trajectory_id", flat=True).distinct())
    ids.update(
        StepNote.objects.filter(kind=NoteKind.CORRECTION)
        .values_list("trajectory_id", flat=True)
        .distinct()
    )
    ids.update(FlaggedDecile.objects.values_list("trajectory_id", flat=True).distinct())
    ids.update(
        Trajectory.objects.filter(
            Q(correction_count__gt=0) | Q(first_wrong_count__gt=0) | Q(first_wrong_deciles__gt=0)
        ).values_list("pk", flat=True)
    )
    return trajectories_counts_recount(ids)
