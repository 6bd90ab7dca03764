"""The releases page and API: list, detail with the rendered card, files with sizes and
checksums, downloads, ids added and removed; only published releases, to every kind of caller."""

from __future__ import annotations

import hashlib

import pytest

from apps.datasets import services
from apps.datasets.models import Release, ReleaseStatus
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
from tests.datasets.conftest import share
from tests.trajectories.test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]


@pytest.fixture
def published(release_storage, owner, other_user):
    first = share(user=owner, seed=11, screenshots=1)
    share(user=other_user, seed=12)
    services.release_run(force=True)
    trajectory_delete(trajectory=first)
    share(user=other_user, seed=13)
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    # A failed build is never shown.
    Release.objects.create(version=3, status=ReleaseStatus.FAILED, prefix="v3")
    return first


def _client(request, client, name):
    if name != "anonymous":
        client.force_login(request.getfixturevalue(name))
    return client


@pytest.mark.parametrize("caller", CALLERS)
def test_list_page_and_api(request, client, published, caller, django_assert_num_queries):
    client = _client(request, client, caller)
    page = client.get("/releases/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "v1" in html and "v2" in html and "v3" not in html
    assert "superseded" in html
    assert_csp_clean(html)
    with django_assert_num_queries(1 if caller == "anonymous" else 3):
        api = client.get("/api/v1/releases")
    results = api.json()["results"]
    assert [r["version"] for r in results] == [2, 1]
    assert results[1]["superseded"] is True and results[1]["superseded_by"] == 2
    assert results[0]["superseded"] is False and results[0]["num_removed"] == 1


@pytest.mark.parametrize("caller", CALLERS)
def test_detail_page_api_and_download(request, client, published, caller):
    client = _client(request, client, caller)
    api = client.get("/api/v1/releases/2")
    assert api.status_code == 200
    body = api.json()
    assert body["removed_ids"] == [published.share_id]
    assert len(body["added_ids"]) == 1 and body["card"].startswith("---\n")
    paths = {f["path"] for f in body["files"]}
    assert {"README.md", "manifest.json", "data/train-00000-of-00001.parquet"} <= paths
    for item in body["files"]:
        download = client.get(item["url"].removeprefix("http://127.0.0.1:8000"))
        assert download.status_code == 200, item["path"]
        content = b"".join(download.streaming_content)
        assert len(content) == item["size"]
        assert hashlib.sha256(content).hexdigest() == item["sha256"]
    page = client.get("/releases/2/")
    html = page.content.decode()
    assert page.status_code == 200 and published.share_id in html  # listed as removed
    assert "<h2>How it was cleaned</h2>" in html  # the card, rendered
    assert_csp_clean(html)
    for missing in ("/releases/3/", "/releases/9/", "/api/v1/releases/3"):
        assert client.get(missing).status_code == 404, missing
    assert client.get("/releases/2/files/data/../../etc/passwd").status_code == 404
    assert client.get("/releases/3/files/manifest.json").status_code == 404


def test_card_markdown_is_sanitized(release_storage, owner, client):
    trajectory = share(user=owner, seed=14)
    Trajectory.objects.filter(pk=trajectory.pk).update(agent="<script>alert(1)</script>")
    release = services.release_run(force=True).release
    html = client.get(f"/releases/{release.version}/").content.decode()
    assert "<script>alert(1)" not in html
    assert_csp_clean(html)


def test_list_page_shows_a_build_in_progress(client, release_storage):
    from django.utils import timezone

    Release.objects.create(
        version=1, prefix="v1", progress_done=250, progress_total=1000, heartbeat_at=timezone.now()
    )
    html = client.get("/releases/").content.decode()
    assert "Release v1 is being built" in html
    assert '<progress max="1000" value="250"></progress>' in html
    assert "250 of 1000 trajectories written" in html
    assert '<meta http-equiv="refresh" content="10">' in html
    assert_csp_clean(html)
    assert client.get("/releases/1/").status_code == 404  # not published: no page of its own
