"""The one service the schedule and `manage.py build_release` call: it builds, announces or
publishes whatever is due, one build at a time, and says which.

A release is published only when every file is written, manifest last; until then nothing of it
is visible. A build that raises, or whose worker dies, leaves a failed release whose files are
deleted, and the next run starts a new one.

Here: the state machine (due, announced, waiting, removal-only, the one-process build). The lock
is lock.py, publishing a written release publish.py, a build split across workers shards.py.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from apps.datasets import selectors
from apps.datasets.models import Release, ReleaseEntry, ReleaseShard, ReleaseStatus
from apps.datasets.optout_links import optout_token
from apps.datasets.services import publish, shards, storage
from apps.datasets.services.build import write_release_files
from apps.datasets.services.feedback_entries import (
    feedback_fix,
    feedback_gone,
    feedback_new_since,
)
from apps.datasets.services.lock import build_lock
from apps.datasets.services.publish import Progress
from apps.datasets.services.removals import release_mark_superseded
from apps.trajectories.models import Trajectory

logger = logging.getLogger(__name__)


@dataclass
class ReleaseRunResult:
    """What a run did: "published", "announced", "waiting", "nothing_new", "not_due", "busy",
    "sharded" (split into shard tasks) or "failed"; and a sentence saying so."""

    action: str
    message: str
    release: Release | None = None


def release_run(
    *,
    now: datetime | None = None,
    force: bool = False,
    removals_only: bool = False,
    progress: Progress | None = None,
) -> ReleaseRunResult:
    """Publish an announced release whose opt-out window has ended; else, when the newest
    published release is superseded (a trajectory in it was deleted or left public() since),
    build a removal-only release, which publishes at once; then, when a build is due
    (TRAJHUB_RELEASE_EVERY_DAYS since the last regular one, or `force`) and not
    `removals_only`, build the next release: it is announced when it adds someone's
    trajectories for the first time (and the window is not 0 days), published at once
    otherwise. Nothing new since the last release: nothing happens."""
    now = now or timezone.now()
    with build_lock() as acquired:
        if not acquired:
            return ReleaseRunResult("busy", "another release build is running; nothing done")
        _fail_dead_builds(now)
        building = Release.objects.filter(status=ReleaseStatus.BUILDING).first()
        if building is not None:
            done = building.shards.filter(status=ReleaseShard.Status.DONE).count()
            return ReleaseRunResult(
                "busy",
                f"{building.name} is being built by shard tasks "
                f"({done}/{building.shards.count()} done)",
                building,
            )
        announced = Release.objects.filter(status=ReleaseStatus.ANNOUNCED).first()
        if announced is not None:
            assert announced.opt_out_until is not None
            if announced.opt_out_until > now:
                waiting = (
                    f"contributors may take trajectories out until "
                    f"{announced.opt_out_until:%Y-%m-%d %H:%M} UTC"
                )
                # A deletion must not wait for the window (up to TRAJHUB_RELEASE_OPT_OUT_DAYS)
                # to leave the published files: the removal-only release publishes now, and
                # the announced one is published after it, from it.
                removal = _removal_build(now, progress=progress)
                if removal is not None:
                    announced.refresh_from_db()
                    return ReleaseRunResult(
                        removal.action,
                        f"{removal.message}; {announced.name} stays announced: {waiting}",
                        removal.release,
                    )
                return ReleaseRunResult(
                    "waiting", f"{announced.name} is announced; {waiting}", announced
                )
            return _publish(announced, progress=progress)
        if removals_only or (not force and not _due(now)):
            # A regular build (below) leaves out what was removed as well.
            removal = _removal_build(now, progress=progress)
            if removal is not None:
                return removal
            if removals_only:
                return ReleaseRunResult(
                    "nothing_new", "no published release holds removed trajectories; nothing done"
                )
            latest = _latest_regular()
            assert latest is not None
            return ReleaseRunResult(
                "not_due",
                f"the next release is due {_next_due(latest):%Y-%m-%d %H:%M} UTC "
                f"(every {settings.TRAJHUB_RELEASE_EVERY_DAYS} days); nothing done",
            )
        return _start(now, progress=progress)


def _needs_removal(latest: Release | None) -> bool:
    """The newest published release holds a trajectory that may no longer be released, and no
    later release leaves it out yet."""
    if latest is None:
        return False
    # Also what no signal told of (a deletion by cascade, a change while a build ran).
    release_mark_superseded(releases=[latest], queue=False)
    latest.refresh_from_db(fields=["superseded_at", "superseded_by"])
    return latest.superseded_at is not None and latest.superseded_by_id is None


def _removal_build(now: datetime, *, progress: Progress | None) -> ReleaseRunResult | None:
    """The removal-only release, when one is needed (else None)."""
    latest = _latest_published()
    if not _needs_removal(latest):
        return None
    return _start(now, progress=progress, removal_of=latest)


def _latest_regular() -> Release | None:
    """The last release built on the schedule (removal-only ones do not move it)."""
    return Release.objects.exclude(status=ReleaseStatus.FAILED).exclude(removal_only=True).first()


def _due(now: datetime) -> bool:
    latest = _latest_regular()
    return latest is None or _next_due(latest) <= now


def _next_due(latest: Release) -> datetime:
    return latest.created_at + timedelta(days=settings.TRAJHUB_RELEASE_EVERY_DAYS)


def _fail_dead_builds(now: datetime) -> None:
    """We hold the lock, so a release still "building" in this process's way is dead: its
    worker was killed or crashed. A build split into shard tasks holds no lock; it is dead only
    when no shard moved for TRAJHUB_RELEASE_STALE_SECONDS."""
    stale = now - timedelta(seconds=settings.TRAJHUB_RELEASE_STALE_SECONDS)
    for release in Release.objects.filter(status=ReleaseStatus.BUILDING):
        if release.shards.exists() and release.heartbeat_at and release.heartbeat_at > stale:
            continue
        publish.release_fail(release, "the build stopped (its worker died or was killed)")


def _latest_published() -> Release | None:
    return selectors.release_latest()


def _start(
    now: datetime, *, progress: Progress | None, removal_of: Release | None = None
) -> ReleaseRunResult:
    """Fix the next release's content and announce or publish it. `removal_of`: a removal-only
    release, that published release's trajectories less those no longer eligible (the gate
    already passed them; nothing is added, so nobody is told and it publishes at once).
    Long because its steps (content, counts, the row, announce or publish) share one release
    row and one decision; apart, each would take and return most of the others' state."""
    if removal_of is not None:
        previous: Release | None = removal_of
        current = dict(
            ReleaseEntry.objects.filter(
                release=removal_of, trajectory__in=selectors.trajectory_eligible()
            ).values_list("trajectory_id", "share_id")
        )
        excluded = removal_of.excluded
    else:
        gate = selectors.quality_gate(selectors.trajectory_eligible())
        previous = _latest_published()
        current = dict(Trajectory.objects.filter(pk__in=gate.ids).values_list("id", "share_id"))
        excluded = gate.excluded
    previous_ids = (
        set(ReleaseEntry.objects.filter(release=previous).values_list("share_id", flat=True))
        if previous is not None
        else set()
    )
    same = set(current.values()) == previous_ids
    if removal_of is not None and same and not feedback_gone(removal_of):
        # What changed is releasable again (made public again before the build ran).
        Release.objects.filter(pk=removal_of.pk, superseded_by__isnull=True).update(
            superseded_at=None
        )
        return ReleaseRunResult(
            "nothing_new",
            f"{removal_of.name} holds nothing that was removed after all; no longer superseded",
            removal_of,
        )
    if (
        previous is not None
        and same
        and not feedback_new_since(previous)
        and not feedback_gone(previous)
    ):
        return ReleaseRunResult(
            "nothing_new", f"nothing changed since {previous.name}; nothing published", previous
        )
    if previous is None and not current:
        return ReleaseRunResult("nothing_new", "no eligible trajectories yet; nothing published")
    ever = set(
        ReleaseEntry.objects.filter(
            release__status=ReleaseStatus.PUBLISHED, trajectory_id__in=current
        ).values_list("trajectory_id", flat=True)
    )
    first_time = len(current) - len(ever)
    days = settings.TRAJHUB_RELEASE_OPT_OUT_DAYS
    before = ""
    if first_time and days > 0 and removal_of is None and _needs_removal(previous):
        # This release waits for its opt-out window, and the newest holds what was removed
        # since: a removal-only release first, published at once, so that the superseded one
        # has a newest to point to meanwhile.
        removal = _start(now, progress=progress, removal_of=previous)
        if removal.action == "failed":
            return removal
        before = f"{removal.message}; then "
        previous = _latest_published()
    release = _create(now, current, ever, previous, excluded, removal_of)
    if first_time and days > 0:
        until = now + timedelta(days=days)
        Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.ANNOUNCED, announced_at=now, opt_out_until=until
        )
        release.refresh_from_db()
        told = _announce(release)
        if not told:
            # Nobody could be told (anonymous shares without a contact address): there is no
            # window anyone was promised, so waiting would only delay the release.
            Release.objects.filter(pk=release.pk, status=ReleaseStatus.ANNOUNCED).update(
                opt_out_until=now
            )
            release.refresh_from_db()
            return _publish(release, progress=progress)
        return ReleaseRunResult(
            "announced",
            f"{before}{release.name} announced: {first_time} trajectories go into a release for the "
            f"first time; {told} contributors told; it is published after "
            f"{until:%Y-%m-%d %H:%M} UTC",
            release,
        )
    return _publish(release, progress=progress)


