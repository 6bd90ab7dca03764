"""When the data under a published release changes (a trajectory in it deleted, made private,
hidden or taken out): the release is superseded on its page and in the API at once, one
removal-only build is queued for many changes, and it publishes at once, so the superseded
release points to a newest that leaves them out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.datasets import services, tasks
from apps.datasets.models import Release, ReleaseStatus
from apps.moderation.services.decisions import trajectory_hide
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete, trajectory_update
from tests.datasets.conftest import share

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """The removal builds queued (their countdown), instead of running them eagerly."""
    calls: list[int] = []
    monkeypatch.setattr(
        tasks.release_removals,
        "apply_async",
        lambda countdown=None, **kwargs: calls.append(countdown),
    )
    return calls


@pytest.fixture
def released(release_storage, owner, other_user):
    trajectories = [share(user=owner, seed=seed) for seed in (31, 32, 33)]
    trajectories.append(share(user=other_user, seed=34))
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    return result.release, trajectories


def _text(response) -> str:
    return " ".join(response.content.decode().split())


def _api(client, version: int) -> dict:
    return client.get(f"/api/v1/releases/{version}").json()


def test_a_deletion_supersedes_at_once_and_many_changes_queue_one_build(
    released, queued, client, settings, moderator, django_capture_on_commit_callbacks
):
    settings.TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS = 120
    first, (gone, private, hidden, kept) = released
    assert _api(client, 1)["superseded"] is False

    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=gone)
    # At once, before any build: the page and the API say so.
    body = _api(client, 1)
    assert body["superseded"] is True and body["superseded_by"] is None
    assert body["superseded_at"] is not None
    page = client.get("/releases/1/").content.decode()
    assert "Superseded" in page and "A release without them is being built" in page
    assert queued == [120]

    # More changes while the build waits: no second build queued.
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=private, visibility="private")
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_hide(trajectory=hidden, moderator=moderator, note="off-topic")
    assert queued == [120]
    first.refresh_from_db()
    assert first.superseded_at is not None and first.superseded_by_id is None

    # The queued task runs: a removal-only release, published at once, nobody told.
    assert tasks.release_removals() == "published"
    second = Release.objects.get(version=2)
    assert second.status == ReleaseStatus.PUBLISHED and second.removal_only
    assert second.added_ids == []
    assert second.removed_ids == sorted([gone.share_id, private.share_id, hidden.share_id])
    assert list(second.entries.values_list("share_id", flat=True)) == [kept.share_id]
    assert "A removal-only release: v1 less the 3 trajectories" in second.card
    first.refresh_from_db()
    assert first.superseded_by_id == second.pk
    body = _api(client, 1)
    assert body["superseded"] is True and body["superseded_by"] == 2
    assert _api(client, 2)["superseded"] is False and _api(client, 2)["removal_only"] is True
    page = client.get("/releases/1/").content.decode()
    assert 'Use the newest release, <a href="/releases/2/">v2</a>' in page
    assert "removal-only" in client.get("/releases/").content.decode()

    # The removal build does not move the regular schedule: the next one is due a week after
    # v1, and a change after the build queues a build of its own.
    assert services.release_run().action == "not_due"
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=kept)
    assert queued == [120, 120]
    second.refresh_from_db()
    assert second.superseded_at is not None


def test_a_change_that_is_undone_before_the_build_unmarks_the_release(
    released, queued, client, django_capture_on_commit_callbacks
):
    first, (flipped, *_rest) = released
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=flipped, visibility="private")
    assert _api(client, 1)["superseded"] is True
    # Made public again (as approved as before) before the queued build ran.
    Trajectory.objects.filter(pk=flipped.pk).update(visibility="public")
    assert tasks.release_removals() == "nothing_new"
    assert list(Release.objects.values_list("version", flat=True)) == [1]
    assert _api(client, 1)["superseded"] is False


def test_taking_a_released_trajectory_out_supersedes_the_release(
    released, queued, owner, django_capture_on_commit_callbacks
):
    first, (taken, *_rest) = released
    with django_capture_on_commit_callbacks(execute=True):
        services.trajectory_take_out(trajectory=taken, by=owner)
    first.refresh_from_db()
    assert first.is_superseded and queued
    assert services.release_run(removals_only=True).release.removed_ids == [taken.share_id]


def test_an_unsignalled_deletion_is_found_by_the_scheduled_run(released, queued):
    first, (gone, *_rest) = released
    # No on-commit callbacks run here: no signal, as for a deletion by cascade.
    Trajectory.objects.filter(pk=gone.pk).delete()
    assert not queued
    result = services.release_run()  # the beat's run: not due, but a removal is
    assert result.action == "published" and result.release.removal_only, result.message
    assert result.release.removed_ids == [gone.share_id]
    first.refresh_from_db()
    assert first.superseded_by_id == result.release.pk


def test_a_release_announced_with_a_window_gets_a_removal_only_release_first(
    released, queued, settings, other_user
):
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    first, (gone, *_rest) = released
    Trajectory.objects.filter(pk=gone.pk).delete()
    new = share(user=other_user, seed=35)
    result = services.release_run(force=True, now=timezone.now() + timedelta(days=8))
    assert result.action == "announced", result.message
    assert result.message.startswith("v2 published (removal-only): 3 trajectories, 0 added")
    removal, announced = Release.objects.get(version=2), Release.objects.get(version=3)
    assert removal.status == ReleaseStatus.PUBLISHED and removal.removed_ids == [gone.share_id]
    assert announced.status == ReleaseStatus.ANNOUNCED and announced.previous_id == removal.pk
    assert new.share_id in announced.entries.values_list("share_id", flat=True)
    first.refresh_from_db()
    assert first.superseded_by_id == removal.pk


def test_a_deletion_while_the_newest_was_built_supersedes_it_after_publishing(
    release_storage, owner, queued, monkeypatch
):
    trajectories = [share(user=owner, seed=seed) for seed in (41, 42)]
    from apps.datasets.services import run

    real = run.write_release_files

    def delete_meanwhile(release, folder, **kwargs):
        written = real(release, folder, **kwargs)
        Trajectory.objects.filter(pk=trajectories[0].pk).delete()  # in the file already
        return written

    monkeypatch.setattr(run, "write_release_files", delete_meanwhile)
    release = services.release_run(force=True).release
    release.refresh_from_db()
    assert release.status == ReleaseStatus.PUBLISHED and release.superseded_at is not None
    assert queued


def test_a_deletion_during_an_announced_window_publishes_a_removal_only_release_at_once(
    released, queued, settings, other_user, client, django_capture_on_commit_callbacks
):
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    first, (gone, later_gone, *_rest) = released
    new = share(user=other_user, seed=36)
    announced = services.release_run(force=True, now=timezone.now() + timedelta(days=8))
    assert announced.action == "announced" and announced.release.version == 2

    # During the window a trajectory of v1 is deleted: it leaves the published files now, not
    # when the window ends.
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=gone)
    assert tasks.release_removals() == "published"
    removal = Release.objects.get(removal_only=True)
    assert removal.status == ReleaseStatus.PUBLISHED and removal.removed_ids == [gone.share_id]
    first.refresh_from_db()
    assert first.superseded_by_id == removal.pk
    assert _api(client, 1)["superseded_by"] == removal.version
    # The removal-only release took the announced number; the announced release the next,
    # and every page and the API say what it was announced as.
    pending = Release.objects.get(status=ReleaseStatus.ANNOUNCED)
    assert (removal.version, pending.version, pending.announced_as) == (2, 3, 2)
    assert pending.previous_id == removal.pk and pending.prefix.rstrip("/").endswith("v3")
    assert "Release v3 (announced as v2," in _text(client.get("/releases/"))
    assert _api(client, 2)["removal_only"] is True
    client.force_login(other_user)
    assert "Release v3 is announced (announced as v2:" in _text(client.get("/me/releases/"))
    client.logout()

    # A second deletion in the window: another removal-only release, from the first.
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=later_gone)
    result = services.release_run(removals_only=True)
    assert result.action == "published", result.message
    assert "v4 stays announced" in result.message
    assert (result.release.version, result.release.previous_id) == (3, removal.pk)
    pending.refresh_from_db()
    assert (pending.version, pending.announced_as, pending.previous_id) == (4, 2, result.release.pk)

    # The window ends: the announced release is published after them, from the newest, without
    # either deleted trajectory, and is the newest.
    published = services.release_run(now=timezone.now() + timedelta(days=16)).release
    assert published.pk == pending.pk and published.status == ReleaseStatus.PUBLISHED
    assert published.added_ids == [new.share_id] and published.removed_ids == []
    held = set(published.entries.values_list("share_id", flat=True))
    assert gone.share_id not in held and later_gone.share_id not in held
    assert "It was announced as v2" in published.card
    assert client.get("/api/v1/releases").json()["results"][0]["version"] == 4
    assert _api(client, 4)["announced_as"] == 2
    assert "Announced as v2: a removal-only release" in _text(client.get("/releases/4/"))
    assert Release.objects.get(version=3).superseded_by_id is None
