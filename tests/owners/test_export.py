"""Download all my data: a zip built by a Celery task into storage, streamed, the account's only."""

from __future__ import annotations

import base64
import io
import json
import os
import tracemalloc
import zipfile

import orjson
import pytest
from django.test import Client

from apps.accounts.models import DataExport, Notice
from apps.accounts.services import api_token_create
from apps.owners.services.export import export_build, export_request
from tests.ingest_helpers import ingest_one, make_trajectory, v0_events

pytestmark = pytest.mark.django_db


def _request_and_build(client, capture):
    with capture(execute=True):
        response = client.post("/me/export/")
    assert response.status_code == 302
    return DataExport.objects.latest("created_at")


def _archive(response) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def test_the_archive_holds_every_trajectory_and_the_account(
    client, owner, other_user, private_storage, django_capture_on_commit_callbacks
):
    owner.email = "owner@example.org"
    owner.save()
    mine = [
        make_trajectory(owner=owner, visibility="private", task="my private task"),
        make_trajectory(owner=owner, visibility="public", task="my public task"),
    ]
    make_trajectory(owner=other_user, visibility="public", task="someone else's task")
    token, secret = api_token_create(user=owner, name="laptop")
    client.force_login(owner)

    export = _request_and_build(client, django_capture_on_commit_callbacks)
    assert export.state == "ready" and export.trajectories == 2 and export.size > 0
    page = client.get("/me/export/").content.decode()
    assert f"/me/export/{export.pk}/download" in page

    response = client.get(f"/me/export/{export.pk}/download")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response.streaming  # a FileResponse from storage, not bytes in memory
    archive = _archive(response)
    names = archive.namelist()
    for trajectory in mine:
        folder = f"trajectories/{trajectory.share_id}"
        assert any(name.startswith(f"{folder}/original/") for name in names)
        events = orjson.loads(archive.read(f"{folder}/openhands.json"))
        assert isinstance(events, list) and events
    account = json.loads(archive.read("account.json"))
    assert account["account"]["username"] == "owner"
    assert account["account"]["email"] == "owner@example.org"
    assert [t["name"] for t in account["api_tokens"]] == ["laptop"]
    assert {t["id"] for t in account["trajectories"]} == {t.share_id for t in mine}
    everything = b"".join(archive.read(name) for name in names)
    assert b"someone else's task" not in everything
    assert secret.encode() not in everything and token.key_hash.encode() not in everything
    # The account is told, with the link.
    notice = Notice.objects.get(user=owner, kind="export_ready")
    assert notice.link.endswith(f"/me/export/{export.pk}/download")


def test_only_the_account_holder_downloads_it(
    client, owner, other_user, moderator, staff, private_storage, django_capture_on_commit_callbacks
):
    make_trajectory(owner=owner)
    client.force_login(owner)
    export = _request_and_build(client, django_capture_on_commit_callbacks)
    url = f"/me/export/{export.pk}/download"
    assert Client().get(url).status_code == 302  # sign in first
    for user in (other_user, moderator, staff):
        viewer = Client()
        viewer.force_login(user)
        assert viewer.get(url).status_code == 404
        assert url not in viewer.get("/me/export/").content.decode()


def test_one_build_at_a_time_and_a_new_one_replaces_the_old(
    owner, private_storage, django_capture_on_commit_callbacks
):
    make_trajectory(owner=owner)
    first = export_request(user=owner)
    assert export_request(user=owner).pk == first.pk  # still pending: the same one
    export_build(export=first)
    assert export_build(export=first) is None  # delivered twice: built once
    first.refresh_from_db()
    old_file = private_storage / first.path
    assert old_file.exists()
    with django_capture_on_commit_callbacks(execute=True):
        second = export_request(user=owner)
        assert second.pk != first.pk
    second.refresh_from_db()
    assert second.state == "ready"
    assert list(DataExport.objects.values_list("pk", flat=True)) == [second.pk]
    assert not old_file.exists()


def _build_peak(owner) -> tuple[int, int]:
    export = export_request(user=owner)
    tracemalloc.start()
    try:
        export_build(export=export)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    export.refresh_from_db()
    return export.size, peak


def test_the_archive_is_streamed_to_disk_not_held_in_memory(owner, private_storage):
    # Trajectories of ~270 KB of incompressible text each. Memory holds one trajectory at a time:
    # an archive three times larger costs about the same peak.
    def share(count: int) -> None:
        for _ in range(count):
            events = v0_events(2)
            events[-1]["content"] = base64.b64encode(os.urandom(200_000)).decode()
            ingest_one(events, user=owner)

    share(1)
    small_size, small_peak = _build_peak(owner)
    share(2)
    large_size, large_peak = _build_peak(owner)
    assert large_size > 2.5 * small_size
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)


def test_a_failed_build_is_marked_and_leaves_no_file(owner, private_storage, monkeypatch):
    from apps.owners.services import export as module

    make_trajectory(owner=owner)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(module, "trajectory_export", broken)
    export = export_request(user=owner)
    with pytest.raises(RuntimeError):
        export_build(export=export)
    export.refresh_from_db()
    assert export.state == "failed"
    assert not any(private_storage.rglob("*.zip"))


def test_expired_archives_are_swept(
    owner, private_storage, settings, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    make_trajectory(owner=owner)
    export = export_request(user=owner)
    export_build(export=export)
    export.refresh_from_db()
    DataExport.objects.update(finished_at=timezone.now() - timedelta(days=8))
    out = io.StringIO()
    call_command("export_sweep", stdout=out)
    assert "1 expired export archive deleted" in out.getvalue()
    assert not (private_storage / export.path).exists()
