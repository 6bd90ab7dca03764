"""Signals that let downstream apps react to trajectories without trajectories importing them.

`trajectory_stored` is sent after the transaction that created or updated a trajectory commits
(moderation listens and queues the scan). `trajectory_deleted` is sent after a deletion commits.
`public_set_changed` is sent after any commit that may have moved trajectories into or out of
`Trajectory.objects.public()`; whatever caches public data (browse facets, stats, retrieval)
forgets it there, because a trajectory that just became private must not linger in a cache.
"""

from django.dispatch import Signal

# kwargs: trajectory_id (int), created (bool)
trajectory_stored = Signal()
# Sent after commit with trajectory_id (int) when a trajectory's own text changed (title,
# feedback) and its redaction index must be rebuilt: the app's receiver queues the task, so that
# the services never import the tasks that call them.
redaction_index_stale = Signal()
# kwargs: share_id (str), was_public (bool), reason (str: who deleted it, see trajectory_delete),
# actor_id (int | None: the account that did it; it may be gone by now), actor_username (str)
trajectory_deleted = Signal()
# Sent after commit (transaction.on_commit) with sender=Trajectory and
# trajectory_ids=list[int] whenever trajectories may have entered or left public():
# visibility changes, review-state changes (scan, moderation, approve/reject/hide), redaction
# changes, deletion (sent after the commit with the ids of the rows that are gone: receivers
# treat a missing row as gone). Services send it through services.announce_public_change().
public_set_changed = Signal()
