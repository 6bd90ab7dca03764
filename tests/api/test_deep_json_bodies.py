"""Every JSON body of the API goes through one nesting guard (TRAJHUB_MAX_JSON_DEPTH).

DRF's JSONParser handed a body 5,000 levels deep to `json.load`, whose RecursionError was a 500
on POST /api/v1/retrieve, the report and takedown requests and PATCH of a trajectory. Each JSON
endpoint now answers 400 naming the limit, and the server keeps serving.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.test import APIClient

from apps.trajectories.api.parsers import DepthCheckedJSONParser
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import dumps, make_trajectory, v0_events

pytestmark = pytest.mark.django_db

DEPTH = 5_000


def deep(levels: int = DEPTH) -> bytes:
    return b"[" * levels + b"]" * levels


def deep_object(levels: int = DEPTH) -> bytes:
    return b'{"a": ' * levels + b"1" + b"}" * levels


def anonymous() -> APIClient:
    client = APIClient(REMOTE_ADDR="10.9.0.7")
    client.raise_request_exception = False
    return client


def message_of(response) -> str:
    answer = response.json()
    if "statusCode" in answer:  # the OpenHands drop-in's own shape
        return answer["body"]["message"]
    return answer["error"]["message"]


def assert_serves_on(client: APIClient) -> None:
    assert client.get("/api/v1/trajectories").status_code == 200
    assert (
        client.post(
            "/api/v1/trajectories", data=dumps(v0_events(1)), content_type="application/json"
        ).status_code
        == 201
    )


@pytest.fixture
def public_trajectory(owner) -> Trajectory:
    return make_trajectory(owner=owner)


@pytest.mark.parametrize("body", [deep(), deep_object()], ids=["arrays", "objects"])
@pytest.mark.parametrize(
    "endpoint", ["retrieve", "reports", "takedowns", "patch-anonymous", "patch-owner"]
)
def test_a_deep_body_is_a_400_naming_the_limit(
    endpoint, body, public_trajectory, owner, private_storage
):
    client = anonymous()
    share_id = public_trajectory.share_id
    if endpoint == "retrieve":
        response = client.post("/api/v1/retrieve", data=body, content_type="application/json")
    elif endpoint in ("reports", "takedowns"):
        response = client.post(
            f"/api/v1/trajectories/{share_id}/{endpoint}",
            data=body,
            content_type="application/json",
        )
    else:
        if endpoint == "patch-owner":
            client.force_authenticate(user=owner)
        response = client.patch(
            f"/api/v1/trajectories/{share_id}", data=body, content_type="application/json"
        )
    if endpoint == "patch-anonymous" and response.status_code == 403:
        # Refused before the body is read: no parse at all, which is as good.
        assert "owner" in message_of(response)
    else:
        assert response.status_code == 400, response.content[:300]
        assert response["Content-Type"] == "application/json"
        expected = f"JSON nested deeper than {settings.TRAJHUB_MAX_JSON_DEPTH} levels"
        assert message_of(response) == expected
    public_trajectory.refresh_from_db()
    assert public_trajectory.title != "a"
    assert_serves_on(client)


@pytest.mark.parametrize(
    "path",
    ["/api/v1/trajectories", "/api/v1/trajectories/preview", "/share_od_trajectory"],
)
def test_the_upload_endpoints_keep_their_own_depth_answer(path, private_storage):
    client = anonymous()
    body = deep() if path != "/share_od_trajectory" else b'{"trajectory": ' + deep() + b"}"
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "nested" in message_of(response)
    assert_serves_on(client)


def test_the_parser_takes_the_limit_and_refuses_one_level_more(settings):
    import io

    settings.TRAJHUB_MAX_JSON_DEPTH = 10
    parser = DepthCheckedJSONParser()
    assert parser.parse(io.BytesIO(deep(10))) == eval("[" * 10 + "]" * 10)
    with pytest.raises(ParseError, match="JSON nested deeper than 10 levels"):
        parser.parse(io.BytesIO(deep(11)))
    with pytest.raises(ParseError, match="JSON parse error"):
        parser.parse(io.BytesIO(b"{nope"))


def test_an_ordinary_json_body_still_works(owner, public_trajectory):
    client = APIClient()
    client.force_authenticate(user=owner)
    response = client.patch(
        f"/api/v1/trajectories/{public_trajectory.share_id}", {"title": "Renamed"}, format="json"
    )
    assert response.status_code == 200 and response.json()["title"] == "Renamed"
