"""Every bad input of issue 2 gets a 4xx JSON error saying what and where, and stores nothing."""

from __future__ import annotations

import gzip
import io

import pytest
from django.test import RequestFactory

from apps.trajectories.api.views import TrajectoryListView
from apps.trajectories.models import Event, Image, Trajectory
from tests.ingest_helpers import data_url, dumps, png_bytes, storage_files, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"


def with_image(events: list[dict]) -> list[dict]:
    """Events carrying a screenshot, so a half-stored upload would leave an image file."""
    events[0]["args"]["image_urls"] = [data_url(png_bytes((7, 7, 7)))]
    return events


def bad_field_events():
    events = with_image(v0_events(1))
    events[2]["content"] = "x" * 3000
    return dumps(events)


def deep_json() -> bytes:
    return b"[" * 100_000 + b"]" * 100_000


CASES = [
    # (name, body, content type, extra headers, query, status, message fragment, where fragment)
    ("not JSON", b"{not json", "application/json", {}, "", 400, "not valid JSON", "line 1"),
    ("invalid UTF-8", b'["\xff\xfe"]', "application/json", {}, "", 400, "UTF-8", "body"),
    ("empty body", b"", "application/json", {}, "", 400, "empty", "body"),
    (
        "wrong content type",
        dumps(v0_events(1)),
        "text/html",
        {},
        "",
        415,
        "Content-Type 'text/html' is not accepted",
        "Content-Type",
    ),
    (
        "form-encoded body",
        b"a=1",
        "application/x-www-form-urlencoded",
        {},
        "",
        415,
        "is not accepted",
        "Content-Type",
    ),
    (
        "unknown format name",
        dumps(v0_events(1)),
        "application/json",
        {},
        "format=nope",
        400,
        "unknown format 'nope'",
        "format",
    ),
    (
        "unknown shape",
        b'{"hello": "world"}',
        "application/json",
        {},
        "",
        400,
        "no known trajectory format",
        "body",
    ),
    (
        "events that are not objects",
        dumps([*with_image(v0_events(1)), 5, "text"]),
        "application/json",
        {},
        "",
        400,
        "not an object",
        "event 3",
    ),
    (
        "missing required fields",
        dumps([*with_image(v0_events(1)), {"id": 9, "source": "agent"}]),
        "application/json",
        {},
        "",
        400,
        "neither 'action' nor 'observation'",
        "event 3",
    ),
    (
        "missing field of a named format",
        b'{"conversations": [{"from": "human"}]}',
        "application/json",
        {},
        "format=sharegpt",
        400,
        "no 'value'",
        "message 0",
    ),
    (
        "body over the limit",
        dumps(with_image(v0_events(700))),
        "application/json",
        {},
        "",
        413,
        "over the limit",
        "body",
    ),
    (
        "gzip bomb",
        gzip.compress(b" " * 5_000_000 + dumps(v0_events(1))),
        "application/json",
        {"HTTP_CONTENT_ENCODING": "gzip"},
        "",
        413,
        "inflates past the limit",
        "body",
    ),
    (
        "broken gzip",
        b"\x1f\x8b\x08\x00garbage",
        "application/json",
        {"HTTP_CONTENT_ENCODING": "gzip"},
        "",
        400,
        "gzip",
        "body",
    ),
    (
        "unsupported encoding",
        dumps(v0_events(1)),
        "application/json",
        {"HTTP_CONTENT_ENCODING": "br"},
        "",
        415,
        "Content-Encoding 'br'",
        "Content-Encoding",
    ),
    ("nesting 100,000 deep", deep_json(), "application/json", {}, "", 400, "nested", "body"),
    (
        "more events than the limit",
        dumps(with_image(v0_events(30))),
        "application/json",
        {},
        "",
        400,
        "events, over the limit of 50",
        "body",
    ),
    (
        "a field over the limit",
        bad_field_events(),
        "application/json",
        {},
        "",
        400,
        "field 'content' is 3,000 bytes, over the limit of 2,000",
        "body",
    ),
    (
        "public without the licence",
        dumps(v0_events(1)),
        "application/json",
        {},
        "visibility=public",
        400,
        "licence",
        "license_agreed",
    ),
    (
        "unknown visibility",
        dumps(v0_events(1)),
        "application/json",
        {},
        "visibility=secret",
        400,
        "not a valid choice",
        "visibility",
    ),
]


