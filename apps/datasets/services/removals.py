"""When the data under a published release changes: a trajectory in it is deleted, leaves
`public()` (made private, held, rejected, hidden) or is taken out by its contributor, or a
piece of its step feedback is deleted (by its author, or with the author's account) or may no
longer be released (feedback_entries.py).

The release is marked superseded at once (its page and the API say so from the next request),
and one removal-only build is queued a little later (TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS):
changes that arrive meanwhile ride on the same build, so deleting fifty trajectories one by one
builds one release, not fifty. The removal-only release holds nothing new, so it publishes at
once and the superseded one points to it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q
from django.utils import timezone

from apps.core import queueing
from apps.datasets import selectors
from apps.datasets.models import Release, ReleaseEntry, ReleaseFeedback, ReleaseStatus
from apps.datasets.services.feedback_entries import gone_q

logger = logging.getLogger(__name__)

# Present while a removal build is queued and has not started: later changes need no other.
QUEUED_KEY = "trajhub.datasets.removal-build-queued"
# The task that builds it (registered by apps.datasets.tasks).
REMOVALS_TASK = "apps.datasets.tasks.release_removals"


def _no_longer_releasable(trajectory_ids: Iterable[int] | None) -> Q:
    """Entries whose trajectory is gone (the entry keeps its share id, the link is nulled) or
    no longer eligible. With `trajectory_ids`, only those are checked for eligibility."""
    eligible = selectors.trajectory_eligible()
    changed = Q(trajectory__isnull=False)
    if trajectory_ids is not None:
        ids = list(trajectory_ids)
        # Only these few are looked up in public(), not the whole eligible set.
        eligible = eligible.filter(pk__in=ids)
        changed &= Q(trajectory_id__in=ids)
    changed &= ~Q(trajectory_id__in=eligible.values("id"))
    return Q(trajectory__isnull=True) | changed


def release_mark_superseded(
    *,
    trajectory_ids: Iterable[int] | None = None,
    releases: Iterable[Release] | None = None,
    queue: bool = True,
) -> list[int]:
    """Mark superseded every published release (or those of `releases`) not marked yet that
    holds a trajectory, or step feedback, that may no longer be released; `trajectory_ids`
    narrows the check to the trajectories that just changed (or whose feedback did) (deleted rows are always found: their entries lost the
    link). Queues a removal build when one was marked (and `queue`). Returns the versions
    marked."""
    candidates = Release.objects.filter(status=ReleaseStatus.PUBLISHED, superseded_at__isnull=True)
    if releases is not None:
        candidates = candidates.filter(pk__in=[release.pk for release in releases])
    affected = (
        ReleaseEntry.objects.filter(release__in=candidates)
        .filter(_no_longer_releasable(trajectory_ids))
        .values("release_id")
    )
    # Or step feedback of theirs that was deleted or may no longer be released.
    feedback = (
        ReleaseFeedback.objects.filter(release__in=candidates)
        .filter(gone_q(trajectory_ids))
        .values("release_id")
    )
    marked = list(
        Release.objects.filter(
            Q(pk__in=affected) | Q(pk__in=feedback), superseded_at__isnull=True
        ).values_list("pk", "version")
    )
    if not marked:
        return []
    Release.objects.filter(pk__in=[pk for pk, _ in marked], superseded_at__isnull=True).update(
        superseded_at=timezone.now()
    )
    versions = sorted(version for _, version in marked)
    logger.info(
        "releases %s superseded: a trajectory or feedback in them may no longer be released",
        versions,
    )
    if queue:
        release_queue_removal_build()
    return versions


def release_queue_removal_build() -> bool:
    """Queue one removal-only build TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS from now, unless one is
    queued already (it will see this change too: it reads the state when it runs). True when
    this call queued it. A broker that is down is logged, not raised: the scheduled release run
    builds what is due (tasks.release_run checks for superseded releases too)."""
    delay = max(0, settings.TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS)
    # Expires on its own some time after the task should have run: a lost message does not
    # keep every later change from queueing a build.
    if not cache.add(QUEUED_KEY, "1", timeout=delay + 600):
        return False
    try:
        queueing.task(REMOVALS_TASK).apply_async(countdown=delay)
    except Exception:
        cache.delete(QUEUED_KEY)
        logger.exception("could not queue the removal build; the scheduled run will build it")
        return False
    return True


def release_removals_started() -> None:
    """The queued removal build starts: a change from now on needs a build of its own."""
    cache.delete(QUEUED_KEY)
