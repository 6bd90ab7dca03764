"""Contributors hear of a release first: the announcement fixes its content, each contributor
gets one notice with a link listing theirs, can take any out within the window (for good, until
put back), and the release is published when the window ends without what was taken out or left
public() meanwhile."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from apps.accounts.models import Notice
from apps.datasets import services
from apps.datasets.models import OptOut, ReleaseStatus
from apps.trajectories.models import Trajectory
from tests.datasets.conftest import CONTACT_EMAIL, share

pytestmark = pytest.mark.django_db


@pytest.fixture
def window(settings, release_storage):
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    return release_storage


def manifest_ids(root, release) -> list[str]:
    return json.loads((root / release.prefix / "manifest.json").read_text())["added_ids"]


def test_announce_then_publish_after_the_window(
    window, owner, other_user, client, django_capture_on_commit_callbacks
):
    mine = [share(user=owner, seed=21), share(user=owner, seed=22)]
    theirs = share(user=other_user, seed=23)
    anonymous = share(user=None, seed=24, email=CONTACT_EMAIL)
    left = share(user=other_user, seed=25)

    with django_capture_on_commit_callbacks(execute=True):
        result = services.release_run(force=True)
    assert result.action == "announced", result.message
    release = result.release
    assert release.status == ReleaseStatus.ANNOUNCED
    # One notice per contributor, not per trajectory.
    notices = Notice.objects.filter(kind="release_announced")
    assert sorted(n.user_id or 0 for n in notices) == sorted([0, owner.pk, other_user.pk])
    assert all(n.link for n in notices)
    anonymous_notice = notices.get(user=None)
    assert "/releases/optout/" in anonymous_notice.link
    assert CONTACT_EMAIL in [to for message in mail.outbox for to in message.to]
    # Nothing visible yet.
    assert client.get("/api/v1/releases").json()["results"] == []
    assert services.release_run(force=True).action == "waiting"

    # The owner takes one out on the dashboard list.
    client.force_login(owner)
    page = client.get("/me/releases/").content.decode()
    assert mine[0].share_id in page and theirs.share_id not in page
    response = client.post("/me/releases/", {"id": mine[0].share_id, "action": "take_out"})
    assert response.status_code == 302
    # Someone else's trajectory cannot be taken out from here.
    assert client.post("/me/releases/", {"id": theirs.share_id}).status_code == 404
    client.logout()
    # The anonymous contributor takes theirs out through the emailed link.
    link = anonymous_notice.link.removeprefix("http://127.0.0.1:8000")
    assert anonymous.share_id in client.get(link).content.decode()
    assert client.post(link, {"id": theirs.share_id}).status_code == 404
    assert client.post(link, {"id": anonymous.share_id, "action": "take_out"}).status_code == 302
    # And one leaves public() meanwhile.
    Trajectory.objects.filter(pk=left.pk).update(visibility="private")

    later = timezone.now() + timedelta(days=8)
    result = services.release_run(now=later)
    assert result.action == "published", result.message
    assert sorted(manifest_ids(window, result.release)) == sorted(
        [mine[1].share_id, theirs.share_id]
    )
    # The link is dead once the release is out.
    assert client.get(link).status_code == 404

    # Taken out is for good (tested across releases below).
    assert OptOut.objects.filter(trajectory=mine[0]).exists()


def test_taken_out_stays_out_until_put_back(release_storage, owner, client):
    kept, out = share(user=owner, seed=31), share(user=owner, seed=32)
    client.force_login(owner)
    client.post("/me/releases/", {"id": out.share_id, "action": "take_out"})
    first = services.release_run(force=True).release
    assert manifest_ids(release_storage, first) == [kept.share_id]
    share(user=owner, seed=33)
    second = services.release_run(force=True).release
    assert out.share_id not in manifest_ids(release_storage, second)
    assert out.share_id not in second.entries.values_list("share_id", flat=True)
    client.post("/me/releases/", {"id": out.share_id, "action": "put_back"})
    third = services.release_run(force=True).release
    assert manifest_ids(release_storage, third) == [out.share_id]


def test_nothing_new_to_announce_publishes_at_once(window, owner):
    first = share(user=owner, seed=41)
    share(user=owner, seed=42)
    announced = services.release_run(force=True).release
    services.release_run(now=timezone.now() + timedelta(days=8))
    from apps.trajectories.services import trajectory_delete

    trajectory_delete(trajectory=first)
    # Only a removal: nobody to tell, so no window.
    result = services.release_run(force=True)
    assert result.action == "published" and result.release.removed_ids == [first.share_id]
    assert announced.version == 1


def test_no_window_with_zero_days(release_storage, owner):
    share(user=owner, seed=43)
    assert services.release_run(force=True).action == "published"


def test_a_link_with_a_bad_token_is_404(client):
    assert client.get("/releases/optout/forged").status_code == 404
    assert client.get("/me/releases/").status_code == 302  # sign in first


def test_an_announcement_that_reached_nobody_publishes_at_once(window):
    """Issue 20: `build_release --now` only announced, and nothing could publish before the
    window ended, even when no contributor had been told of one."""
    share(user=None, seed=31)  # anonymous, no contact address: nobody to tell
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    assert result.release.status == ReleaseStatus.PUBLISHED
    assert not Notice.objects.filter(kind="release_announced").exists()


def test_the_embedded_default_has_no_window(monkeypatch):
    """`make run` (no DATABASE_URL) publishes at once; production waits a week."""
    import importlib

    import config.settings as site_settings

    monkeypatch.delenv("TRAJHUB_RELEASE_OPT_OUT_DAYS", raising=False)
    monkeypatch.delenv("DJANGO_DEBUG", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    try:
        assert importlib.reload(site_settings).TRAJHUB_RELEASE_OPT_OUT_DAYS == 0
        monkeypatch.setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
        monkeypatch.setenv("DJANGO_SECRET_KEY", "test-only")
        assert importlib.reload(site_settings).TRAJHUB_RELEASE_OPT_OUT_DAYS == 7
    finally:
        monkeypatch.undo()
        importlib.reload(site_settings)
