"""The OpenHands drop-in, driven the way OpenHands' store_feedback drives it.

openhands/server/data_models/feedback.py, `store_feedback(feedback)`:
    requests.post(FEEDBACK_URL, headers={"Content-Type": "application/json"},
                  json=feedback.model_dump())
    if response.status_code != 200: raise ValueError(...)
    return json.loads(response.text)   # handed to the browser, which reads body.feedback_id ...
"""

from __future__ import annotations

import json
import logging
import re

import orjson
import pytest
import requests
from django.test import Client

from apps.accounts.services import api_token_create
from apps.trajectories import services
from apps.trajectories.models import Event, Image, Trajectory
from tests.ingest_helpers import share_payload, storage_files, v0_events

pytestmark = pytest.mark.django_db

SHARE_ID = re.compile(r"^[0-9a-f]{64}$")


def store_feedback(url: str, feedback: dict) -> dict:
    """What OpenHands does with the share service (feedback.py, store_feedback)."""
    response = requests.post(url, headers={"Content-Type": "application/json"}, json=feedback)
    if response.status_code != 200:
        raise ValueError(f"Failed to store feedback: {response.text}")
    return json.loads(response.text)


def openhands_body(feedback: dict) -> bytes:
    """The exact bytes requests sends for json=feedback."""
    return requests.Request("POST", "http://x/", json=feedback).prepare().body


def post(client, feedback, path="/share_od_trajectory", **headers):
    body = feedback if isinstance(feedback, bytes) else openhands_body(feedback)
    return client.post(path, data=body, content_type="application/json", **headers)


@pytest.mark.django_db(transaction=True)
def test_openhands_store_feedback_against_a_live_server(live_server, made_fixture):
    feedback = orjson.loads(made_fixture("openhands_share_payload_with_screenshots.json"))
    answer = store_feedback(f"{live_server.url}/share_od_trajectory", feedback)
    assert answer["statusCode"] == 200
    body = answer["body"]
    assert body["message"] == "Feedback submitted successfully"
    assert SHARE_ID.match(body["feedback_id"]) and body["password"]
    trajectory = Trajectory.objects.get(share_id=body["feedback_id"])
    assert trajectory.visibility == "public" and trajectory.license == "MIT"  # "public" = licence
    assert trajectory.polarity == "positive" and trajectory.num_events == 13
    assert trajectory.source_format == "openhands_share"
    assert services.trajectory_check_password(trajectory=trajectory, password=body["password"])
    assert Image.objects.count() >= 1
    # The link OpenHands shows leads to the trajectory.
    link = requests.get(
        f"{live_server.url}/share?share_id={body['feedback_id']}", allow_redirects=False
    )
    assert link.status_code == 302 and link.headers["Location"] == f"/t/{body['feedback_id']}/"
    # The other path OpenHands forks use answers the same way.
    again = store_feedback(f"{live_server.url}/api/share", feedback)
    assert again["statusCode"] == 200 and SHARE_ID.match(again["body"]["feedback_id"])
    # The first was public, so its events and email prove nothing: a new trajectory in its
    # chain (a private one, shared before anyone saw it, would be continued).
    assert again["body"]["feedback_id"] != body["feedback_id"]
    assert (
        Trajectory.objects.get(share_id=again["body"]["feedback_id"]).chain_key
        == (body["feedback_id"])
    )


def test_current_payload_is_stored_without_email_in_the_raw_copy(client, private_storage):
    feedback = share_payload(v0_events(2), email="dev@example.org", permissions="private")
    response = post(client, feedback)
    assert response.status_code == 200
    body = response.json()["body"]
    trajectory = Trajectory.objects.get(share_id=body["feedback_id"])
    assert trajectory.visibility == "private" and trajectory.license == ""
    assert trajectory.polarity == "negative" and trajectory.contact_email == "dev@example.org"
    raw = services.raw_read(trajectory)
    assert b"dev@example.org" not in raw
    assert orjson.loads(raw)["trajectory"] == v0_events(2)


def test_a_later_share_of_the_same_conversation_updates_it(client):
    first = post(client, share_payload(v0_events(1))).json()["body"]
    second = post(client, share_payload(v0_events(3))).json()["body"]
    assert first["feedback_id"] == second["feedback_id"]
    assert first["password"] != second["password"]
    trajectory = Trajectory.objects.get()
    assert trajectory.num_events == 7
    for password in (first["password"], second["password"]):
        assert services.trajectory_check_password(trajectory=trajectory, password=password)


