"""Writes of the release app: building, announcing and publishing releases (run.py), the files
(build.py, card.py, storage.py) and contributors' opt-outs (optout.py)."""

from apps.datasets.services.optout import trajectory_put_back, trajectory_take_out
from apps.datasets.services.run import (
    RunResult,
    release_run,
    release_shard_build,
    release_take_down_superseded,
)

__all__ = [
    "RunResult",
    "release_run",
    "release_shard_build",
    "release_take_down_superseded",
    "trajectory_put_back",
    "trajectory_take_out",
]
