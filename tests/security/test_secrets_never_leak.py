"""Contact emails, share tokens, API tokens and deletion passwords never reach a response, a log,
the raw copy or an export: shared every way the site takes a share, then looked at every way
anyone (moderators and staff included, who see everything else) can look."""

from __future__ import annotations

import logging
import runpy
from datetime import timedelta
from types import SimpleNamespace

import orjson
import pytest
import zstandard
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_create
from apps.moderation.models import AuditEntry, Finding
from apps.trajectories.models import Event, Trajectory
from tests.ingest_helpers import share_payload, storage_files, v0_events

pytestmark = pytest.mark.django_db

CONTACT = "private.sharer@home-mail.test"
TOKEN = "tok-secret-9b8a7c6d5e4f"
NEVER = (CONTACT, "private.sharer", TOKEN, "9b8a7c6d5e4f", "sha256$")


def payload(task: str) -> dict:
    """An OpenHands share payload with the contact address and a token, as before v0.12.1
    (websocket items: {token, status} mixed in with the events)."""
    events = v0_events(2, task=task)
    return share_payload(
        [{"token": TOKEN, "status": "ok"}, *events],
        email=CONTACT,
        permissions="public",
        token=TOKEN,
    )


def found_in(text: str) -> list[str]:
    return [value for value in NEVER if value in text]


def response_text(response) -> str:
    headers = "\n".join(f"{name}: {value}" for name, value in response.items())
    body = (
        b"".join(response.streaming_content) if response.streaming else response.content
    ).decode(errors="replace")
    return f"{headers}\n{body}"


@pytest.fixture
def shared(private_storage, caplog, django_capture_on_commit_callbacks, settings):
    """The same person shares five times, each way the site takes a share; scans run."""
    caplog.set_level(logging.DEBUG)
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 100
    anonymous = APIClient()
    answers = []
    passwords = []
    with django_capture_on_commit_callbacks(execute=True):
        drop_in = anonymous.post(
            "/share_od_trajectory",
            orjson.dumps(payload("drop-in")),
            content_type="application/json",
        )
        assert drop_in.status_code == 200
        passwords.append(drop_in.json()["body"]["password"])
        answers.append(drop_in)
    with django_capture_on_commit_callbacks(execute=True):
        body = anonymous.post(
            f"/api/v1/trajectories?email={CONTACT}&visibility=public&license_agreed=true",
            orjson.dumps(payload("json body")),
            content_type="application/json",
        )
        assert body.status_code == 201, body.content
        answers.append(body)
    with django_capture_on_commit_callbacks(execute=True):
        upload = anonymous.post(
            "/api/v1/trajectories",
            {
                "file": SimpleUploadedFile(
                    "share.json", orjson.dumps(payload("multipart")), "application/json"
                ),
                "email": CONTACT,
                "visibility": "public",
                "license_agreed": "true",
            },
            format="multipart",
        )
        assert upload.status_code == 201, upload.content
        answers.append(upload)
    with django_capture_on_commit_callbacks(execute=True):
        lines = b"\n".join(orjson.dumps(payload(f"line {n}")) for n in (1, 2))
        jsonl = anonymous.post(
            "/api/v1/trajectories?visibility=public&license_agreed=true",
            lines,
            content_type="application/x-ndjson",
        )
        assert jsonl.status_code == 201, jsonl.content
        answers.append(jsonl)
    for answer in answers[1:]:
        passwords += [item["password"] for item in answer.json()["trajectories"]]
    trajectories = list(Trajectory.objects.order_by("pk"))
    assert len(trajectories) == 5
    assert {t.contact_email for t in trajectories} == {CONTACT}
    # Whatever the scan decided, make them all public so that every surface shows them.
    Trajectory.objects.update(visibility="public", review_state="approved", license="MIT")
    return SimpleNamespace(
        trajectories=trajectories,
        answers=answers,
        passwords=passwords,
        storage=private_storage,
        caplog=caplog,
    )


def test_share_answers_carry_the_password_once_and_nothing_else_secret(shared):
    for answer in shared.answers:
        assert found_in(response_text(answer)) == []
    assert all(len(password) >= 20 for password in shared.passwords)


def test_nobody_sees_them_anywhere_afterwards(shared, django_user_model):
    moderator = django_user_model.objects.create_user("leak-mod", password="x")
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    staff = django_user_model.objects.create_superuser("leak-staff", password="x")
    clients = {"anonymous": Client()}
    for name, user in (("moderator", moderator), ("staff", staff)):
        clients[name] = Client()
        clients[name].force_login(user)
    leaks = []
    for trajectory in shared.trajectories:
        base = trajectory.get_absolute_url()
        api = f"/api/v1/trajectories/{trajectory.share_id}"
        urls = [
            base,
            f"{base}events?after=0",
            f"{base}find?q=private",
            *(f"{base}events/{step}/json" for step in range(1, trajectory.num_events + 1)),
            api,
            f"{api}/events",
            *(
                f"{api}/download?format={fmt}"
                for fmt in ("openhands", "openai", "sharegpt", "atif")
            ),
        ]
        for name, client in clients.items():
            for url in urls:
                response = client.get(url)
                assert response.status_code == 200, (name, url)
                leaks += [f"{name} {url}: {value}" for value in found_in(response_text(response))]
        original = clients["staff"].get(f"{api}/download?format=original")
        assert original.status_code == 200
        leaks += [f"original {trajectory.pk}: {v}" for v in found_in(response_text(original))]
        for url in (
            reverse("admin:trajectories_trajectory_change", args=[trajectory.pk]),
            reverse("admin:trajectories_event_changelist") + f"?q={trajectory.share_id}",
        ):
            leaks += [
                f"admin {url}: {v}" for v in found_in(response_text(clients["staff"].get(url)))
            ]
    for url in ("/", "/browse/", "/feed.atom", "/api/v1/trajectories", "/sitemap-trajectories.xml"):
        leaks += [f"{url}: {v}" for v in found_in(response_text(clients["anonymous"].get(url)))]
    for url in (
        reverse("admin:trajectories_trajectory_changelist"),
        reverse("admin:moderation_finding_changelist"),
        reverse("admin:moderation_auditentry_changelist"),
    ):
        leaks += [f"admin {url}: {v}" for v in found_in(response_text(clients["staff"].get(url)))]
    assert leaks == [], "\n".join(leaks)


