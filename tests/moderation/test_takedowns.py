"""Takedown requests: form on every public trajectory, confirmed by a signed link mailed to the
requester, into the queue, decided by a moderator, the outcome mailed back."""

from __future__ import annotations

import re
import time

import pytest
from django.core import mail, signing
from django.test import Client
from rest_framework.test import APIClient

from apps.moderation.errors import ModerationError
from apps.moderation.models import AuditEntry, TakedownRequest
from apps.moderation.services.links import TAKEDOWN_SALT
from apps.moderation.services.scan import trajectory_scan
from apps.moderation.services.takedowns import takedown_decide
from apps.trajectories.models import Trajectory
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db

REQUESTER = "person.in.it@example.org"


@pytest.fixture
def published(django_user_model):
    owner = django_user_model.objects.create_user("tk-owner", email="tk-owner@example.org")
    trajectory = make_trajectory(events=["cat contacts.csv"], owner=owner)
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert trajectory.is_public
    return trajectory


def request_takedown(trajectory, capture) -> str:
    """Send the form; return the confirmation link from the email."""
    with capture(execute=True):
        response = Client().post(
            f"/t/{trajectory.share_id}/takedown",
            {"email": REQUESTER, "text": "step 2 lists my home address"},
        )
    assert response.status_code == 200 and b"Check your email" in response.content
    (message,) = mail.outbox
    assert message.to == [REQUESTER]
    (link,) = re.findall(r"https?://\S+/takedown/confirm/\S+", message.body)
    mail.outbox.clear()
    return link.split("://", 1)[1].split("/", 1)[1]


def test_the_request_waits_for_the_email_confirmation(
    published, django_capture_on_commit_callbacks
):
    path = "/" + request_takedown(published, django_capture_on_commit_callbacks)
    request = TakedownRequest.objects.get()
    assert request.state == "unconfirmed"
    assert not AuditEntry.objects.filter(action="takedown_requested").exists()
    # A mail scanner following the link confirms nothing: GET shows a button.
    page = Client().get(path)
    assert page.status_code == 200 and b"Confirm the request" in page.content
    assert TakedownRequest.objects.get().state == "unconfirmed"
    assert Client().post(path).status_code == 200
    assert TakedownRequest.objects.get().state == "open"
    entry = AuditEntry.objects.get(action="takedown_requested")
    assert entry.actor_kind == "takedown" and REQUESTER not in entry.reason
    Client().post(path)  # twice: still one confirmation
    assert AuditEntry.objects.filter(action="takedown_requested").count() == 1


def test_forged_or_expired_links_confirm_nothing(published, settings):
    request = TakedownRequest.objects.create(trajectory=published, email=REQUESTER, text="x")
    forged = signing.dumps(request.pk, salt="another-salt")
    assert Client().post(f"/takedown/confirm/{forged}").status_code == 404
    settings.TRAJHUB_TAKEDOWN_LINK_SECONDS = -1
    expired = signing.dumps(request.pk, salt=TAKEDOWN_SALT)
    assert Client().post(f"/takedown/confirm/{expired}").status_code == 404
    assert TakedownRequest.objects.get().state == "unconfirmed"


def test_granted_hides_it_and_mails_both_sides(
    published, admin_moderator, django_capture_on_commit_callbacks
):
    path = "/" + request_takedown(published, django_capture_on_commit_callbacks)
    Client().post(path)
    request = TakedownRequest.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        takedown_decide(request=request, moderator=admin_moderator, grant=True, note="address")
    assert Trajectory.objects.get(pk=published.pk).review_state == "hidden"
    assert not Trajectory.objects.public().filter(pk=published.pk).exists()
    by_recipient = {message.to[0]: message for message in mail.outbox}
    assert set(by_recipient) == {REQUESTER, "tk-owner@example.org"}
    assert "taken down" in by_recipient[REQUESTER].subject
    assert "taken down" in by_recipient["tk-owner@example.org"].body
    assert REQUESTER not in by_recipient["tk-owner@example.org"].body
    request.refresh_from_db()
    assert request.state == "granted" and request.email == ""  # the address is forgotten
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"takedown_granted", "hidden"} <= actions
    with pytest.raises(ModerationError, match="not open"):
        takedown_decide(request=request, moderator=admin_moderator, grant=False)


def test_declined_leaves_it_public_and_says_why(
    published, admin_moderator, django_capture_on_commit_callbacks
):
    path = "/" + request_takedown(published, django_capture_on_commit_callbacks)
    Client().post(path)
    with django_capture_on_commit_callbacks(execute=True):
        takedown_decide(
            request=TakedownRequest.objects.get(),
            moderator=admin_moderator,
            grant=False,
            note="the address is the company's",
        )
    assert Trajectory.objects.get(pk=published.pk).is_public
    (message,) = mail.outbox
    assert message.to == [REQUESTER] and "declined" in message.subject
    assert "the address is the company's" in message.body


