"""POST /api/v1/trajectories: JSON bodies, multipart uploads, gzip, options, answers, callers."""

from __future__ import annotations

import gzip
import io

import orjson
import pytest

from apps.accounts.services import api_token_create
from apps.trajectories import services
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.dedup import session_digest
from tests.ingest_helpers import dumps, share_payload, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"


def post_json(client, value, *, query: str = "", **headers):
    body = value if isinstance(value, bytes) else dumps(value)
    return client.post(
        URL + (f"?{query}" if query else ""), data=body, content_type="application/json", **headers
    )


def test_anonymous_json_share_answers_201_with_a_password(client_as):
    response = post_json(client_as(None), v0_events(2))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["errors"] == []
    (item,) = body["trajectories"]
    assert len(item["id"]) == 64 and item["url"].endswith(f"/t/{item['id']}/")
    assert item["password"] and item["created"] is True
    assert item["num_events"] == 5 and item["visibility"] == "private"
    assert item["owner"] is None and item["source_format"] == "openhands_v0"
    trajectory = Trajectory.objects.get(share_id=item["id"])
    assert services.trajectory_check_password(trajectory=trajectory, password=item["password"])


def test_options_come_from_the_query_string_with_a_json_body(client_as, owner):
    response = post_json(
        client_as(owner),
        v0_events(1),
        query="visibility=public&license_agreed=true&polarity=positive&title=Mine"
        "&feedback_text=worked&session_id=abc",
    )
    assert response.status_code == 201, response.json()
    (item,) = response.json()["trajectories"]
    assert "password" not in item or item["password"] is None
    trajectory = Trajectory.objects.get(share_id=item["id"])
    assert (trajectory.owner, trajectory.visibility, trajectory.license) == (owner, "public", "MIT")
    assert (trajectory.polarity, trajectory.title, trajectory.feedback_text) == (
        "positive",
        "Mine",
        "worked",
    )
    # Kept only as an HMAC: the session id is the submitter's secret (services/dedup.py).
    assert trajectory.client_session_id == session_digest("abc") != "abc"