@transaction.atomic
def _create(
    now: datetime,
    current: dict[int, str],
    ever: set[int],
    previous: Release | None,
    excluded: dict,
    removal_of: Release | None,
) -> Release:
    """The release row (building) with its entries `current` ({trajectory id: share id}; new
    unless in `ever`), numbered after the highest version so far."""
    version = (Release.objects.aggregate(v=Max("version"))["v"] or 0) + 1
    announced = (
        Release.objects.select_for_update().filter(status=ReleaseStatus.ANNOUNCED).first()
        if removal_of is not None
        else None
    )
    if announced is not None:
        # Published before the announced release, the removal-only one takes its number
        # and the announced one the next: versions stay in the order of publishing (the
        # newest is the highest), and `announced_as` keeps the number its notices named.
        Release.objects.filter(pk=announced.pk).update(
            version=version,
            prefix=storage.release_prefix(version),
            announced_as=Coalesce(F("announced_as"), F("version")),
        )
        version = announced.version
    release = Release.objects.create(
        version=version,
        previous=previous,
        prefix=storage.release_prefix(version),
        scanner_version=selectors.scanner_version(),
        excluded=excluded,
        heartbeat_at=now,
        removal_only=removal_of is not None,
    )
    ReleaseEntry.objects.bulk_create(
        [
            ReleaseEntry(
                release=release, trajectory_id=pk, share_id=share_id, is_new=pk not in ever
            )
            for pk, share_id in sorted(current.items())
        ],
        batch_size=2000,
    )
    return release


