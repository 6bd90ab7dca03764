"""The stats app's reactions to trajectories' signals (connected in StatsConfig.ready())."""

from __future__ import annotations

from typing import Any


def forget_stats(sender: Any, *, trajectory_ids: list[int], **kwargs: Any) -> None:
    """Trajectories entered or left public(): cached aggregates must not count them wrongly."""
    from apps.stats.selectors import collection_stats_forget

    collection_stats_forget()


def forget_first_wrong(sender: Any, *, trajectory_ids: list[int], **kwargs: Any) -> None:
    """First-wrong marks changed (apps.feedback's recount): the histogram counts again."""
    from apps.stats.first_wrong import first_wrong_forget

    first_wrong_forget()
