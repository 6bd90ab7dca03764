"""The owner (or the anonymous sharer's contact email) learns why a trajectory was held,
rejected or hidden, and can ask for a second look at a rejection."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from apps.moderation.errors import ModerationError
from apps.moderation.models import Appeal, AuditEntry
from apps.moderation.services.appeals import appeal_decline
from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sharer(django_user_model):
    return django_user_model.objects.create_user("nt-owner", email="nt-owner@example.org")


def held(**fields) -> Trajectory:
    trajectory = make_trajectory(events=[f"export OPENAI_API_KEY={s.openai_key()}"], **fields)
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def test_held_by_the_scan_tells_the_owner_why_without_the_value(
    sharer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        trajectory = held(owner=sharer)
    assert trajectory.review_state == "held"
    (message,) = mail.outbox
    assert message.to == ["nt-owner@example.org"]
    assert "openai_api_key" in message.body.lower() or "OPENAI" in message.body
    assert s.openai_key()[:12] not in message.body


def test_an_anonymous_sharer_is_told_at_the_contact_email(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        held(contact_email="anon.sharer@example.org")
    (message,) = mail.outbox
    assert message.to == ["anon.sharer@example.org"]
    assert "/unlock" in message.body  # the manage link


def test_hidden_tells_the_owner_the_reason(
    sharer, admin_moderator, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(events=["ls"], owner=sharer)
    trajectory_scan(trajectory=trajectory)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_hide(trajectory=trajectory, moderator=admin_moderator, note="off-topic spam")
    (message,) = mail.outbox
    assert "hid" in message.body and "off-topic spam" in message.body


def _rejected_with_link(sharer, admin_moderator, capture) -> tuple[Trajectory, str]:
    trajectory = held(owner=sharer)
    mail.outbox.clear()
    with capture(execute=True):
        trajectory_reject(trajectory=trajectory, moderator=admin_moderator, note="a live key")
    (message,) = mail.outbox
    assert "a live key" in message.body
    (link,) = re.findall(r"https?://\S+/appeal/\S+", message.body)
    mail.outbox.clear()
    return trajectory, "/" + link.split("://", 1)[1].split("/", 1)[1]


def test_a_rejection_can_be_appealed_with_the_link_of_its_notice(
    sharer, admin_moderator, django_capture_on_commit_callbacks
):
    trajectory, path = _rejected_with_link(
        sharer, admin_moderator, django_capture_on_commit_callbacks
    )
    page = Client().get(path)
    assert page.status_code == 200 and b"Ask for a second look" in page.content
    done = Client().post(path, {"text": "The key was revoked before I shared it."})
    assert done.status_code == 200 and b"back in the moderators' queue" in done.content
    appeal = Appeal.objects.get(trajectory=trajectory)
    assert appeal.text == "The key was revoked before I shared it."
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="appealed")
    assert (entry.actor_kind, entry.actor_username) == ("owner", "nt-owner")
    # One open appeal at a time.
    again = Client().post(path, {"text": "please"})
    assert again.status_code == 409 and b"already asked" in again.content
    # A moderator approves after the second look: the appeal is answered.
    trajectory_approve(
        trajectory=Trajectory.objects.get(pk=trajectory.pk), moderator=admin_moderator
    )
    assert Appeal.objects.get().resolution == "granted"


def test_an_upheld_rejection_says_why(sharer, admin_moderator, django_capture_on_commit_callbacks):
    trajectory, path = _rejected_with_link(
        sharer, admin_moderator, django_capture_on_commit_callbacks
    )
    Client().post(path, {"text": "please publish it"})
    with django_capture_on_commit_callbacks(execute=True):
        appeal_decline(trajectory=trajectory, moderator=admin_moderator, note="still a live key")
    assert Appeal.objects.get().resolution == "declined"
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "rejected"
    (message,) = mail.outbox
    assert "still a live key" in message.body
    with pytest.raises(ModerationError, match="no open appeal"):
        appeal_decline(trajectory=trajectory, moderator=admin_moderator, note="x")


def test_forged_appeal_links_and_other_states_are_refused(sharer):
    assert Client().get("/appeal/not-a-signed-token").status_code == 404
    from apps.moderation.services.links import appeal_url

    approved = make_trajectory(events=["ls"], owner=sharer, review_state="approved")
    path = "/" + appeal_url(approved).split("://", 1)[1].split("/", 1)[1]
    response = Client().post(path, {"text": "why not"})
    assert response.status_code == 409 and b"Only a rejected trajectory" in response.content
    assert not Appeal.objects.exists()
