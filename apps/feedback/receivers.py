"""Reactions to trajectories' signals, connected in FeedbackConfig.ready()."""

from __future__ import annotations


def reanchor(sender, *, trajectory_id: int, created: bool = False, **kwargs) -> None:
    """A trajectory was updated (a re-share, a re-import): its feedback follows its steps.
    Sent after commit; a few queries over the feedback's positions only."""
    if created:
        return
    from apps.feedback.services import feedback_reanchor

    feedback_reanchor(trajectory_id=trajectory_id)


def forget_summary(sender, *, instance, **kwargs) -> None:
    """A piece of feedback (or the switch) was saved or deleted, a cascade included: the
    trajectory's cached summary is stale."""
    from apps.feedback.selectors import feedback_changed

    feedback_changed(instance.trajectory_id)
