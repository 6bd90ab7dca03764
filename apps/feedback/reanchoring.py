"""After a re-import or an update of a trajectory: its feedback follows its steps (outdated
where the step it was given on changed or is gone, current again where it reads as before), and
the trajectory's counts follow its feedback."""

from __future__ import annotations

from django.db.models import Q

from apps.feedback import anchors
from apps.feedback.counts import trajectory_counts_recount
from apps.feedback.models import FirstWrongMark, StepNote, StepRating
from apps.feedback.selectors import feedback_changed
from apps.trajectories.models import Event


def feedback_reanchor(*, trajectory_id: int) -> int:
    """After a re-import or an update: each piece of feedback stays on its step where the step's
    fingerprint is the one it was given on, and is marked outdated where not (or where the
    step is gone); one that matches again is current again. Returns how many became outdated."""
    models = (StepRating, FirstWrongMark, StepNote)
    positions: set[int] = set()
    for model in models:
        positions.update(
            model.objects.filter(trajectory_id=trajectory_id).values_list("position", flat=True)
        )
    if not positions:
        return 0
    current = {
        event.position: anchors.fingerprint(event)
        for event in Event.objects.filter(trajectory_id=trajectory_id, position__in=positions).only(
            "position", "source", "kind", "type", "text"
        )
    }
    matching = Q()
    for position, print_ in current.items():
        matching |= Q(position=position, fingerprint=print_)
    outdated = 0
    for model in models:
        rows = model.objects.filter(trajectory_id=trajectory_id)
        stale = rows.exclude(matching) if current else rows
        outdated += stale.filter(outdated=False).update(outdated=True)
        if current:
            rows.filter(matching, outdated=True).update(outdated=False)
    feedback_changed(trajectory_id)
    # Outdated marks and corrections leave the counts; the number of steps (the deciles'
    # denominator) may have changed too.
    trajectory_counts_recount(trajectory_id=trajectory_id)
    return outdated
