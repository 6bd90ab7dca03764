"""Claiming an anonymous share into an account with its link and password."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.services.passwords import PASSWORD_ATTEMPTS
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def anonymous_share(sample):
    result = trajectory_ingest(
        data=sample("openhands_v0_events.json"),
        user=None,
        options=ShareOptions(visibility="private", email="sharer@example.org"),
    )
    stored = result.stored[0]
    return stored.trajectory, stored.password


def test_claim_with_link_and_password_makes_it_mine_and_the_password_stops_working(
    client, owner, anonymous_share
):
    trajectory, password = anonymous_share
    client.force_login(owner)
    link = f"http://testserver/t/{trajectory.share_id}/"
    response = client.post("/me/claim/", {"link": link, "password": password})
    assert response.status_code == 302 and response["Location"] == trajectory.get_absolute_url()
    trajectory.refresh_from_db()
    assert trajectory.owner == owner
    assert trajectory.deletion_password_hashes == [] and trajectory.contact_email == ""
    assert trajectory.share_id in client.get("/me/").content.decode()

    # The password opens nothing now: not the unlock page, not the API's DELETE.
    anonymous = Client()
    unlock = anonymous.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert unlock.status_code == 404
    delete = anonymous.delete(
        f"/api/v1/trajectories/{trajectory.share_id}", HTTP_X_DELETION_PASSWORD=password
    )
    assert delete.status_code == 404
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_the_bare_id_and_the_share_link_work_too(client, owner, anonymous_share):
    trajectory, password = anonymous_share
    client.force_login(owner)
    response = client.post(
        "/me/claim/", {"link": f"/share?share_id={trajectory.share_id}", "password": password}
    )
    assert response.status_code == 302
    trajectory.refresh_from_db()
    assert trajectory.owner == owner


def test_wrong_password_unknown_id_and_an_owned_share_get_one_answer(
    client, owner, other_user, anonymous_share
):
    trajectory, password = anonymous_share
    owned = make_trajectory(owner=other_user)
    client.force_login(owner)
    answers = [
        client.post("/me/claim/", {"link": trajectory.share_id, "password": "wrong"}),
        client.post("/me/claim/", {"link": "0" * 64, "password": password}),
        client.post("/me/claim/", {"link": owned.share_id, "password": password}),
        client.post("/me/claim/", {"link": "not a link", "password": password}),
    ]
    assert {answer.status_code for answer in answers} == {404}
    assert len({answer.content.decode().count("do not open") for answer in answers}) == 1
    trajectory.refresh_from_db()
    owned.refresh_from_db()
    assert trajectory.owner is None and owned.owner == other_user


def test_a_claimed_share_cannot_be_claimed_again(client, owner, other_user, anonymous_share):
    trajectory, password = anonymous_share
    client.force_login(owner)
    client.post("/me/claim/", {"link": trajectory.share_id, "password": password})
    client.force_login(other_user)
    response = client.post("/me/claim/", {"link": trajectory.share_id, "password": password})
    assert response.status_code == 404
    trajectory.refresh_from_db()
    assert trajectory.owner == owner


def test_guessing_is_limited_per_account(client, owner, other_user, anonymous_share):
    trajectory, password = anonymous_share
    client.force_login(owner)
    for _ in range(PASSWORD_ATTEMPTS):
        client.post("/me/claim/", {"link": trajectory.share_id, "password": "guess"})
    response = client.post("/me/claim/", {"link": trajectory.share_id, "password": password})
    assert response.status_code == 429 and response["Retry-After"]
    trajectory.refresh_from_db()
    assert trajectory.owner is None
    # Another account behind the same client address is not locked out by those guesses.
    other = Client()
    other.force_login(other_user)
    response = other.post("/me/claim/", {"link": trajectory.share_id, "password": password})
    assert response.status_code == 302
    trajectory.refresh_from_db()
    assert trajectory.owner == other_user


def test_sign_in_first(client, anonymous_share):
    trajectory, password = anonymous_share
    response = client.post("/me/claim/", {"link": trajectory.share_id, "password": password})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    trajectory.refresh_from_db()
    assert trajectory.owner is None


def test_the_unlock_page_offers_the_claim(client, anonymous_share):
    trajectory, _ = anonymous_share
    html = client.get(f"/t/{trajectory.share_id}/unlock").content.decode()
    assert f"/me/claim/?link={trajectory.share_id}" in html