def test_multipart_upload_with_form_fields(client_as, owner, sample):
    data = sample("openhands_v0_events.json")
    upload = io.BytesIO(data)
    upload.name = "basic_interactions.json"
    response = client_as(owner).post(
        URL,
        {"file": upload, "visibility": "private", "title": "From a file", "polarity": "negative"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    trajectory = Trajectory.objects.get()
    assert (
        trajectory.title == "From a file" and trajectory.raw_filename == "basic_interactions.json"
    )
    assert services.raw_read(trajectory) == data  # byte-exact
    assert trajectory.num_events == 11


def test_multipart_gzip_file_is_inflated(client_as, owner):
    upload = io.BytesIO(gzip.compress(dumps(v0_events(2))))
    upload.name = "trajectory.json.gz"
    response = client_as(owner).post(URL, {"file": upload}, format="multipart")
    assert response.status_code == 201, response.json()
    assert Trajectory.objects.get().num_events == 5


def test_gzip_request_body(client_as):
    body = gzip.compress(dumps(v0_events(3)))
    response = post_json(client_as(None), body, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 201, response.json()
    assert Event.objects.count() == 7


def test_json_lines_with_a_bad_line_answers_207(client_as, owner):
    data = b"\n".join(
        [dumps(v0_events(1, task="a")), b'{"nope": 1}', dumps(v0_events(1, task="c"))]
    )
    response = client_as(owner).post(URL, data=data, content_type="application/x-ndjson")
    assert response.status_code == 207, response.json()
    body = response.json()
    assert [item["title"] for item in body["trajectories"]] == ["a", "c"]
    assert body["errors"][0]["where"].startswith("line 2") and body["errors"][0]["message"]


def test_nothing_stored_answers_400_with_each_error(client_as, owner):
    data = b"\n".join(
        [b'[{"action": "run", "args": 5}]', b'[{"observation": "run", "extras": []}]']
    )
    response = client_as(owner).post(URL, data=data, content_type="application/x-ndjson")
    assert response.status_code == 400
    body = response.json()
    assert body["trajectories"] == [] and len(body["errors"]) == 2
    assert body["error"]["message"] and body["error"]["where"].startswith("line 1")
    assert Trajectory.objects.count() == 0


def test_token_authenticated_share_belongs_to_the_token_owner(client, owner):
    _, secret = api_token_create(user=owner, name="cli")
    response = post_json(client, v0_events(1), HTTP_AUTHORIZATION=f"Token {secret}")
    assert response.status_code == 201
    assert Trajectory.objects.get().owner == owner
    assert response.json()["trajectories"][0].get("password") is None


def test_resharing_returns_the_same_id(client_as, owner):
    client = client_as(owner)
    first = post_json(client, v0_events(1)).json()["trajectories"][0]
    second = post_json(client, v0_events(2)).json()["trajectories"][0]
    assert second["id"] == first["id"] and second["created"] is False
    assert second["num_events"] == 5


def test_anonymous_reshare_with_the_same_email_gets_a_new_password(client_as):
    client = client_as(None)
    first = post_json(client, v0_events(1), query="email=me@example.org").json()["trajectories"][0]
    second = post_json(client, v0_events(2), query="email=me@example.org").json()["trajectories"][0]
    assert first["id"] == second["id"] and first["password"] != second["password"]
    trajectory = Trajectory.objects.get()
    for password in (first["password"], second["password"]):
        assert services.trajectory_check_password(trajectory=trajectory, password=password)


def test_session_user_needs_csrf(owner):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = post_json(client, v0_events(1))
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    assert Trajectory.objects.count() == 0


def test_anonymous_sharing_off_answers_403_but_accounts_still_share(client_as, owner, settings):
    settings.TRAJHUB_ANONYMOUS_SHARING = False
    response = post_json(client_as(None), v0_events(1))
    assert response.status_code == 403
    assert "anonymous sharing is turned off" in response.json()["error"]["message"]
    assert post_json(client_as(owner), v0_events(1)).status_code == 201


def test_anonymous_rate_limit_answers_429(client_as, settings):
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 2
    client = client_as(None)
    for task in ("a", "b"):
        assert post_json(client, v0_events(1, task=task)).status_code == 201
    response = post_json(client, v0_events(1, task="c"))
    assert response.status_code == 429
    assert "too many anonymous shares" in response.json()["error"]["message"]
    assert Trajectory.objects.count() == 2


def test_behind_a_proxy_the_rate_limit_counts_each_client(client_as, settings):
    """Behind TRAJHUB_TRUSTED_PROXIES proxies every request comes from the proxy's address: the
    limit must count the client the proxy saw, and a client cannot dodge it by forging the
    start of X-Forwarded-For."""
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 1
    settings.TRAJHUB_TRUSTED_PROXIES = 1
    client = client_as(None)

    def share(task, forwarded):
        return client.post(
            URL,
            orjson.dumps(v0_events(1, task=task)),
            content_type="application/json",
            REMOTE_ADDR="10.0.0.2",
            HTTP_X_FORWARDED_FOR=forwarded,
        )

    assert share("a", "198.51.100.7").status_code == 201
    assert share("b", "203.0.113.9").status_code == 201  # another client, same proxy
    assert share("c", "198.51.100.7").status_code == 429
    assert share("d", "1.2.3.4, 198.51.100.7").status_code == 429  # forged first entry


def test_moderator_and_staff_shares_are_their_own(client_as, moderator, staff):
    for user in (moderator, staff):
        response = post_json(client_as(user), v0_events(1, task=user.username))
        assert response.status_code == 201
        assert (
            Trajectory.objects.get(share_id=response.json()["trajectories"][0]["id"]).owner == user
        )


def test_share_payload_with_permissions_public_is_public_and_licensed(client_as):
    payload = share_payload(v0_events(1), permissions="public", email="")
    response = post_json(client_as(None), payload)
    assert response.status_code == 201
    trajectory = Trajectory.objects.get()
    assert trajectory.visibility == "public" and trajectory.license == "MIT"
    assert trajectory.source_format == "openhands_share"
    assert b'"email"' not in services.raw_read(trajectory)


def test_answer_is_json_even_for_the_browsable_api_accept_header(client_as):
    response = post_json(client_as(None), v0_events(1), HTTP_ACCEPT="text/html")
    assert response.status_code == 201
    assert orjson.loads(response.content)["trajectories"]
    response = client_as(None).get(URL + "/" + "0" * 64, HTTP_ACCEPT="text/html")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_a_failing_stored_listener_does_not_fail_the_share(
    client_as, django_capture_on_commit_callbacks, caplog
):
    from apps.trajectories.signals import trajectory_stored

    def broken(sender, **kwargs):
        raise ConnectionError("broker down")

    trajectory_stored.connect(broken)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = post_json(client_as(None), v0_events(1))
    finally:
        trajectory_stored.disconnect(broken)
    assert response.status_code == 201
    assert Trajectory.objects.count() == 1
    assert "broker down" in caplog.text