def test_raw_copies_keep_the_trajectory_without_the_envelopes_email_and_tokens(shared):
    raws = [path for path in storage_files(shared.storage) if path.startswith("raw/")]
    assert len(raws) == 5
    for path in raws:
        with (shared.storage / path).open("rb") as handle:
            raw = zstandard.ZstdDecompressor().decompressobj().decompress(handle.read()).decode()
        assert found_in(raw) == [], path
        assert '"trajectory"' in raw and "run" in raw  # the rest is kept


def test_nothing_stored_beside_the_contact_field_holds_them(shared):
    for row in Trajectory.objects.values():
        row.pop("contact_email")
        row.pop("deletion_password_hashes")  # hashes by design; never in a response (above)
        assert found_in(repr(row)) == [], row["share_id"]
    for row in Event.objects.values("text", "data", "original_id", "cause"):
        assert found_in(repr(row)) == []
    for row in Finding.objects.values("preview", "path", "placeholder"):
        assert found_in(repr(row)) == []
    for row in AuditEntry.objects.values("details", "share_id"):
        assert found_in(repr(row)) == []


def test_no_log_line_holds_them(shared):
    text = shared.caplog.text + "\n".join(
        f"{record.getMessage()} {record.args!r}" for record in shared.caplog.records
    )
    assert found_in(text) == []
    assert not [p for p in shared.passwords if p in text]


def test_api_tokens_are_stored_hashed_and_never_echoed_or_logged(owner, caplog):
    caplog.set_level(logging.DEBUG)
    token, secret = api_token_create(user=owner)
    assert secret not in repr(ApiToken.objects.filter(pk=token.pk).values().get())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    answers = [
        client.get("/api/v1/trajectories?owner=me"),
        client.post(
            "/api/v1/trajectories", orjson.dumps(v0_events(1)), content_type="application/json"
        ),
    ]
    wrong = secret[:-4] + "abcd"
    client.credentials(HTTP_AUTHORIZATION=f"Token {wrong}")
    answers.append(client.get("/api/v1/trajectories"))
    assert answers[-1].status_code == 401
    dropin = Client().post(
        "/share_od_trajectory",
        orjson.dumps(share_payload(v0_events(1))),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {wrong}",
    )
    assert dropin.status_code == 401
    for answer in [*answers, dropin]:
        text = response_text(answer)
        assert secret not in text and wrong not in text
    assert secret not in caplog.text and wrong not in caplog.text


def test_the_access_log_records_no_query_string_or_referrer():
    """Gunicorn's default access line holds the whole request URI, and the share API takes
    `email` as a query parameter with a JSON body: the line must hold the path only."""
    from gunicorn.config import Config
    from gunicorn.glogging import Logger, SafeAtoms

    conf = runpy.run_path(str(settings.BASE_DIR / "docker" / "gunicorn.conf.py"))
    config = Config()
    for name in ("access_log_format", "accesslog"):
        if name in conf:
            config.set(name, conf[name])
    environ = {
        "REQUEST_METHOD": "POST",
        "RAW_URI": f"/api/v1/trajectories?email={CONTACT}&visibility=public",
        "PATH_INFO": "/api/v1/trajectories",
        "QUERY_STRING": f"email={CONTACT}&visibility=public",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "10.1.2.3",
        "HTTP_REFERER": f"https://trajhub.example/browse/?q={CONTACT}",
        "HTTP_USER_AGENT": "curl/8",
    }
    response = SimpleNamespace(status="201 Created", sent=42, headers=[])
    atoms = Logger(config).atoms(response, [], environ, timedelta(milliseconds=12))
    line = config.access_log_format % SafeAtoms(atoms)
    assert "POST /api/v1/trajectories HTTP/1.1" in line
    assert found_in(line) == [] and "email=" not in line


def test_the_upload_preview_stores_nothing_and_echoes_no_secret(owner, private_storage):
    body = orjson.dumps(payload("preview"))
    answer = APIClient().post("/api/v1/trajectories/preview", body, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["events"] == 5
    assert found_in(response_text(answer)) == []
    assert Trajectory.objects.count() == 0 and storage_files(private_storage) == []
    # A signed-in browser session needs the CSRF token here too (it is a POST).
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    refused = browser.post("/api/v1/trajectories/preview", body, content_type="application/json")
    assert refused.status_code == 403