@pytest.fixture
def small_limits(settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 300_000  # the 100,000-deep document is 200 KB
    settings.TRAJHUB_MAX_DECOMPRESSED_BYTES = 1_000_000
    settings.TRAJHUB_MAX_EVENTS = 50
    settings.TRAJHUB_MAX_FIELD_BYTES = 2_000
    settings.TRAJHUB_MAX_JSON_DEPTH = 50


@pytest.mark.parametrize(
    "name,body,content_type,headers,query,status,message,where",
    CASES,
    ids=[case[0] for case in CASES],
)
def test_bad_input_is_refused_clearly_and_stores_nothing(
    client_as,
    small_limits,
    private_storage,
    name,
    body,
    content_type,
    headers,
    query,
    status,
    message,
    where,
):
    client = client_as(None)
    if name == "body over the limit":
        assert len(body) > 300_000
    response = client.post(
        URL + (f"?{query}" if query else ""), data=body, content_type=content_type, **headers
    )
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert message in error["message"], error
    assert where in error.get("where", ""), error
    assert Trajectory.objects.count() == Event.objects.count() == Image.objects.count() == 0
    assert storage_files(private_storage) == []
    # The server keeps serving.
    good = client.post(URL, data=dumps(v0_events(1)), content_type="application/json")
    assert good.status_code == 201


def test_multipart_without_a_file(client_as, private_storage):
    response = client_as(None).post(URL, {"title": "no file"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["where"] == "file"
    assert Trajectory.objects.count() == 0


def test_multipart_file_over_the_limit(client_as, settings, private_storage):
    settings.TRAJHUB_MAX_BODY_BYTES = 10_000
    upload = io.BytesIO(dumps(v0_events(60)))
    upload.name = "big.json"
    response = client_as(None).post(URL, {"file": upload}, format="multipart")
    assert response.status_code == 413
    assert "over the limit" in response.json()["error"]["message"]
    assert Trajectory.objects.count() == 0 and storage_files(private_storage) == []


class CountingStream(io.BytesIO):
    """A request body that records how much of it the server read."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.consumed = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.consumed += len(chunk)
        return chunk


def test_a_body_announced_over_the_limit_is_refused_before_reading_it(settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 1_000
    body = b"[" + b" " * 50_000 + b"]"
    request = RequestFactory().post(URL, data=body, content_type="application/json")
    stream = CountingStream(body)
    request._stream = stream
    response = TrajectoryListView.as_view()(request)
    assert response.status_code == 413
    assert stream.consumed == 0


def test_a_body_longer_than_announced_limit_stops_streaming(settings):
    """A client without a trustworthy Content-Length is cut off at the limit, not buffered."""
    settings.TRAJHUB_MAX_BODY_BYTES = 1_000
    body = b"[" + b" " * 50_000 + b"]"
    request = RequestFactory().post(URL, data=body, content_type="application/json")
    request.META.pop("CONTENT_LENGTH")
    stream = CountingStream(body)
    request._stream = stream
    response = TrajectoryListView.as_view()(request)
    assert response.status_code == 413
    assert stream.consumed < 300_000  # at most the limit plus one chunk


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/trajectories/not-an-id",
        "/api/v1/trajectories/" + "A" * 64,
        "/api/v1/trajectories/" + "0" * 63,
        "/api/v1/trajectories/" + "0" * 64,
        "/api/v1/trajectories/" + "0" * 64 + "/events",
        "/api/v1/trajectories/" + "0" * 64 + "/download?format=openhands",
        "/api/v1/trajectories/zz/events",
    ],
)
def test_unknown_or_malformed_ids_are_json_404(client_as, owner, path):
    for user in (None, owner):
        response = client_as(user).get(path)
        assert response.status_code == 404
        assert response.json()["error"]["message"] == "no such trajectory"


def test_unknown_id_for_patch_and_delete_is_404(client_as, owner):
    client = client_as(owner)
    path = "/api/v1/trajectories/" + "0" * 64
    assert client.patch(path, {"title": "x"}, format="json").status_code == 404
    assert client.delete(path).status_code == 404
    assert client_as(None).delete(path, HTTP_X_DELETION_PASSWORD="pw").status_code == 404


@pytest.mark.parametrize(
    "path", ["/api/v1/nothing", "/api/v1/trajectories/", "/api/v1/trajectories/a/b/c"]
)
def test_unrouted_api_paths_are_json_404(client, path):
    response = client.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json()["error"]["message"].startswith("no API endpoint")


# --- The hostile-input battery of issue 8: the drop-in, options, multipart, encodings ----------

DROP_IN = "/share_od_trajectory"


def drop_in_payload(**extra) -> bytes:
    return dumps(
        {
            "version": "1.0",
            "email": "",
            "polarity": "positive",
            "feedback": "positive",
            "permissions": "private",
            "trajectory": with_image(v0_events(1)),
            **extra,
        }
    )


HOSTILE = [
    # (name, path, body, content type, headers, status)
    ("drop-in: not an object", DROP_IN, b"[1, 2]", "application/json", {}, 400),
    ("drop-in: empty", DROP_IN, b"", "application/json", {}, 400),
    ("drop-in: broken JSON", DROP_IN, b'{"trajectory": [', "application/json", {}, 400),
    ("drop-in: BOM then garbage", DROP_IN, b"\xef\xbb\xbf{nope", "application/json", {}, 400),
    ("drop-in: no trajectory", DROP_IN, b'{"version": "1.0"}', "application/json", {}, 400),
    ("drop-in: trajectory not a list", DROP_IN, b'{"trajectory": 5}', "application/json", {}, 400),
    (
        "drop-in: 100,000 deep",
        DROP_IN,
        b'{"trajectory": ' + deep_json() + b"}",
        "application/json",
        {},
        400,
    ),
    (
        "drop-in: gzip bomb",
        DROP_IN,
        gzip.compress(b" " * 5_000_000 + drop_in_payload()),
        "application/json",
        {"HTTP_CONTENT_ENCODING": "gzip"},
        413,
    ),
    (
        "drop-in: brotli",
        DROP_IN,
        drop_in_payload(),
        "application/json",
        {"HTTP_CONTENT_ENCODING": "br"},
        415,
    ),
    (
        "drop-in: bad token",
        DROP_IN,
        drop_in_payload(),
        "application/json",
        {"HTTP_AUTHORIZATION": "Token th_nope"},
        401,
    ),
    (
        "options: polarity",
        f"{URL}?polarity=great",
        dumps(v0_events(1)),
        "application/json",
        {},
        400,
    ),
    (
        "options: long title",
        f"{URL}?title={'t' * 301}",
        dumps(v0_events(1)),
        "application/json",
        {},
        400,
    ),
    (
        "options: long session",
        f"{URL}?session_id={'s' * 201}",
        dumps(v0_events(1)),
        "application/json",
        {},
        400,
    ),
    (
        "options: licence not a boolean",
        f"{URL}?visibility=public&license_agreed=maybe",
        dumps(v0_events(1)),
        "application/json",
        {},
        400,
    ),
    (
        "options: query over the limit",
        f"{URL}?title={'x' * 40_000}",
        dumps(v0_events(1)),
        "application/json",
        {},
        414,
    ),
    (
        "encoding: UTF-16",
        URL,
        dumps(v0_events(1)).decode().encode("utf-16"),
        "application/json",
        {},
        400,
    ),
    (
        "encoding: Latin-1 bytes",
        URL,
        b'[{"id": 1, "source": "user", "message": "caf\xe9"}]',
        "application/json",
        {},
        400,
    ),
    (
        "encoding: Content-Length not a number",
        URL,
        dumps(v0_events(1)),
        "application/json",
        {"CONTENT_LENGTH": "ten"},
        400,
    ),
    ("multipart: no boundary", URL, b"--x\r\n", "multipart/form-data", {}, 400),
    (
        "multipart: garbage parts",
        URL,
        b"--b\r\nContent-Disposition: form-data\r\n\r\nno name\r\n--b--\r\n",
        "multipart/form-data; boundary=b",
        {},
        400,
    ),
    (
        "multipart: the file is not a trajectory",
        URL,
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="x.json"\r\n\r\n'
        b"{not json\r\n--b--\r\n",
        "multipart/form-data; boundary=b",
        {},
        400,
    ),
]


@pytest.mark.parametrize(
    "name,path,body,content_type,headers,status", HOSTILE, ids=[case[0] for case in HOSTILE]
)
def test_hostile_input_is_a_4xx_json_answer_stores_nothing_and_the_server_serves_on(
    client_as, small_limits, private_storage, name, path, body, content_type, headers, status
):
    client = client_as(None)
    client.raise_request_exception = False
    response = client.post(path, data=body, content_type=content_type, **headers)
    assert response.status_code == status, (name, response.content[:300])
    assert response["Content-Type"] == "application/json"
    answer = response.json()
    if path == DROP_IN:
        assert answer["statusCode"] == status and answer["body"]["message"]
    else:
        assert answer["error"]["message"]
    assert Trajectory.objects.count() == Event.objects.count() == Image.objects.count() == 0
    assert storage_files(private_storage) == []
    # The server keeps serving: the API, the drop-in and a page.
    assert (
        client.post(URL, data=dumps(v0_events(1)), content_type="application/json").status_code
        == 201
    )
    assert (
        client.post(DROP_IN, data=drop_in_payload(), content_type="application/json").status_code
        == 200
    )
    assert client.get("/browse/").status_code == 200
