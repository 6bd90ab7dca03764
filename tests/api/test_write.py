"""PATCH and DELETE through the API, for every kind of caller."""

from __future__ import annotations

import pytest

from apps.trajectories.models import Event, Tombstone, Trajectory
from tests.ingest_helpers import ingest, make_trajectory, storage_files, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]


@pytest.fixture
def callers(owner, other_user, moderator, staff):
    return {
        "anonymous": None,
        "owner": owner,
        "other_user": other_user,
        "moderator": moderator,
        "staff": staff,
    }


# --- PATCH ----------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_only_the_owner_patches(client_as, callers, owner, caller):
    trajectory = make_trajectory(owner=owner)
    response = client_as(callers[caller]).patch(
        f"{URL}/{trajectory.share_id}", {"title": "Renamed"}, format="json"
    )
    trajectory.refresh_from_db()
    if caller == "owner":
        assert response.status_code == 200 and response.json()["title"] == "Renamed"
        assert trajectory.title == "Renamed"
    else:
        assert response.status_code == 403
        assert "only the owner" in response.json()["error"]["message"]
        assert trajectory.title != "Renamed"


@pytest.mark.parametrize("caller", ["anonymous", "other_user"])
def test_patching_a_private_trajectory_one_cannot_see_is_404(client_as, callers, owner, caller):
    trajectory = make_trajectory(owner=owner, visibility="private")
    response = client_as(callers[caller]).patch(
        f"{URL}/{trajectory.share_id}", {"title": "x"}, format="json"
    )
    assert response.status_code == 404


def test_owner_makes_public_with_the_licence(client_as, owner, django_capture_on_commit_callbacks):
    trajectory = make_trajectory(owner=owner, visibility="private", review_state="approved")
    client = client_as(owner)
    path = f"{URL}/{trajectory.share_id}"
    refused = client.patch(path, {"visibility": "public"}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["where"] == "license_agreed"
    with django_capture_on_commit_callbacks(execute=True):  # new feedback text is rescanned
        response = client.patch(
            path,
            {
                "visibility": "public",
                "license_agreed": True,
                "polarity": "positive",
                "feedback_text": "ok",
            },
            format="json",
        )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["visibility"], body["license"], body["polarity"], body["feedback_text"]) == (
        "public",
        "MIT",
        "positive",
        "ok",
    )
    assert trajectory.share_id in {
        item["id"] for item in client_as(None).get(URL).json()["results"]
    }
    # and back to private: gone from the public list
    assert client.patch(path, {"visibility": "private"}, format="json").status_code == 200
    assert client_as(None).get(path).status_code == 404


@pytest.mark.parametrize(
    "body,where",
    [
        ({"visibility": "secret"}, "visibility"),
        ({"polarity": "meh"}, "polarity"),
        ({"title": "x" * 301}, "title"),
        ({"owner": "other"}, "owner"),
        ({}, ""),
    ],
)
def test_bad_patches_say_which_field(client_as, owner, body, where):
    trajectory = make_trajectory(owner=owner)
    response = client_as(owner).patch(f"{URL}/{trajectory.share_id}", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] and error.get("where", "") == where


def test_patch_with_a_non_object_body(client_as, owner):
    trajectory = make_trajectory(owner=owner)
    response = client_as(owner).patch(
        f"{URL}/{trajectory.share_id}", data=b"[1]", content_type="application/json"
    )
    assert response.status_code == 400
    response = client_as(owner).patch(
        f"{URL}/{trajectory.share_id}", data=b"{oops", content_type="application/json"
    )
    assert response.status_code == 400 and "JSON" in response.json()["error"]["message"]


# --- DELETE ---------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_owner_and_staff_delete_others_may_not(
    client_as, callers, owner, caller, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(callers[caller]).delete(f"{URL}/{trajectory.share_id}")
    if caller in ("owner", "staff"):
        assert response.status_code == 204
        assert not Trajectory.objects.filter(pk=trajectory.pk).exists()
        assert Event.objects.count() == 0
        assert Tombstone.objects.get().share_id == trajectory.share_id
        assert client_as(None).get(f"{URL}/{trajectory.share_id}").status_code == 404
    else:
        # Moderators hide rather than delete; hard deletion is for staff.
        assert response.status_code == 403
        assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_deletion_password_deletes_an_anonymous_private_share(
    client_as, private_storage, django_capture_on_commit_callbacks
):
    stored = ingest(v0_events(2)).stored[0]
    path = f"{URL}/{stored.trajectory.share_id}"
    client = client_as(None)
    assert client.get(path).status_code == 404  # private: not visible, but deletable
    wrong = client.delete(path, HTTP_X_DELETION_PASSWORD="not-the-password")
    # The same answer as an unknown id's (issue 6): a 403 said that this id exists.
    assert wrong.status_code == 404
    assert wrong.json()["error"] == {"message": "no trajectory with this id and deletion password"}
    assert Trajectory.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(path, HTTP_X_DELETION_PASSWORD=stored.password)
    assert response.status_code == 204
    assert Trajectory.objects.count() == Event.objects.count() == 0
    assert storage_files(private_storage) == []
    assert Tombstone.objects.get().reason == "password"
    assert client.delete(path, HTTP_X_DELETION_PASSWORD=stored.password).status_code == 404


def test_every_issued_password_deletes(client_as):
    first = ingest(v0_events(1), email="anon@example.org").stored[0]
    second = ingest(v0_events(2), email="anon@example.org").stored[0]
    assert first.trajectory.pk == second.trajectory.pk
    response = client_as(None).delete(
        f"{URL}/{first.trajectory.share_id}", HTTP_X_DELETION_PASSWORD=first.password
    )
    assert response.status_code == 204


def test_an_owned_trajectory_has_no_password_to_guess(client_as, owner):
    trajectory = make_trajectory(owner=owner)
    response = client_as(None).delete(f"{URL}/{trajectory.share_id}", HTTP_X_DELETION_PASSWORD="")
    assert response.status_code == 404
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
