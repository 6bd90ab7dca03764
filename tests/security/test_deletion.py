"""Deletion, every way it can be asked for: the events, the raw upload, images nobody else refers
to and the scan's findings go at once; a tombstone stays; every surface answers 404 afterwards;
what another trajectory shares with it stays."""

from __future__ import annotations

import hashlib

import orjson
import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from apps.moderation.models import AuditAction, AuditEntry, Finding
from apps.trajectories.models import Event, Image, Tombstone, Trajectory, TrajectoryImage
from apps.trajectories.selectors.viewer import UNLOCKED_SESSION_KEY
from apps.trajectories.services import ShareOptions, trajectory_ingest
from tests.ingest_helpers import storage_files
from tests.trajectories.viewer_factories import data_url, png

pytestmark = pytest.mark.django_db

SHARED = png(shade=200)
SHARED_SHA = hashlib.sha256(SHARED).hexdigest()


def events(task: str, shade: int) -> list[dict]:
    return [
        {
            "id": 1,
            "source": "user",
            "action": "message",
            "args": {"content": f"{task}: mail bob.jones.leak@gmail.com"},
        },
        {"id": 2, "source": "agent", "action": "browse", "args": {"url": "https://example.org/"}},
        {
            "id": 3,
            "source": "environment",
            "cause": 2,
            "observation": "browse",
            "content": "page",
            "extras": {
                "url": "https://example.org/",
                "screenshot": data_url(png(shade=shade)),
                "set_of_marks": data_url(SHARED),
            },
        },
    ]


def share(owner, task: str, shade: int):
    result = trajectory_ingest(
        data=orjson.dumps(events(task, shade)),
        user=owner,
        options=ShareOptions(
            visibility="public", license_agreed=True, title=task, client_ip="10.55.0.1"
        ),
    )
    assert result.stored, result.errors
    return result.stored[0]


@pytest.fixture
def pair(private_storage, owner, other_user, django_capture_on_commit_callbacks):
    """Two public trajectories sharing one image; the first is the one to delete."""

    def make(route: str):
        with django_capture_on_commit_callbacks(execute=True):  # the scans run: findings
            doomed = share(None if route in ("password", "holder") else owner, "doomed", 1)
            kept = share(other_user, "kept", 2)
        doomed_trajectory = Trajectory.objects.get(pk=doomed.trajectory.pk)
        kept_trajectory = Trajectory.objects.get(pk=kept.trajectory.pk)
        for trajectory in (doomed_trajectory, kept_trajectory):
            Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
        return doomed_trajectory, kept_trajectory, doomed.password

    return make


def own_image(trajectory: Trajectory) -> Image:
    return Image.objects.get(
        trajectory_links__trajectory=trajectory, sha256__in=_shas(trajectory) - {SHARED_SHA}
    )


def _shas(trajectory: Trajectory) -> set[str]:
    return set(
        TrajectoryImage.objects.filter(trajectory=trajectory).values_list(
            "image__sha256", flat=True
        )
    )


def delete(route: str, trajectory: Trajectory, password: str, owner, django_user_model):
    """Ask for the deletion the way `route` does; return the HTTP status."""
    share_id = trajectory.share_id
    api = f"/api/v1/trajectories/{share_id}"
    client = Client()
    if route == "api owner":
        client.force_login(owner)
        return client.delete(api).status_code
    if route == "api staff":
        client.force_login(django_user_model.objects.create_user("del-staff", is_staff=True))
        return client.delete(api).status_code
    if route == "password":
        return client.delete(api, HTTP_X_DELETION_PASSWORD=password).status_code
    if route == "dashboard":
        client.force_login(owner)
        return client.post(reverse("me-delete", args=[share_id]), {"confirm": "yes"}).status_code
    if route == "holder":
        session = client.session
        session[UNLOCKED_SESSION_KEY] = [share_id]
        session.save()
        url = reverse("trajectory-holder-delete", args=[share_id])
        return client.post(url, {"password": password, "confirm": "yes"}).status_code
    if route == "admin":
        root = django_user_model.objects.create_superuser("del-root", password="x")
        client.force_login(root)
        url = reverse("admin:trajectories_trajectory_delete", args=[trajectory.pk])
        return client.post(url, {"post": "yes"}).status_code
    raise AssertionError(route)


