"""/upload/ and the dry run behind it, POST /api/v1/trajectories/preview (stores nothing)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.trajectories.importers import parse
from apps.trajectories.models import Trajectory
from tests.conftest import AWAITING_IMPORTERS, FIXTURES_DIR, SAMPLE_FILES
from tests.trajectories.test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/trajectories/preview"
# A document two importers read differently: ShareGPT (detected first) sees the 2
# conversation turns, OpenAI messages the 3 messages.
AMBIGUOUS = json.dumps(
    {
        "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}],
        "messages": [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": "README.md setup.py"},
            {"role": "user", "content": "thanks"},
        ],
    }
).encode()
# Without the shared files one placeholder id remains, which real_fixture skips with the reason.
REAL_FILES = sorted(
    path.name
    for path in (FIXTURES_DIR / "real").glob("*")
    if path.name != "MANIFEST.txt" and path.name not in AWAITING_IMPORTERS
) or ["(shared fixtures absent)"]


def test_upload_page_offers_every_format_and_private_by_default(client):
    response = client.get("/upload/")
    assert response.status_code == 200
    html = response.content.decode()
    for label in ("OpenHands event array", "SWE-agent", "ShareGPT", "OpenAI"):
        assert label in html
    assert 'name="visibility" value="private" checked' in html
    assert 'name="license_agreed"' in html and "/license/" in html
    assert 'data-preview-url="/api/v1/trajectories/preview"' in html
    assert 'action="/upload/"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert '<script src="/static/js/upload.js" defer></script>' in html
    assert "deletion" in html and "password" in html  # anonymous: says what they will get
    assert_csp_clean(html)


def test_upload_page_when_anonymous_sharing_is_off(client, settings, owner):
    settings.TRAJHUB_ANONYMOUS_SHARING = False
    assert "does not accept anonymous shares" in client.get("/upload/").content.decode()
    client.force_login(owner)
    html = client.get("/upload/").content.decode()
    assert "does not accept anonymous shares" not in html
    assert "My trajectories" in html


@pytest.mark.parametrize("name", REAL_FILES)
def test_preview_counts_every_real_file_and_stores_nothing(client, real_fixture, name):
    check_preview_counts(client, name, real_fixture(name))


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_preview_counts_every_sample_file_and_stores_nothing(client, sample, name):
    check_preview_counts(client, name, sample(name))


def check_preview_counts(client, name: str, data: bytes) -> None:
    expected = parse(data)

    response = client.post(PREVIEW, {"file": SimpleUploadedFile(name, data)})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["format"] == expected.format
    assert body["format_label"]
    assert body["trajectories"] == len(expected.trajectories) > 0
    assert body["events"] == sum(len(t.events) for t in expected.trajectories)
    assert body["errors"] == []
    assert len(body["items"]) == min(100, body["trajectories"])
    assert Trajectory.objects.count() == 0


def test_preview_numbers_for_known_files(client, real_fixture):
    def preview(name):
        data = real_fixture(name)
        return client.post(PREVIEW, {"file": SimpleUploadedFile(name, data)}).json()

    gui = preview("openhands_v0_basic_gui_mode.json")
    assert (gui["format"], gui["trajectories"], gui["events"]) == ("openhands_v0", 1, 18)
    sharegpt = preview("sharegpt_glaive_toolcall_en_demo.json")
    assert (sharegpt["trajectories"], sharegpt["events"]) == (300, 1914)
    assert len(sharegpt["items"]) == 100 and sharegpt["items_truncated"] == 200
    assert sharegpt["items"][0]["where"] == "[0]"


def test_preview_reports_bad_records_by_line(client, sample):
    lines = sample("openhands_eval_output.jsonl").splitlines()
    data = b"\n".join([lines[0], b'{"hello": "world"}', lines[1]])

    body = client.post(PREVIEW, {"file": SimpleUploadedFile("mixed.jsonl", data)}).json()

    assert body["trajectories"] == 2
    assert body["errors"] == [
        {"where": "line 2", "message": body["errors"][0]["message"]},
    ]
    assert "no known trajectory format" in body["errors"][0]["message"]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\x00", "UTF-8"),
        (b'{"foo": 1}', "no known trajectory format matches an object with keys foo"),
    ],
)
def test_preview_explains_unreadable_files(client, data, message):
    response = client.post(PREVIEW, {"file": SimpleUploadedFile("x.json", data)})
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_preview_accepts_a_raw_json_body(client, sample):
    response = client.post(
        PREVIEW, sample("openhands_v0_events.json"), content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["events"] == 11


def test_preview_applies_the_share_size_limits(client, settings):
    settings.TRAJHUB_MAX_BODY_BYTES = 1000
    big = SimpleUploadedFile("big.json", b"[" + b" " * 2000 + b"]")
    response = client.post(PREVIEW, {"file": big})
    assert response.status_code == 413
    assert "over the limit of 1,000 bytes" in response.json()["error"]["message"]

    settings.TRAJHUB_MAX_BODY_BYTES = 10_000_000
    settings.TRAJHUB_MAX_DECOMPRESSED_BYTES = 10_000
    bomb = SimpleUploadedFile("bomb.json.gz", gzip.compress(b"[" + b" " * 100_000 + b"]"))
    response = client.post(PREVIEW, {"file": bomb})
    assert response.status_code == 413
    assert "inflates past the limit" in response.json()["error"]["message"]


def test_preview_applies_the_event_limit(client, settings, sample):
    settings.TRAJHUB_MAX_EVENTS = 5
    body = client.post(
        PREVIEW,
        {"file": SimpleUploadedFile("a.json", sample("openhands_v0_events.json"))},
    ).json()
    assert body["trajectories"] == 0
    assert "over the limit of 5" in body["errors"][0]["message"]


def test_preview_needs_the_file_field(client):
    response = client.post(PREVIEW, {"other": SimpleUploadedFile("a.json", b"[]")})
    assert response.status_code == 400
    assert response.json()["error"]["where"] == "file"


def test_preview_reads_gzip_files_like_the_share_api(client, sample):
    data = gzip.compress(sample("openhands_v0_events.json"))
    body = client.post(PREVIEW, {"file": SimpleUploadedFile("a.json.gz", data)}).json()
    assert (body["trajectories"], body["events"]) == (1, 11)

    broken = client.post(PREVIEW, {"file": SimpleUploadedFile("b.json.gz", data[:40])})
    assert broken.status_code == 400
    assert "gzip" in broken.json()["error"]["message"]


def test_preview_is_csrf_checked_for_signed_in_sessions(owner, sample):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    data = sample("openhands_v0_events.json")
    refused = client.post(PREVIEW, {"file": SimpleUploadedFile("a.json", data)})
    assert refused.status_code == 403
    client.get("/upload/")
    token = client.cookies["csrftoken"].value
    allowed = client.post(
        PREVIEW, {"file": SimpleUploadedFile("a.json", data)}, HTTP_X_CSRFTOKEN=token
    )
    assert allowed.status_code == 200


def test_preview_is_rate_limited(client, monkeypatch):
    from apps.trajectories.api.preview import PreviewThrottle

    monkeypatch.setattr(PreviewThrottle, "rate", "2/hour")
    monkeypatch.setattr(PreviewThrottle, "num_requests", 2, raising=False)
    codes = [
        client.post(PREVIEW, b"[]", content_type="application/json").status_code for _ in range(3)
    ]
    assert codes[:2] == [400, 400] and codes[2] == 429


def test_preview_takes_the_chosen_format_over_detection(client):
    def preview(query=""):
        return client.post(PREVIEW + query, {"file": SimpleUploadedFile("chat.json", AMBIGUOUS)})

    detected = preview().json()
    assert (detected["format"], detected["events"]) == ("sharegpt", 2)
    chosen = preview("?format=openai_messages").json()
    assert (chosen["format"], chosen["format_label"], chosen["events"]) == (
        "openai_messages",
        "OpenAI chat messages",
        3,
    )
    unknown = preview("?format=yaml")
    assert unknown.status_code == 400
    assert "unknown format 'yaml'" in unknown.json()["error"]["message"]


def test_preview_says_what_the_scan_would_redact_and_which_files_it_holds(client):
    """Issue 22: before storing, the sharer sees each value the scan would redact (kind, place,
    placeholder, masked, never whole) and the files whose contents the session carries."""
    key = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3aB4cD5"
    records = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s1",
            "cwd": "/home/carol/shop",
            "message": {"role": "user", "content": f"deploy it, the key is {key}"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "cat .env config/app.yml | head -n 5"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Read",
                        "input": {"file_path": "/home/carol/shop/src/main.py"},
                    },
                ],
            },
        },
    ]
    body = "\n".join(json.dumps(record) for record in records).encode()

    answer = client.post(PREVIEW, body, content_type="application/x-ndjson")

    assert answer.status_code == 200, answer.content
    item = answer.json()["items"][0]
    assert [entry["path"] for entry in item["files"]] == [
        ".env",
        "config/app.yml",
        "/home/carol/shop/src/main.py",
    ]
    assert [entry["sensitive"] for entry in item["files"]] == [True, False, False]
    values = {value["kind"]: value for value in item["redactions"]["values"]}
    assert values["openai_api_key"]["placeholder"] == "<OPENAI_API_KEY_1>"
    assert {place["event"] for place in values["openai_api_key"]["places"]} >= {0}
    assert values["user_name"]["placeholder"] == "<USER_NAME_1>" and values["user_name"]["auto"]
    assert item["redactions"]["decision"] == "held"  # an API key waits for a moderator
    assert key not in json.dumps(values) and "carol" not in json.dumps(values)
    assert Trajectory.objects.count() == 0
