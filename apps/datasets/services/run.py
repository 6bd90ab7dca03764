"""The one service the schedule and `manage.py build_release` call: it builds, announces or
publishes whatever is due, one build at a time, and says which.

A release is published only when every file is written, manifest last; until then nothing of it
is visible. A build that raises, or whose worker dies, leaves a failed release whose files are
deleted, and the next run starts a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Max
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from apps.datasets import enqueue, row_schema, selectors
from apps.datasets.models import (
    Release,
    ReleaseEntry,
    ReleaseFile,
    ReleaseShard,
    ReleaseStatus,
)
from apps.datasets.optout_links import optout_token
from apps.datasets.parquet import WrittenFile, sha256_of
from apps.datasets.services import card as cards
from apps.datasets.services import storage
from apps.datasets.services.build import write_release_files
from apps.datasets.services.removals import release_mark_superseded
from apps.trajectories.models import Trajectory

logger = logging.getLogger(__name__)

LOCK_KEY = "trajhub.datasets.release-build"
# The task that builds one shard (registered by apps.datasets.tasks).
SHARD_TASK = "apps.datasets.tasks.release_shard"
Progress = Callable[[str, int, int], None]  # (step, done, total)


class ReleaseError(RuntimeError):
    pass


@dataclass
class RunResult:
    """What a run did: "published", "announced", "waiting", "nothing_new", "not_due", "busy",
    "sharded" (split into shard tasks) or "failed"; and a sentence saying so."""

    action: str
    message: str
    release: Release | None = None


# --- the lock -----------------------------------------------------------------------------


def _lock_number() -> int:
    return int.from_bytes(hashlib.sha256(LOCK_KEY.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def build_lock() -> Iterator[bool]:
    """One build at a time. On PostgreSQL a session advisory lock: a worker that dies loses its
    connection and with it the lock, so the next run can tell its build is dead. Elsewhere a
    cache lock that expires after TRAJHUB_RELEASE_STALE_SECONDS."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [_lock_number()])
            acquired = bool(cursor.fetchone()[0])
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [_lock_number()])
        return
    acquired = cache.add(LOCK_KEY, "1", timeout=settings.TRAJHUB_RELEASE_STALE_SECONDS)
    try:
        yield acquired
    finally:
        if acquired:
            cache.delete(LOCK_KEY)


# --- the run --------------------------------------------------------------------------------


