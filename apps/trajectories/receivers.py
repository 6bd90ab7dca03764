"""Reactions of the trajectories app to its own signals, connected in TrajectoriesConfig.ready()."""

from __future__ import annotations


def forget_public_facets(sender, *, trajectory_ids: list[int], **kwargs) -> None:
    """Trajectories entered or left public(): the browse facets must not outlive them."""
    from apps.trajectories.selectors.site import public_facets_forget

    public_facets_forget()


def forget_compare_steps(sender, *, share_id: str, **kwargs) -> None:
    """A deleted trajectory's text goes at once: also the step summaries /compare/ cached."""
    from apps.trajectories.selectors.compare import compare_steps_forget

    compare_steps_forget(share_id)


def queue_redaction_index_refresh(sender, *, trajectory_id: int, **kwargs) -> None:
    """A trajectory's own text changed (sent after the commit): rebuild its redaction index by a
    task (with very many redactions the rebuild takes seconds)."""
    from apps.trajectories.tasks import redaction_index_refresh

    redaction_index_refresh.delay(trajectory_id)
