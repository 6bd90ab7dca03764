"""Writes of the release app: building, announcing and publishing releases (run.py), the files
(build.py, card.py, storage.py), contributors' opt-outs (optout.py) and what happens when the
data under a published release changes (removals.py)."""

from apps.datasets.services.optout import trajectory_put_back, trajectory_take_out
from apps.datasets.services.removals import (
    release_mark_superseded,
    release_queue_removal_build,
    release_removals_started,
)
from apps.datasets.services.run import (
    RunResult,
    release_run,
    release_shard_build,
    release_take_down_superseded,
)

__all__ = [
    "RunResult",
    "release_mark_superseded",
    "release_queue_removal_build",
    "release_removals_started",
    "release_run",
    "release_shard_build",
    "release_take_down_superseded",
    "trajectory_put_back",
    "trajectory_take_out",
]