@pytest.mark.parametrize("who", [None, "owner", "other_user", "admin_moderator"])
def test_no_form_for_what_is_not_public(request, who):
    trajectory = make_trajectory(events=["ls"], review_state="held")
    client = Client()
    if who:
        client.force_login(request.getfixturevalue(who))
    assert client.get(f"/t/{trajectory.share_id}/takedown").status_code == 404
    response = client.post(
        f"/t/{trajectory.share_id}/takedown", {"email": REQUESTER, "text": "mine"}
    )
    assert response.status_code == 404
    assert not TakedownRequest.objects.exists()


def test_a_request_without_email_or_text_is_refused(published):
    response = Client().post(f"/t/{published.share_id}/takedown", {"email": "", "text": ""})
    assert response.status_code == 400 and b"This field is required" in response.content
    assert not TakedownRequest.objects.exists()


def seconds_left(window: int, before: int, after: int) -> set[str]:
    """What Retry-After may say for a clock-aligned window (core.ratelimit) of `window` seconds,
    refused between `before` and `after`."""
    return {str(window - now % window) for now in range(before, after + 1)}


@pytest.mark.parametrize("where", ["page", "api"])
def test_the_daily_recipient_limit_says_when_it_ends(published, where):
    """Retry-After is the time the day's window has left, not the hourly limit's 3600, and the
    page says which limit it was."""
    from apps.moderation.services.limits import TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY

    body = {"email": REQUESTER, "text": "step 2 lists my home address"}
    if where == "page":
        url, kind = f"/t/{published.share_id}/takedown", {}
    else:
        url, kind = f"/api/v1/trajectories/{published.share_id}/takedowns", {"format": "json"}

    def send(address: str):
        client = Client(REMOTE_ADDR=address) if where == "page" else APIClient(REMOTE_ADDR=address)
        return client.post(url, body, **kind)

    for n in range(TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY):
        assert send(f"198.51.100.{n + 1}").status_code in (200, 202)
    before = int(time.time())
    refused = send("203.0.113.9")
    after = int(time.time())
    assert refused.status_code == 429
    assert refused["Retry-After"] in seconds_left(24 * 3600, before, after)
    assert "emails to this address today" in refused.content.decode()


def test_confirmation_mails_are_limited_per_recipient_whatever_the_client(published):
    from apps.moderation.services.limits import TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY

    url = f"/api/v1/trajectories/{published.share_id}/takedowns"
    body = {"email": REQUESTER, "text": "step 2 lists my home address"}
    for n in range(TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY):
        client = Client(REMOTE_ADDR=f"198.51.100.{n + 1}")  # a new client address each time
        assert client.post(url, body, content_type="application/json").status_code == 202
    refused = Client(REMOTE_ADDR="203.0.113.9").post(url, body, content_type="application/json")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert "this address today" in refused.content.decode()
    assert TakedownRequest.objects.count() == TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY
    # Another recipient is not affected.
    other = {**body, "email": "someone.else@example.org"}
    answer = Client(REMOTE_ADDR="203.0.113.9").post(url, other, content_type="application/json")
    assert answer.status_code == 202


def test_the_forms_429_names_the_per_recipient_limit(published):
    """The page answers a recipient's fourth confirmation mail of the day with the limit that
    refused it (as the API's 429 does), not "too many requests from your network": the sender
    changed networks each time, so that text would be false and no help."""
    from apps.moderation.services.limits import TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY

    url = f"/t/{published.share_id}/takedown"
    body = {"email": REQUESTER, "text": "step 2 lists my home address"}
    for n in range(TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY):
        assert Client(REMOTE_ADDR=f"198.51.100.{n + 1}").post(url, body).status_code == 200
    refused = Client(REMOTE_ADDR="203.0.113.9").post(url, body)
    page = refused.content.decode()
    assert refused.status_code == 429
    assert "to this address today" in page
    assert f"at most {TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY} a day" in page
    assert "from your network" not in page
    assert 3600 < int(refused["Retry-After"]) <= 24 * 3600


def test_the_forms_429_per_network_still_says_network(published, settings):
    settings.TRAJHUB_REPORTS_PER_HOUR = 1
    url = f"/t/{published.share_id}/takedown"
    client = Client(REMOTE_ADDR="198.51.100.77")
    client.post(url, {"email": "a@example.org", "text": "step 2 lists my home address"})
    refused = client.post(url, {"email": "b@example.org", "text": "step 2 lists my home address"})
    assert refused.status_code == 429
    assert "from your network in the last hour" in refused.content.decode()
