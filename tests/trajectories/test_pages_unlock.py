"""The anonymous sharer's link-and-password page: /t/<id>/unlock (open) and /t/<id>/delete."""

from __future__ import annotations

import pytest

from apps.trajectories.models import Tombstone, Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.services.passwords import PASSWORD_ATTEMPTS as UNLOCK_ATTEMPTS
from apps.trajectories.views.site import UNLOCKED_SESSION_KEY
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def anonymous_share(sample):
    """A private trajectory shared without an account, and its deletion password."""
    result = trajectory_ingest(
        data=sample("openhands_v0_events.json"),
        user=None,
        options=ShareOptions(visibility="private", filename="basic.json"),
    )
    stored = result.stored[0]
    assert stored.password
    return stored.trajectory, stored.password


def test_the_form_is_the_same_for_any_id(client, anonymous_share):
    trajectory, _ = anonymous_share
    known = client.get(f"/t/{trajectory.share_id}/unlock")
    unknown = client.get(f"/t/{'0' * 64}/unlock")
    assert known.status_code == unknown.status_code == 200

    def normalise(response, share_id: str) -> str:
        html = response.content.decode().replace(share_id, "ID").replace(share_id[:16] + "…", "ID…")
        return "\n".join(line for line in html.splitlines() if "csrfmiddlewaretoken" not in line)

    # Apart from the id itself (and the CSRF token), nothing tells them apart.
    assert normalise(known, trajectory.share_id) == normalise(unknown, "0" * 64)
    html = known.content.decode()
    assert 'name="robots" content="noindex' in html
    assert f'action="/t/{trajectory.share_id}/unlock"' in html
    assert f'action="/t/{trajectory.share_id}/delete"' in html


def test_right_password_unlocks_for_this_session_and_redirects_to_the_page(client, anonymous_share):
    trajectory, password = anonymous_share

    response = client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})

    assert response.status_code == 302
    assert response["Location"] == f"/t/{trajectory.share_id}/"
    assert client.session[UNLOCKED_SESSION_KEY] == [trajectory.share_id]
    # Twice does not add it twice.
    client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert client.session[UNLOCKED_SESSION_KEY] == [trajectory.share_id]


def test_wrong_password_and_unknown_id_get_the_same_neutral_answer(client, anonymous_share):
    trajectory, password = anonymous_share
    other = make_trajectory(title="Someone's", visibility="private")

    answers = [
        client.post(f"/t/{trajectory.share_id}/unlock", {"password": "wrong"}),
        client.post(f"/t/{trajectory.share_id}/unlock", {"password": ""}),
        client.post(f"/t/{'f' * 64}/unlock", {"password": password}),
        client.post(f"/t/{other.share_id}/unlock", {"password": password}),  # no passwords at all
    ]

    for answer in answers:
        assert answer.status_code == 404
        assert "No trajectory matches this link and password" in answer.content.decode()
    assert UNLOCKED_SESSION_KEY not in client.session


def test_malformed_ids_are_not_routes(client):
    assert client.post("/t/not-an-id/unlock", {"password": "x"}).status_code == 404
    assert client.post(f"/t/{'A' * 64}/unlock", {"password": "x"}).status_code == 404


def test_unlock_attempts_are_rate_limited_per_address(client, anonymous_share):
    trajectory, password = anonymous_share
    for _ in range(UNLOCK_ATTEMPTS):
        assert client.post(f"/t/{'e' * 64}/unlock", {"password": "guess"}).status_code == 404

    blocked = client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert blocked.status_code == 429
    assert "Too many wrong passwords" in blocked.content.decode()
    assert int(blocked["Retry-After"]) > 0
    assert (
        client.post(
            f"/t/{trajectory.share_id}/delete", {"password": password, "confirm": "yes"}
        ).status_code
        == 429
    )
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()

    from_elsewhere = client.post(
        f"/t/{trajectory.share_id}/unlock", {"password": password}, REMOTE_ADDR="10.9.8.7"
    )
    assert from_elsewhere.status_code == 302


def test_delete_with_the_password(client, anonymous_share):
    trajectory, password = anonymous_share
    client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})

    response = client.post(
        f"/t/{trajectory.share_id}/delete", {"password": password, "confirm": "yes"}
    )

    assert response.status_code == 200
    assert "has been deleted" in response.content.decode()
    assert not Trajectory.objects.filter(share_id=trajectory.share_id).exists()
    assert Tombstone.objects.filter(share_id=trajectory.share_id, reason="password").exists()
    assert trajectory.share_id not in client.session.get(UNLOCKED_SESSION_KEY, [])
    # Gone: the password now opens nothing, with the same neutral answer.
    again = client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert again.status_code == 404


def test_delete_needs_the_confirmation_and_the_right_password(client, anonymous_share):
    trajectory, password = anonymous_share

    unconfirmed = client.post(f"/t/{trajectory.share_id}/delete", {"password": password})
    wrong = client.post(f"/t/{trajectory.share_id}/delete", {"password": "nope", "confirm": "yes"})
    via_get = client.get(f"/t/{trajectory.share_id}/delete")

    assert unconfirmed.status_code == 400
    assert "tick the box" in unconfirmed.content.decode()
    assert wrong.status_code == 404
    assert "No trajectory matches this link and password" in wrong.content.decode()
    assert via_get.status_code == 405
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_forms_are_csrf_protected(anonymous_share):
    from django.test import Client

    trajectory, password = anonymous_share
    client = Client(enforce_csrf_checks=True)
    assert (
        client.post(f"/t/{trajectory.share_id}/unlock", {"password": password}).status_code == 403
    )
    assert (
        client.post(
            f"/t/{trajectory.share_id}/delete", {"password": password, "confirm": "yes"}
        ).status_code
        == 403
    )
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_the_unlocked_holder_can_download_what_the_page_offers(client, anonymous_share, sample):
    trajectory, password = anonymous_share
    url = f"/api/v1/trajectories/{trajectory.share_id}/download"
    # Before unlocking, the private share does not exist for this browser.
    assert client.get(url, {"format": "original"}).status_code == 404
    client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})

    page = client.get(f"/t/{trajectory.share_id}/").content.decode()
    assert "download?format=original" in page and "download?format=openai" in page
    original = client.get(url, {"format": "original"})
    assert original.status_code == 200
    assert original.content == sample("openhands_v0_events.json")
    assert client.get(url, {"format": "openai"}).json()["messages"]
    # Another browser without the password still gets nothing.
    from django.test import Client

    assert Client().get(url, {"format": "openhands"}).status_code == 404
