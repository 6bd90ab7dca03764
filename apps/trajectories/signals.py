"""Signals that let downstream apps react to trajectories without trajectories importing them.

`trajectory_stored` is sent after the transaction that created or updated a trajectory commits
(moderation listens and queues the scan). `trajectory_deleted` is sent after a deletion commits.
"""

from django.dispatch import Signal

# kwargs: trajectory_id (int), created (bool)
trajectory_stored = Signal()
# kwargs: share_id (str), was_public (bool)
trajectory_deleted = Signal()