def test_old_websocket_payload_with_tokens_never_stores_them(client, private_storage, caplog):
    trajectory_items = [
        {"token": "eyJhbGciOiJIUzI1NiJ9.secret", "status": "ok"},
        {"action": "initialize", "args": {"LLM_MODEL": "gpt-4o", "AGENT": "CodeActAgent"}},
        {"action": "message", "args": {"content": "hi", "images_urls": []}},
        *v0_events(1),
        {"error": True, "message": "agent crashed"},
    ]
    feedback = {
        "version": "1.0",
        "email": "NOT_PROVIDED",
        "token": "eyJhbGciOiJIUzI1NiJ9.envelope",
        "feedback": "positive",
        "permissions": "private",
        "trajectory": trajectory_items,
    }
    with caplog.at_level(logging.DEBUG):
        response = post(client, feedback)
    assert response.status_code == 200, response.json()
    trajectory = Trajectory.objects.get()
    assert trajectory.polarity == "positive" and trajectory.contact_email == ""
    assert trajectory.model_name == "gpt-4o"
    stored = orjson.dumps(list(Event.objects.values())).decode()
    everything = (
        stored + services.raw_read(trajectory).decode() + str(list(Trajectory.objects.values()))
    )
    assert "eyJhbGciOiJIUzI1NiJ9" not in everything
    assert "eyJhbGciOiJIUzI1NiJ9" not in caplog.text


def test_email_never_reaches_the_logs(client, caplog):
    with caplog.at_level(logging.DEBUG):
        post(client, share_payload(v0_events(1), email="private.person@example.org"))
        post(client, b"{broken", path="/api/share")
    assert "private.person@example.org" not in caplog.text


@pytest.mark.parametrize(
    "feedback",
    [
        {"trajectory": v0_events(1)},  # nothing but the trajectory
        {"version": "", "email": "", "feedback": "negative", "trajectory": v0_events(1)},
        {
            "version": "1.0",
            "email": "x@example.org",
            "polarity": "positive",
            "trajectory": v0_events(1),
        },
    ],
)
def test_missing_optional_fields_are_fine(client, feedback):
    response = post(client, {**feedback, "version": feedback.get("version", "1.0")})
    assert response.status_code == 200, response.json()
    assert Trajectory.objects.get().visibility == "private"  # no permissions: private


def test_pseudo_items_of_third_party_scripts_are_skipped(client):
    items = [{"user": "fix it"}, {"step": 3}, *v0_events(1)]
    feedback = share_payload(items, email="eval@anon.com", token="hard-coded-jwt")
    response = post(client, feedback)
    assert response.status_code == 200
    assert Trajectory.objects.get().num_events == 3


@pytest.mark.parametrize(
    "body,status,fragment",
    [
        (b"{not json", 400, "not valid JSON"),
        (b"", 400, "empty"),
        (b"[1, 2]", 400, "share payload"),
        (orjson.dumps(share_payload(None)), 400, "the trajectory is empty"),
        (orjson.dumps(share_payload([])), 400, "the trajectory is empty"),
        (orjson.dumps(share_payload([1, 2])), 400, ""),
        (orjson.dumps(share_payload("abc")), 400, ""),
    ],
)
def test_bad_input_gets_the_envelope_with_a_4xx(client, private_storage, body, status, fragment):
    response = post(client, body)
    assert response.status_code == status
    answer = response.json()
    assert answer["statusCode"] == status and answer["body"]["message"]
    assert fragment in answer["body"]["message"]
    assert Trajectory.objects.count() == 0 and storage_files(private_storage) == []


def test_too_big_gets_413_envelope(client, settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 1_000
    response = post(client, share_payload(v0_events(20)))
    assert response.status_code == 413
    assert response.json()["statusCode"] == 413 and "limit" in response.json()["body"]["message"]


def test_get_is_refused_with_the_envelope(client):
    response = client.get("/share_od_trajectory")
    assert response.status_code == 405 and response.json()["statusCode"] == 405


def test_no_csrf_token_needed(private_storage):
    client = Client(enforce_csrf_checks=True)
    assert post(client, share_payload(v0_events(1))).status_code == 200


def test_rate_limit_and_disabled_anonymous_sharing(client, settings):
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 1
    assert post(client, share_payload(v0_events(1, task="a"), email="")).status_code == 200
    limited = post(client, share_payload(v0_events(1, task="b"), email=""))
    assert limited.status_code == 429 and limited.json()["statusCode"] == 429
    settings.TRAJHUB_ANONYMOUS_SHARING = False
    refused = post(client, share_payload(v0_events(1, task="c")))
    assert refused.status_code == 403 and "turned off" in refused.json()["body"]["message"]


def test_a_token_makes_the_share_the_accounts(client, owner):
    _, secret = api_token_create(user=owner)
    response = post(client, share_payload(v0_events(1)), HTTP_AUTHORIZATION=f"Token {secret}")
    assert response.status_code == 200
    assert response.json()["body"]["password"] == ""
    assert Trajectory.objects.get().owner == owner
    bad = post(client, share_payload(v0_events(1)), HTTP_AUTHORIZATION="Token wrong")
    assert bad.status_code == 401 and bad.json()["statusCode"] == 401


@pytest.mark.parametrize(
    "query,status",
    [
        ("share_id=" + "a" * 64, 302),
        ("feedback_id=" + "b" * 64, 302),
        ("share_id=nope", 404),
        ("", 404),
    ],
)
def test_share_link_redirects(client, query, status):
    response = client.get(f"/share?{query}")
    assert response.status_code == status
    if status == 302:
        assert re.fullmatch(r"/t/[0-9a-f]{64}/", response["Location"])