def release_run(
    *,
    now: datetime | None = None,
    force: bool = False,
    removals_only: bool = False,
    progress: Progress | None = None,
) -> RunResult:
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
            return RunResult("busy", "another release build is running; nothing done")
        _fail_dead_builds(now)
        building = Release.objects.filter(status=ReleaseStatus.BUILDING).first()
        if building is not None:
            done = building.shards.filter(status=ReleaseShard.Status.DONE).count()
            return RunResult(
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
                    return RunResult(
                        removal.action,
                        f"{removal.message}; {announced.name} stays announced: {waiting}",
                        removal.release,
                    )
                return RunResult("waiting", f"{announced.name} is announced; {waiting}", announced)
            return _publish(announced, progress=progress)
        if removals_only or (not force and not _due(now)):
            # A regular build (below) leaves out what was removed as well.
            removal = _removal_build(now, progress=progress)
            if removal is not None:
                return removal
            if removals_only:
                return RunResult(
                    "nothing_new", "no published release holds removed trajectories; nothing done"
                )
            latest = _latest_regular()
            assert latest is not None
            return RunResult(
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


def _removal_build(now: datetime, *, progress: Progress | None) -> RunResult | None:
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
        _fail(release, "the build stopped (its worker died or was killed)")


def _fail(release: Release, error: str) -> None:
    updated = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
        status=ReleaseStatus.FAILED, error=error[:2000]
    )
    if updated:
        logger.warning("release %s failed: %s", release.name, error)
        storage.delete_prefix(release.prefix or storage.release_prefix(release.version))


def _latest_published() -> Release | None:
    return selectors.release_latest()


def _start(
    now: datetime, *, progress: Progress | None, removal_of: Release | None = None
) -> RunResult:
    """Fix the next release's content and announce or publish it. `removal_of`: a removal-only
    release, that published release's trajectories less those no longer eligible (the gate
    already passed them; nothing is added, so nobody is told and it publishes at once)."""
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
    if removal_of is not None and set(current.values()) == previous_ids:
        # What changed is releasable again (made public again before the build ran).
        Release.objects.filter(pk=removal_of.pk, superseded_by__isnull=True).update(
            superseded_at=None
        )
        return RunResult(
            "nothing_new",
            f"{removal_of.name} holds nothing that was removed after all; no longer superseded",
            removal_of,
        )
    if previous is not None and set(current.values()) == previous_ids:
        return RunResult(
            "nothing_new", f"nothing changed since {previous.name}; nothing published", previous
        )
    if previous is None and not current:
        return RunResult("nothing_new", "no eligible trajectories yet; nothing published")
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
    with transaction.atomic():
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
        return RunResult(
            "announced",
            f"{before}{release.name} announced: {first_time} trajectories go into a release for the "
            f"first time; {told} contributors told; it is published after "
            f"{until:%Y-%m-%d %H:%M} UTC",
            release,
        )
    return _publish(release, progress=progress)


def _announce(release: Release) -> int:
    """One notice per contributor of a trajectory new in this release (account, or anonymous
    contact email), with a link to the list where they can take each out."""
    from apps.accounts.notices import notice_send

    rows = (
        ReleaseEntry.objects.filter(release=release, is_new=True)
        .values_list("trajectory__owner_id", "trajectory__contact_email")
        .distinct()
    )
    users: set[int] = set()
    emails: dict[str, str] = {}
    for owner_id, email in rows:
        if owner_id is not None:
            users.add(owner_id)
        elif email:
            emails.setdefault(email.strip().lower(), email)
    until = f"{release.opt_out_until:%Y-%m-%d %H:%M} UTC"
    reason = (
        f"Release {release.name} is announced. You can take any of your trajectories out of it "
        f"until {until}; after that it is published."
    )
    from apps.accounts.models import User

    for user in User.objects.filter(pk__in=users).order_by("pk"):
        notice_send(
            kind="release_announced",
            user=user,
            reason=reason,
            link=settings.SITE_URL + reverse("release-next"),
        )
    for email in emails.values():
        token = optout_token(release=release, email=email)
        notice_send(
            kind="release_announced",
            email=email,
            reason=reason,
            link=settings.SITE_URL + reverse("release-optout", args=[token]),
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


def _heartbeat(release: Release, step: str, progress: Progress | None) -> Callable[[int], None]:
    def beat(done: int) -> None:
        Release.objects.filter(pk=release.pk).update(
            progress_done=done, progress_total=release.num_rows, heartbeat_at=timezone.now()
        )
        if connection.vendor != "postgresql":
            # The cache lock expires on its own (a dead worker's must): keep ours alive.
            cache.touch(LOCK_KEY, settings.TRAJHUB_RELEASE_STALE_SECONDS)
        if progress is not None:
            progress(step, done, release.num_rows)

    return beat


def _publish(release: Release, *, progress: Progress | None) -> RunResult:
    """Build the files of `release` (building, or announced and due) and publish it."""
    if release.status == ReleaseStatus.ANNOUNCED:
        moved = Release.objects.filter(pk=release.pk, status=ReleaseStatus.ANNOUNCED).update(
            status=ReleaseStatus.BUILDING, heartbeat_at=timezone.now()
        )
        if not moved:
            return RunResult("busy", f"{release.name} changed state meanwhile; nothing done")
        release.refresh_from_db()
    _settle_entries(release)
    previous = release.previous if release.previous_id else None
    if previous is not None and not release.added_ids and not release.removed_ids:
        # Everything new was taken out (or left public()) during the window, or (removal-only)
        # what was removed came back: no release.
        name = release.name
        release.delete()
        return RunResult("nothing_new", f"{name}: nothing new left to publish")
    if (
        settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
        and release.num_rows > settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
    ):
        return _split(release)
    folder = Path(tempfile.mkdtemp(prefix=f"release-{release.version}-", dir=_build_dir()))
    try:
        written = write_release_files(
            release, folder, progress=_heartbeat(release, "rows", progress)
        )
        _finish(release, [_file_dict(f) for f in written], folder, progress=progress)
    except BaseException as exc:
        # KeyboardInterrupt and Celery's time limits too: nothing half-published stays.
        _fail(release, f"{type(exc).__name__}: {exc}")
        if isinstance(exc, Exception):
            logger.exception("release %s build failed", release.name)
            return RunResult(
                "failed", f"{release.name} failed: {type(exc).__name__}: {exc}", release
            )
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    release.refresh_from_db()
    kind = " (removal-only)" if release.removal_only else ""
    return RunResult(
        "published",
        f"{release.name} published{kind}: {release.num_rows} trajectories, "
        f"{len(release.added_ids)} added, {len(release.removed_ids)} removed",
        release,
    )


def _build_dir() -> str:
    path = Path(settings.TRAJHUB_RELEASE_BUILD_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _file_dict(written: WrittenFile) -> dict:
    return {
        "config": written.config,
        "path": written.path,
        "size": written.size,
        "sha256": written.sha256,
        "num_rows": written.num_rows,
        "num_bytes": written.num_bytes,
        "local": str(written.local),
    }


def _finish(
    release: Release, files: list[dict], folder: Path, *, progress: Progress | None
) -> None:
    """Upload what is not uploaded yet, write the card and then the manifest, and publish."""
    for number, item in enumerate(files, start=1):
        if item.get("local"):
            storage.upload(release.prefix, item["path"], Path(item["local"]))
        if progress is not None:
            progress("upload", number, len(files))
    written = [
        WrittenFile(
            config=item["config"],
            path=item["path"],
            local=Path(),
            size=item["size"],
            sha256=item["sha256"],
            num_rows=item["num_rows"],
            num_bytes=item.get("num_bytes", 0),
        )
        for item in files
    ]
    # The manifest lists what is on disk (the card has the Arrow sizes).
    public_files = [
        {k: v for k, v in item.items() if k not in ("local", "num_bytes")} for item in files
    ]
    published_at = timezone.now()
    release.published_at = published_at
    release.download_size = sum(item["size"] for item in public_files)
    previous = release.previous if release.previous_id else None
    cards.index_entries(release)
    card = cards.card_text(release, written, previous)
    readme = folder / "README.md"
    readme.write_text(card, encoding="utf-8")
    storage.upload(release.prefix, "README.md", readme)
    # LLaMA-Factory finds the synthesized examples' ShareGPT config by this entry.
    info = folder / "dataset_info.json"
    info.write_text(json.dumps(cards.llama_factory_info(), indent=2) + "\n", encoding="utf-8")
    storage.upload(release.prefix, "dataset_info.json", info)
    listed = [
        *public_files,
        _meta_file("README.md", readme),
        _meta_file("dataset_info.json", info),
    ]
    manifest = cards.manifest(release, listed, previous, published_at.isoformat())
    manifest_path = folder / "manifest.json"
    manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    # The manifest last: a reader that finds it finds every file it lists.
    storage.upload(release.prefix, "manifest.json", manifest_path)
    listed.append(_meta_file("manifest.json", manifest_path))
    with transaction.atomic():
        ReleaseFile.objects.filter(release=release).delete()
        ReleaseFile.objects.bulk_create(
            [
                ReleaseFile(
                    release=release,
                    config=item["config"],
                    path=item["path"],
                    size=item["size"],
                    sha256=item["sha256"],
                    num_rows=item["num_rows"],
                )
                for item in listed
            ]
        )
        published = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING).update(
            status=ReleaseStatus.PUBLISHED,
            published_at=published_at,
            card=card,
            download_size=release.download_size,
            progress_done=release.num_rows,
            progress_total=release.num_rows,
        )
        if not published:
            raise ReleaseError(f"{release.name} is no longer building; not published")
        # An announced release (a removal-only one was published during its window) is
        # published from this one: what it adds and removes is counted against the newest.
        Release.objects.filter(status=ReleaseStatus.ANNOUNCED, version__gt=release.version).update(
            previous=release
        )
    _supersede(release)


def _meta_file(path: str, local: Path) -> dict:
    return {
        "config": "",
        "path": path,
        "size": local.stat().st_size,
        "sha256": sha256_of(local),
        "num_rows": 0,
    }


def _supersede(newest: Release) -> None:
    """Older published releases holding a trajectory the newest left out (deleted, private,
    taken out since), or marked superseded already, are superseded by it; with
    TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED their files are deleted. The newest itself is checked
    too: a trajectory deleted while it was being written is in its files."""
    kept = ReleaseEntry.objects.filter(release=newest).values("share_id")
    older = Release.objects.filter(status=ReleaseStatus.PUBLISHED, version__lt=newest.version)
    now = timezone.now()
    for release in older:
        if (
            release.is_superseded
            or ReleaseEntry.objects.filter(release=release).exclude(share_id__in=kept).exists()
        ):
            Release.objects.filter(pk=release.pk).update(
                superseded_by=newest, superseded_at=release.superseded_at or now
            )
    release_mark_superseded(releases=[newest])
    if settings.TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED:
        release_take_down_superseded()


def release_take_down_superseded() -> int:
    """Delete the files of every superseded release (their rows, card and lists stay)."""
    count = 0
    for release in Release.objects.filter(
        status=ReleaseStatus.PUBLISHED, superseded_by__isnull=False, files_deleted=False
    ):
        storage.delete_prefix(release.prefix, list(release.files.values_list("path", flat=True)))
        Release.objects.filter(pk=release.pk).update(files_deleted=True)
        count += 1
    return count


# --- a build split across workers -----------------------------------------------------------


def _split(release: Release) -> RunResult:
    """Plan shards (id ranges of at most TRAJHUB_RELEASE_SHARD_TASK_ROWS trajectories and about
    TRAJHUB_RELEASE_SHARD_BYTES) and queue one task per shard; the last to finish publishes
    (release_shard_build)."""
    per = settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS
    limit = settings.TRAJHUB_RELEASE_SHARD_BYTES
    rows = (
        ReleaseEntry.objects.filter(release=release)
        .order_by("trajectory_id")
        .values_list("trajectory_id", "trajectory__num_bytes")
    )
    # A task's range: at most `per` trajectories and about one shard of raw uploads (the JSON
    # as shared, images in base64: usually more than the same rows take compressed in
    # Parquet), so that most tasks write one file per config. The estimate is no bound: a task
    # whose rows take more starts another file where the writer's limit says (and a
    # compressed upload's raw size says little).
    chunks: list[list[int]] = [[]]
    planned = 0
    for pk, size in rows:
        if chunks[-1] and (len(chunks[-1]) >= per or planned + (size or 0) > limit):
            chunks.append([])
            planned = 0
        chunks[-1].append(pk)
        planned += size or 0
    with transaction.atomic():
        ReleaseShard.objects.bulk_create(
            [
                ReleaseShard(release=release, index=index, first_id=chunk[0], last_id=chunk[-1])
                for index, chunk in enumerate(chunks)
            ]
        )
        Release.objects.filter(pk=release.pk).update(
            heartbeat_at=timezone.now(), progress_total=release.num_rows, progress_done=0
        )
        shard_ids = list(release.shards.values_list("pk", flat=True))
        release_shard = enqueue.task(SHARD_TASK)
        transaction.on_commit(lambda: [release_shard.delay(pk) for pk in shard_ids])
    return RunResult("sharded", f"{release.name}: building in {len(chunks)} shard tasks", release)


def _name_parts(release: Release, files: list[dict]) -> None:
    """Each config's parts, in order, renamed `train-0000i-of-0000N` (N: that config's)."""
    for config in row_schema.CONFIGS:
        mine = [item for item in files if item["config"] == config]
        for index, item in enumerate(mine):
            directory = item["path"].rsplit("/", 1)[0]
            final = f"{directory}/train-{index:05d}-of-{len(mine):05d}.parquet"
            storage.rename(release.prefix, item["path"], final)
            item["path"] = final


def _touch(release: Release) -> None:
    Release.objects.filter(pk=release.pk).update(heartbeat_at=timezone.now())


def release_shard_build(*, shard: ReleaseShard, worker: str = "") -> str:
    """Write one shard task's files, each config's at most TRAJHUB_RELEASE_SHARD_BYTES (as
    in a build in one process: the id range was planned from an estimate, the writer holds the
    bound), upload them as parts and record them on the shard row; the task that completes the
    last shard gives every part its name (`train-i-of-N`, N known now) and publishes."""
    claimed = ReleaseShard.objects.filter(
        pk=shard.pk, status=ReleaseShard.Status.PENDING, release__status=ReleaseStatus.BUILDING
    ).update(status=ReleaseShard.Status.RUNNING, worker=worker[:200])
    if not claimed:
        return "skipped"
    release = shard.release
    folder = Path(
        tempfile.mkdtemp(prefix=f"release-{release.version}-{shard.index}-", dir=_build_dir())
    )
    try:
        written = write_release_files(
            release,
            folder,
            first_id=shard.first_id,
            last_id=shard.last_id,
            progress=lambda done: _touch(release),
        )
        files = []
        parts: dict[str, int] = defaultdict(int)
        for item in written:
            directory = item.path.rsplit("/", 1)[0]
            path = f"{directory}/part-{shard.index:05d}-{parts[directory]:05d}.parquet"
            parts[directory] += 1
            storage.upload(release.prefix, path, item.local)
            files.append({**_file_dict(item), "path": path, "local": ""})
        ReleaseShard.objects.filter(pk=shard.pk).update(
            status=ReleaseShard.Status.DONE, files=files
        )
        # The page's progress: the rows of every shard done so far.
        rows = sum(item.num_rows for item in written if item.config == "default")
        Release.objects.filter(pk=release.pk).update(
            heartbeat_at=timezone.now(), progress_done=F("progress_done") + rows
        )
        with transaction.atomic():
            locked = Release.objects.select_for_update().get(pk=release.pk)
            remaining = locked.shards.exclude(status=ReleaseShard.Status.DONE).exists()
            if remaining or locked.status != ReleaseStatus.BUILDING:
                return "done"
            all_files = [
                item
                for files_of in locked.shards.order_by("index").values_list("files", flat=True)
                for item in files_of
            ]
            # Parts sort by shard, then by their order within it: the rows stay in id order.
            all_files.sort(
                key=lambda item: (list(row_schema.CONFIGS).index(item["config"]), item["path"])
            )
            _name_parts(locked, all_files)
            _finish(locked, all_files, folder, progress=None)
        return "published"
    except Exception as exc:
        logger.exception("release %s shard %s failed", release.name, shard.index)
        _fail(release, f"shard {shard.index}: {type(exc).__name__}: {exc}")
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