def _announce(release: Release) -> int:
    """One notice per contributor of a trajectory new in this release (account, or anonymous
    contact email), listing those trajectories by their redacted titles, with a link to the
    list where they can take each out."""
    from apps.accounts.notices import notice_send

    new = (
        Trajectory.objects.filter(release_entries__release=release, release_entries__is_new=True)
        .only("share_id", "title", "redactions", "owner_id", "contact_email")
        .order_by("pk")
    )
    users: dict[int, list[str]] = {}
    emails: dict[str, tuple[str, list[str]]] = {}
    for trajectory in new.iterator(chunk_size=500):
        # The title from the redacted view: never a raw one, even to its contributor.
        if trajectory.owner_id is not None:
            users.setdefault(trajectory.owner_id, []).append(trajectory.shown_title)
        elif trajectory.contact_email:
            key = trajectory.contact_email.strip().lower()
            emails.setdefault(key, (trajectory.contact_email, []))[1].append(trajectory.shown_title)
    until = f"{release.opt_out_until:%Y-%m-%d %H:%M} UTC"

    def reason(titles: list[str]) -> str:
        which = "it" if len(titles) == 1 else "any of them"
        return (
            f"Release {release.name} is announced. You can take {which} out of it until "
            f"{until}; after that it is published."
        )

    from apps.accounts.models import User

    for user in User.objects.filter(pk__in=users).order_by("pk"):
        titles = users[user.pk]
        notice_send(
            kind="release_announced",
            user=user,
            reason=reason(titles),
            link=settings.SITE_URL + reverse("release-next"),
            titles=titles,
        )
    for email, titles in emails.values():
        token = optout_token(release=release, email=email)
        notice_send(
            kind="release_announced",
            email=email,
            reason=reason(titles),
            link=settings.SITE_URL + reverse("release-optout", args=[token]),
            titles=titles,
        )
    return len(users) + len(emails)


