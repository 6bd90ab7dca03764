"""Writes of the release app: building, announcing and publishing releases (run.py: the state
machine; lock.py: one build at a time; publish.py: a written release published; shards.py: a
build split across workers), the files (build.py, card.py, storage.py), contributors' opt-outs
(optout.py) and what happens when the data under a published release changes (removals.py)."""

from apps.datasets.services.optout import trajectory_put_back, trajectory_take_out
from apps.datasets.services.publish import release_take_down_superseded
from apps.datasets.services.removals import (
    release_mark_superseded,
    release_queue_removal_build,
    release_removals_started,
)
from apps.datasets.services.run import ReleaseRunResult, release_run
from apps.datasets.services.shards import release_shard_build

__all__ = [
    "ReleaseRunResult",
    "release_mark_superseded",
    "release_queue_removal_build",
    "release_removals_started",
    "release_run",
    "release_shard_build",
    "release_take_down_superseded",
    "trajectory_put_back",
    "trajectory_take_out",
]
