"""Reactions to trajectories' and step feedback's signals (connected in DatasetsConfig.ready())."""

from __future__ import annotations

from typing import Any

from apps.datasets import services


def public_set_changed(sender: Any, trajectory_ids: list[int], **kwargs: Any) -> None:
    """A trajectory in a published release that was deleted or left public(): the release is
    superseded from now on, and a removal-only build is queued (debounced)."""
    services.release_mark_superseded(trajectory_ids=trajectory_ids)


def feedback_changed(sender: Any, trajectory_ids: list[int], **kwargs: Any) -> None:
    """Step feedback on these trajectories changed: a published release holding a piece of it
    that was deleted, or may no longer be released, is superseded (a removal build queued)."""
    services.release_mark_superseded(trajectory_ids=trajectory_ids)