def _settle_entries(release: Release) -> None:
    """At publish time: leave out what was taken out, and what left public() (or lost its
    licence) since the release was announced."""
    eligible = selectors.trajectory_eligible()
    ReleaseEntry.objects.filter(release=release).exclude(trajectory__in=eligible).delete()
    previous = release.previous
    if previous is not None and previous.status != ReleaseStatus.PUBLISHED:
        previous = None
    ids = set(ReleaseEntry.objects.filter(release=release).values_list("share_id", flat=True))
    before = (
        set(ReleaseEntry.objects.filter(release=previous).values_list("share_id", flat=True))
        if previous is not None
        else set()
    )
    release.added_ids = sorted(ids - before)
    release.removed_ids = sorted(before - ids)
    release.num_rows = len(ids)
    release.save(update_fields=["added_ids", "removed_ids", "num_rows"])
    # The step feedback of those trajectories, fixed now too (feedback asks nobody first).
    feedback_fix(release, previous)


def _heartbeat(release: Release, step: str, progress: Progress | None) -> Callable[[int], None]:
    def beat(done: int) -> None:
        Release.objects.filter(pk=release.pk).update(
            progress_done=done, progress_total=release.num_rows, heartbeat_at=timezone.now()
        )
        if progress is not None:
            progress(step, done, release.num_rows)

    return beat


def _publish(release: Release, *, progress: Progress | None) -> ReleaseRunResult:
    """Build the files of `release` (building, or announced and due) and publish it."""
    if release.status == ReleaseStatus.ANNOUNCED:
        moved = Release.objects.filter(pk=release.pk, status=ReleaseStatus.ANNOUNCED).update(
            status=ReleaseStatus.BUILDING, heartbeat_at=timezone.now()
        )
        if not moved:
            return ReleaseRunResult("busy", f"{release.name} changed state meanwhile; nothing done")
        release.refresh_from_db()
    _settle_entries(release)
    previous = release.previous if release.previous_id else None
    unchanged = not release.added_ids and not release.removed_ids
    if (
        previous is not None
        and unchanged
        and not release.feedback_added
        and not release.feedback_removed
    ):
        # Everything new was taken out (or left public()) during the window, or (removal-only)
        # what was removed came back: no release.
        name = release.name
        release.delete()
        return ReleaseRunResult("nothing_new", f"{name}: nothing new left to publish")
    if (
        settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
        and release.num_rows > settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
    ):
        count = shards.release_split(release)
        return ReleaseRunResult(
            "sharded", f"{release.name}: building in {count} shard tasks", release
        )
    folder = Path(tempfile.mkdtemp(prefix=f"release-{release.version}-", dir=publish.build_dir()))
    try:
        written = write_release_files(
            release, folder, progress=_heartbeat(release, "rows", progress)
        )
        publish.release_finish(
            release, [publish.file_dict(f) for f in written], folder, progress=progress
        )
    except BaseException as exc:
        # KeyboardInterrupt and Celery's time limits too: nothing half-published stays.
        publish.release_fail(release, f"{type(exc).__name__}: {exc}")
        if isinstance(exc, Exception):
            logger.exception("release %s build failed", release.name)
            return ReleaseRunResult(
                "failed", f"{release.name} failed: {type(exc).__name__}: {exc}", release
            )
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    release.refresh_from_db()
    kind = " (removal-only)" if release.removal_only else ""
    return ReleaseRunResult(
        "published",
        f"{release.name} published{kind}: {release.num_rows} trajectories, "
        f"{len(release.added_ids)} added, {len(release.removed_ids)} removed",
        release,
    )
