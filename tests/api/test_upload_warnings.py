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


@pytest.mark.django_db(transaction=True)
def test_the_openhands_drop_in_carries_the_warnings_inside_body(live_server):
    """OpenHands' store_feedback() needs a 200 and its UI reads body.message, body.feedback_id
    and body.password: those stay as they were, the warnings come beside them."""
    import requests

    from apps.trajectories import services

    body = payload_with((2, {"bogus": 1}), (5, {"action": ["run"]}))
    response = requests.post(
        f"{live_server.url}/share_od_trajectory",
        headers={"Content-Type": "application/json"},
        json=body,
        timeout=30,
    )
    assert response.status_code == 200
    answer = json.loads(response.text)
    assert answer["statusCode"] == 200
    envelope = answer["body"]
    assert envelope["warnings"] == [
        {"where": "event 2", "message": "left out: event has neither 'action' nor 'observation'"},
        {"where": "event 5", "message": "left out: 'action' is an array, expected a string"},
    ]
    assert envelope["message"].startswith("Feedback submitted successfully")
    assert "2 events left out" in envelope["message"] and "event 2, event 5" in envelope["message"]
    trajectory = Trajectory.objects.get(share_id=envelope["feedback_id"])
    assert services.trajectory_check_password(trajectory=trajectory, password=envelope["password"])
    assert sorted(envelope) == ["feedback_id", "message", "password", "warnings"]


def test_a_clean_drop_in_share_has_no_warnings_and_the_plain_message(client_as):
    response = client_as(None).post(
        "/share_od_trajectory",
        data=(SAMPLES / "openhands_share_payload.json").read_bytes(),
        content_type="application/json",
    )
    assert response.status_code == 200
    envelope = response.json()["body"]
    assert envelope["warnings"] == []
    assert envelope["message"] == "Feedback submitted successfully"