ROUTES = {
    "api owner": 204,
    "api staff": 204,
    "password": 204,
    "dashboard": 302,
    "holder": 200,
    "admin": 302,
}
# Who the audit log names for each route (kind, username snapshot): never "the scan".
AUDITED_AS = {
    "api owner": ("owner", "owner"),
    "api staff": ("staff", "del-staff"),
    "password": ("holder", ""),
    "dashboard": ("owner", "owner"),
    "holder": ("holder", ""),
    "admin": ("staff", "del-root"),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_deletion_removes_everything_of_it_and_nothing_of_others(
    pair, route, owner, django_user_model, private_storage, django_capture_on_commit_callbacks
):
    doomed, kept, password = pair(route)
    share_id = doomed.share_id
    own, kept_own = own_image(doomed), own_image(kept)
    assert Finding.objects.filter(trajectory=doomed).exists()  # the scan found the address
    files_before = set(storage_files(private_storage))
    assert doomed.raw_path in files_before and own.path in files_before
    visitor = Client()
    assert visitor.get(f"/t/{share_id}/images/{own.sha256}").status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        status = delete(route, doomed, password, owner, django_user_model)
    assert status == ROUTES[route]

    # Gone: the row, its events, findings, image links, its own image (row and file), raw copy.
    assert not Trajectory.objects.filter(share_id=share_id).exists()
    assert not Event.objects.filter(trajectory_id=doomed.pk).exists()
    assert not Finding.objects.filter(trajectory_id=doomed.pk).exists()
    assert not TrajectoryImage.objects.filter(trajectory_id=doomed.pk).exists()
    assert not Image.objects.filter(pk=own.pk).exists()
    files_after = set(storage_files(private_storage))
    assert files_before - files_after == {doomed.raw_path, own.path}
    # Kept: a tombstone, the audit record, and all of the other trajectory (the shared image too).
    tombstone = Tombstone.objects.get(share_id=share_id)
    assert tombstone.was_public is True
    entry = AuditEntry.objects.get(share_id=share_id, action=AuditAction.DELETED)
    assert (entry.actor_kind, entry.actor_username) == AUDITED_AS[route]
    assert entry.actor_label != "the scan"
    assert Image.objects.filter(sha256=SHARED_SHA).exists()
    assert {kept.raw_path, kept_own.path} <= files_after
    assert Event.objects.filter(trajectory=kept).count() == 3

    # Every surface: 404 for the deleted one, even to staff; the other still shows its images.
    # Its page, since it had been public, answers 410 "deleted on <date>" and shows nothing of it.
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("del-viewer", is_staff=True))
    for client in (visitor, staff):
        gone = client.get(f"/t/{share_id}/")
        assert gone.status_code == 410
        assert "deleted on" in gone.content.decode() and "doomed" not in gone.content.decode()
        for url in (
            f"/t/{share_id}/events",
            f"/t/{share_id}/images/{own.sha256}",
            f"/t/{share_id}/images/{SHARED_SHA}",
            f"/api/v1/trajectories/{share_id}",
            f"/api/v1/trajectories/{share_id}/events",
            f"/api/v1/trajectories/{share_id}/download?format=original",
            f"/api/v1/trajectories/{share_id}/images/{SHARED_SHA}",
        ):
            assert client.get(url).status_code == 404, url
    for url in ("/feed.atom", "/sitemap-trajectories.xml", "/browse/?q=doomed", "/"):
        assert share_id not in visitor.get(url).content.decode(), url
    assert visitor.get(f"/t/{kept.share_id}/images/{SHARED_SHA}").status_code == 200
    assert visitor.get(f"/t/{kept.share_id}/images/{kept_own.sha256}").status_code == 200


def test_a_deleted_trajectory_is_not_revived_by_sharing_it_again(
    pair, owner, django_user_model, django_capture_on_commit_callbacks
):
    doomed, _, password = pair("api owner")
    with django_capture_on_commit_callbacks(execute=True):
        delete("api owner", doomed, password, owner, django_user_model)
    again = share(owner, "doomed", 1).trajectory
    assert again.share_id != doomed.share_id
    assert Client().get(f"/t/{doomed.share_id}/").status_code == 410  # deleted, not revived


@pytest.mark.parametrize("who", ["moderator", "staff_moderator", "other_user"])
def test_those_who_may_not_delete_leave_everything_in_place(
    pair, request, who, owner, django_capture_on_commit_callbacks
):
    if who == "staff_moderator":
        user = request.getfixturevalue("django_user_model").objects.create_user(
            "del-mod", is_staff=True
        )
        user.groups.add(Group.objects.get_or_create(name="moderators")[0])
    else:
        user = request.getfixturevalue(who)
    doomed, _, _ = pair("api owner")
    client = Client()
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.delete(f"/api/v1/trajectories/{doomed.share_id}").status_code == 403
        assert (
            client.post(
                reverse("me-delete", args=[doomed.share_id]), {"confirm": "yes"}
            ).status_code
            == 404
        )
    assert Trajectory.objects.filter(pk=doomed.pk).exists()
    assert not Tombstone.objects.filter(share_id=doomed.share_id).exists()
