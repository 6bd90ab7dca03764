"""Reactions to trajectories' signals, connected in FeedbackConfig.ready()."""

from __future__ import annotations


def reanchor(sender, *, trajectory_id: int, created: bool = False, **kwargs) -> None:
    """A trajectory was updated (a re-share, a re-import): its feedback follows its steps.
    Sent after commit; a few queries over the feedback's positions only."""
    if created:
        return
    from apps.feedback.reanchoring import feedback_reanchor

    feedback_reanchor(trajectory_id=trajectory_id)


def forget_summary(sender, *, instance, **kwargs) -> None:
    """A piece of feedback (or the switch) was saved or deleted, a cascade included: the
    trajectory's cached summary is stale."""
    from apps.feedback.selectors import feedback_changed

    feedback_changed(instance.trajectory_id)


def account_deleting(sender, *, instance, **kwargs) -> None:
    """An account is about to be deleted, and its feedback with it (the cascade). Its
    first-wrong marks and corrections go first, here, and the trajectories they counted on are
    recounted without them, once each, in the same transaction: the cascade deletes rows whose
    key to the account is nullable in no fixed order with the account, so a receiver after the
    account's deletion could still see them."""
    from apps.feedback.counts import trajectories_counts_recount
    from apps.feedback.models import FirstWrongMark, NoteKind, StepNote

    marks = FirstWrongMark.objects.filter(author=instance)
    corrections = StepNote.objects.filter(author=instance, kind=NoteKind.CORRECTION)
    counted_on = {
        *marks.values_list("trajectory_id", flat=True),
        *corrections.values_list("trajectory_id", flat=True),
    }
    marks.delete()
    corrections.delete()
    trajectories_counts_recount(counted_on)
