"""Deletion by email without an account: a one-time, expiring link sent to the address; the same
answer whether or not the address shared anything; rate limited; accounts' shares untouched."""

from __future__ import annotations

import logging
import re
import time
from datetime import timedelta

import pytest
from django.test import Client

from apps.accounts.models import EmailDeletionRequest
from apps.trajectories.models import Tombstone, Trajectory
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db

ADDRESS = "sharer@example.org"


@pytest.fixture
def shares(owner):
    anonymous = [
        make_trajectory(owner=None, contact_email=ADDRESS, visibility="public"),
        make_trajectory(owner=None, contact_email="Sharer@Example.org", visibility="private"),
    ]
    others = [
        make_trajectory(owner=None, contact_email="someone@example.org"),
        # Shared under the same address but owned by an account: the account manages it.
        make_trajectory(owner=owner, contact_email=ADDRESS),
    ]
    return anonymous, others


def _ask(client, email, capture):
    with capture(execute=True):
        return client.post("/delete-by-email/", {"email": email})


def _link(mail) -> str:
    match = re.search(r"https?://[^/\s]+(/delete-by-email/\S+)", mail.body)
    assert match, mail.body
    return match.group(1)


def test_link_shows_the_count_and_deletes_only_that_addresses_anonymous_shares(
    client, shares, mailoutbox, django_capture_on_commit_callbacks
):
    anonymous, others = shares
    response = _ask(client, ADDRESS, django_capture_on_commit_callbacks)
    assert response.status_code == 200 and "on its way" in response.content.decode()
    [mail] = mailoutbox
    assert mail.to == [ADDRESS]
    link = _link(mail)

    page = Client().get(link)  # another browser: the link is the proof, not a session
    assert page.status_code == 200
    assert "2 trajectories were shared" in page.content.decode()
    assert Trajectory.objects.count() == 4  # a GET deletes nothing

    with django_capture_on_commit_callbacks(execute=True):
        done = Client().post(link)
    assert "2 trajectories deleted" in done.content.decode()
    assert set(Trajectory.objects.values_list("pk", flat=True)) == {t.pk for t in others}
    assert set(Tombstone.objects.values_list("reason", flat=True)) == {"email"}
    # One time only.
    assert Client().get(link).status_code == 404
    assert Client().post(link).status_code == 404
    assert EmailDeletionRequest.objects.get().email == ""


def test_the_answer_is_the_same_with_or_without_shares(
    client, shares, mailoutbox, django_capture_on_commit_callbacks
):
    with_shares = _ask(client, ADDRESS, django_capture_on_commit_callbacks)
    without = _ask(Client(), "nobody@example.org", django_capture_on_commit_callbacks)

    def text(response):
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", response.content.decode())

    assert with_shares.status_code == without.status_code == 200
    assert text(with_shares) == text(without)
    # Both get a link (so the answer takes the same time); one with nothing shows nothing to delete.
    assert len(mailoutbox) == 2
    page = Client().get(_link(mailoutbox[1])).content.decode()
    assert "Nothing is shared without an account under this address" in page


def test_expired_and_forged_links_are_refused(
    client, shares, mailoutbox, settings, django_capture_on_commit_callbacks
):
    _ask(client, ADDRESS, django_capture_on_commit_callbacks)
    link = _link(mailoutbox[0])
    assert Client().get(link[:-3] + "abc").status_code == 404
    EmailDeletionRequest.objects.update(
        created_at=EmailDeletionRequest.objects.get().created_at - timedelta(hours=25)
    )
    assert Client().post(link).status_code == 404
    assert Trajectory.objects.count() == 4


def test_the_form_is_rate_limited(client, settings, mailoutbox, django_capture_on_commit_callbacks):
    settings.TRAJHUB_EMAIL_DELETION_PER_HOUR = 2
    for index in range(2):
        assert (
            _ask(client, f"a{index}@example.org", django_capture_on_commit_callbacks).status_code
            == 200
        )
    before = int(time.time())
    response = _ask(client, "a9@example.org", django_capture_on_commit_callbacks)
    after = int(time.time())
    # The time the hour's window has left (core.ratelimit aligns windows on the clock).
    assert response.status_code == 429
    assert response["Retry-After"] in {str(3600 - now % 3600) for now in range(before, after + 1)}
    assert len(mailoutbox) == 2


def test_bad_input_and_csrf(client):
    response = client.post("/delete-by-email/", {"email": "not an address"})
    assert response.status_code == 400 and "valid email" in response.content.decode()
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/delete-by-email/", {"email": ADDRESS}).status_code == 403


def test_no_address_in_logs(client, shares, caplog, mailoutbox, django_capture_on_commit_callbacks):
    caplog.set_level(logging.DEBUG)
    _ask(client, ADDRESS, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        Client().post(_link(mailoutbox[0]))
    assert "@example.org" not in caplog.text.lower()
