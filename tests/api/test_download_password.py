"""GET /api/v1/trajectories/<id>/download with X-Deletion-Password: the anonymous holder (a
script, with no browser session) downloads the original; a wrong password, an unknown id and a
claimed share are one 404; failures count in the limit shared with DELETE and the unlock page."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.services.passwords import PASSWORD_ATTEMPTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def share(sample, private_storage):
    data = sample("openhands_v0_events.json")
    stored = trajectory_ingest(
        data=data, user=None, options=ShareOptions(visibility="private", filename="run.json")
    ).stored[0]
    return stored.trajectory, stored.password, data


def _get(share_id: str, password: str, fmt: str = "original"):
    return APIClient().get(
        f"/api/v1/trajectories/{share_id}/download",
        {"format": fmt},
        HTTP_X_DELETION_PASSWORD=password,
    )


def test_the_password_opens_the_original(share):
    trajectory, password, data = share
    response = _get(trajectory.share_id, password)
    assert response.status_code == 200 and response.content == data
    assert _get(trajectory.share_id, password, "openhands").status_code == 200


def test_wrong_unknown_and_claimed_are_one_404(share, owner):
    trajectory, password, _ = share
    wrong = _get(trajectory.share_id, "wrong")
    unknown = _get("0" * 64, password)
    assert wrong.status_code == unknown.status_code == 404
    assert wrong.json() == unknown.json()
    trajectory.owner = owner
    trajectory.save(update_fields=["owner"])
    assert _get(trajectory.share_id, password).status_code == 404


def test_guesses_are_limited(share):
    trajectory, password, _ = share
    for _ in range(PASSWORD_ATTEMPTS):
        _get(trajectory.share_id, "guess")
    response = _get(trajectory.share_id, password)
    assert response.status_code == 429 and response["Retry-After"]
