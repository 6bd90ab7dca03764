"""Invalid events in an upload are reported (issue 11): the share is stored without them and the
answer says what was left out, by event index, instead of dropping them without a word."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from apps.trajectories.models import Trajectory

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).parent.parent / "samples"


def payload_with(*extra: tuple[int, dict]) -> dict:
    payload = json.loads((SAMPLES / "openhands_share_payload.json").read_text())
    for index, item in extra:
        payload["trajectory"].insert(index, item)
    return payload


def test_events_that_are_not_events_are_reported_by_index(client_as):
    body = payload_with((2, {"bogus": 1}), (5, {"action": ["run"]}))
    response = client_as(None).post(
        "/api/v1/trajectories", data=orjson.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201
    data = response.json()
    assert data["warnings"] == [
        {"where": "event 2", "message": "left out: event has neither 'action' nor 'observation'"},
        {"where": "event 5", "message": "left out: 'action' is an array, expected a string"},
    ]
    assert data["errors"] == []
    trajectory = Trajectory.objects.get(share_id=data["trajectories"][0]["id"])
    sample_events = len(
        json.loads((SAMPLES / "openhands_share_payload.json").read_text())["trajectory"]
    )
    assert trajectory.num_events == sample_events  # the rest stored whole


def test_known_websocket_noise_and_clean_uploads_warn_of_nothing(client_as):
    body = payload_with((1, {"token": "abc", "status": "ok"}))
    response = client_as(None).post(
        "/api/v1/trajectories", data=orjson.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201 and response.json()["warnings"] == []
    clean = client_as(None).post(
        "/api/v1/trajectories",
        data=(SAMPLES / "openhands_v0_events.json").read_bytes(),
        content_type="application/json",
    )
    assert clean.status_code == 201 and clean.json()["warnings"] == []
