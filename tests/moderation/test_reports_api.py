"""Reports and takedown requests over the API: POST /api/v1/trajectories/<id>/reports and
/takedowns, as every kind of caller; the same services as the site's forms (one rate limit for
both, holding after enough distinct reporters, the emailed confirmation of a takedown); a
trajectory that is not public answers 404 to those who cannot see it."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.services import api_token_create
from apps.moderation.models import AuditEntry, Report, TakedownRequest
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]
REQUESTER = "person.in.the.trajectory@example.org"


@pytest.fixture
def people(owner, other_user, moderator, staff):
    return {
        "anonymous": None,
        "owner": owner,
        "other_user": other_user,
        "moderator": moderator,
        "staff": staff,
    }


def as_caller(user, address: str = "10.9.0.1") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    if user is not None:
        client.force_authenticate(user=user)
    return client


def published(owner, **fields) -> Trajectory:
    trajectory = make_trajectory(events=["ls -la"], owner=owner, **fields)
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    return trajectory


def reports_url(trajectory) -> str:
    return f"/api/v1/trajectories/{trajectory.share_id}/reports"


def takedowns_url(trajectory) -> str:
    return f"/api/v1/trajectories/{trajectory.share_id}/takedowns"


@pytest.mark.parametrize("who", CALLERS)
def test_every_caller_can_report_a_public_trajectory(people, who, owner):
    trajectory = published(owner)
    assert trajectory.is_public
    user = people[who]
    answer = as_caller(user).post(
        reports_url(trajectory),
        {"reason": "secret", "text": "step 1 shows a key"},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["trajectory"] == trajectory.share_id and body["reason"] == "secret"
    report = Report.objects.get(trajectory=trajectory)
    assert report.text == "step 1 shows a key" and report.reporter == user
    assert report.reporter_key.startswith("addr:" if user is None else "user:")
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="reported")
    assert entry.actor_kind == "report"


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize("kind", ["private", "held", "rejected", "hidden", "pending"])
def test_a_trajectory_that_is_not_public(people, who, kind, owner):
    """404 (like an unknown id) to whoever cannot see it; 409 to those who can (owner,
    moderators, staff): only public trajectories are reported. Nothing is stored either way."""
    trajectory = published(owner, **({"visibility": "private"} if kind == "private" else {}))
    if kind not in ("private",):
        Trajectory.objects.filter(pk=trajectory.pk).update(review_state=kind)
    sees_it = who in ("moderator", "staff") or who == "owner"
    for url, data in (
        (reports_url(trajectory), {"reason": "spam"}),
        (takedowns_url(trajectory), {"email": REQUESTER, "text": "my name is in step 1"}),
    ):
        answer = as_caller(people[who]).post(url, data, format="json")
        assert answer.status_code == (409 if sees_it else 404), (who, kind, url)
        if not sees_it:
            assert trajectory.share_id not in answer.content.decode()
    assert not Report.objects.exists() and not TakedownRequest.objects.exists()
    assert mail.outbox == []


def test_unknown_and_malformed_ids_answer_404():
    for share_id in ("0" * 64, "not-a-share-id"):
        answer = as_caller(None).post(
            f"/api/v1/trajectories/{share_id}/reports", {"reason": "spam"}, format="json"
        )
        assert answer.status_code == 404 and "error" in answer.json()


def test_bad_input_is_a_400_naming_the_field(owner):
    trajectory = published(owner)
    client = as_caller(None)
    answer = client.post(reports_url(trajectory), {"reason": "boring"}, format="json")
    assert answer.status_code == 400 and answer.json()["error"]["where"] == "reason"
    answer = client.post(reports_url(trajectory), {"reason": "spam", "email": "no"}, format="json")
    assert answer.status_code == 400 and answer.json()["error"]["where"] == "email"
    answer = client.post(takedowns_url(trajectory), {"email": REQUESTER}, format="json")
    assert answer.status_code == 400 and answer.json()["error"]["where"] == "text"
    answer = client.post(
        reports_url(trajectory), b"reason=spam", content_type="application/x-www-form-urlencoded"
    )
    assert answer.status_code == 415
    assert not Report.objects.exists()


def test_one_rate_limit_for_the_form_and_the_api(settings, owner):
    settings.TRAJHUB_REPORTS_PER_HOUR = 2
    trajectory = published(owner)
    other = published(owner, title="Another public one")
    address = "10.9.0.77"
    form = Client().post(
        f"/t/{trajectory.share_id}/report", {"reason": "spam"}, REMOTE_ADDR=address
    )
    assert form.status_code == 200
    api = as_caller(None, address)
    assert api.post(reports_url(other), {"reason": "spam"}, format="json").status_code == 201
    refused = api.post(takedowns_url(other), {"email": REQUESTER, "text": "me"}, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "too many" in refused.json()["error"]["message"]
    # Another address is not limited by this one.
    elsewhere = as_caller(None, "10.9.0.78").post(
        reports_url(other), {"reason": "spam"}, format="json"
    )
    assert elsewhere.status_code == 201


def test_enough_distinct_reporters_hold_it(settings, owner, other_user, moderator):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    trajectory = published(owner)
    as_caller(other_user).post(reports_url(trajectory), {"reason": "secret"}, format="json")
    # The same reader again adds nothing.
    as_caller(other_user).post(reports_url(trajectory), {"reason": "secret"}, format="json")
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "approved"
    as_caller(None, "10.9.0.5").post(reports_url(trajectory), {"reason": "secret"}, format="json")
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"
    assert Report.objects.filter(trajectory=trajectory).count() == 2
    # Held: no longer public, so the next report is a 404 to anonymous readers.
    again = as_caller(None, "10.9.0.6").post(
        reports_url(trajectory), {"reason": "secret"}, format="json"
    )
    assert again.status_code == 404


def test_a_token_caller_reports_too(owner, other_user):
    trajectory = published(owner)
    _, secret = api_token_create(user=other_user, name="cli")
    client = APIClient(HTTP_AUTHORIZATION=f"Bearer {secret}")
    answer = client.post(reports_url(trajectory), {"reason": "harmful"}, format="json")
    assert answer.status_code == 201
    assert Report.objects.get().reporter == other_user


def test_a_signed_in_browser_needs_its_csrf_token(owner, other_user):
    trajectory = published(owner)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(other_user)
    answer = browser.post(
        reports_url(trajectory), {"reason": "spam"}, content_type="application/json"
    )
    assert answer.status_code == 403 and not Report.objects.exists()


@pytest.mark.parametrize("who", CALLERS)
def test_a_takedown_request_is_confirmed_by_email(
    people, who, owner, django_capture_on_commit_callbacks
):
    trajectory = published(owner)
    with django_capture_on_commit_callbacks(execute=True):
        answer = as_caller(people[who]).post(
            takedowns_url(trajectory),
            {"email": REQUESTER, "text": "my home address is in step 1"},
            format="json",
        )
    assert answer.status_code == 202, answer.content
    assert answer.json()["state"] == "unconfirmed"
    assert REQUESTER not in answer.content.decode()  # never echoed
    takedown = TakedownRequest.objects.get(trajectory=trajectory)
    assert takedown.email == REQUESTER and takedown.state == "unconfirmed"
    (message,) = mail.outbox
    assert message.to == [REQUESTER]
    (link,) = re.findall(r"https?://\S+/takedown/confirm/\S+", message.body)
    # Following the link puts it in the queue, as for the site's form.
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = Client().post("/" + link.split("://", 1)[1].split("/", 1)[1])
    assert confirmed.status_code == 200
    assert TakedownRequest.objects.get(pk=takedown.pk).state == "open"
