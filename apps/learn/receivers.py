"""Reactions to trajectories' signals (connected in LearnConfig.ready()).

Derived data follows its source: what left public() or was redacted again loses its windows and
examples at once (in the sending process, after its commit), and the index is rebuilt. Retrieval
checks every hit against public() as well, so a rebuild that lags never serves one.
"""

from __future__ import annotations

import logging
from typing import Any

from apps.learn import services, tasks

logger = logging.getLogger(__name__)


def public_set_changed(sender: Any, trajectory_ids: list[int], **kwargs: Any) -> None:
    if services.derived_delete(trajectory_ids=list(trajectory_ids)):
        _rebuild()


def trajectory_deleted(sender: Any, **kwargs: Any) -> None:
    # The rows went with the trajectory (foreign keys cascade); the index follows.
    _rebuild()


def _rebuild() -> None:
    try:
        tasks.index_rebuild.delay()
    except Exception:  # a broker that is down must not fail a deletion; hits are checked anyway
        logger.exception("could not queue the retrieval index rebuild")
