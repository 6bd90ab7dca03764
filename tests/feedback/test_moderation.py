"""Feedback text is hostile input and private data: redacted with the trajectory's map now and
after later redactions, escaped, scanned and held, reportable, in the admin review queue with
its trajectory in context, held for new accounts by a setting; the owner told (issue 23)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from apps.accounts.models import Notice
from apps.accounts.notices import notice_email, notice_unsubscribe, unsubscribe_token
from apps.feedback.models import NoteState, StepNote
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory, reindex

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def url(trajectory, step=2) -> str:
    return f"/api/v1/trajectories/{trajectory.share_id}/steps/{step}/feedback"


def give(client, trajectory, step=2, **body):
    answer = client.post(url(trajectory, step), body, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()


@pytest.fixture
def public(owner):
    return make_trajectory(owner=owner, steps=2, redactions={"db.acme-corp.internal": "<HOST_1>"})


def test_the_trajectorys_redactions_apply_to_feedback(public, client_as, other_user, owner):
    give(client_as(other_user), public, correction="connect to db.acme-corp.internal first")
    for caller in (None, owner):
        (note,) = client_as(caller).get(url(public)).json()["corrections"]
        assert note["text"] == "connect to <HOST_1> first"
    # Its author reads their own words.
    (own,) = client_as(other_user).get(url(public)).json()["corrections"]
    assert "db.acme-corp.internal" in own["text"]


def test_a_later_redaction_applies_to_feedback_given_before(public, client_as, other_user):
    give(client_as(other_user), public, comment="the key is sk-live-stagingvalue99 here")
    assert "sk-live-stagingvalue99" in client_as(None).get(url(public)).content.decode()
    Trajectory.objects.filter(pk=public.pk).update(
        redactions={"db.acme-corp.internal": "<HOST_1>", "sk-live-stagingvalue99": "<KEY_1>"}
    )
    reindex(public)
    for where in (url(public), f"/t/{public.share_id}/steps/2/feedback"):
        body = client_as(None).get(where).content.decode()
        assert "sk-live-stagingvalue99" not in body
        assert "&lt;KEY_1&gt;" in body or "<KEY_1>" in body


def test_xss_in_a_correction_is_escaped(public, client_as, other_user, client):
    attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    give(client_as(other_user), public, correction=attack, mode="action")
    give(client_as(other_user), public, comment=attack)
    for where in (
        f"/t/{public.share_id}/steps/2/feedback",
        f"/t/{public.share_id}/steps/2/feedback?part=notes",
    ):
        page = client.get(where, HTTP_X_REQUESTED_WITH="fetch").content.decode()
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_finding_holds_the_text_and_the_moderator_shows_it_redacted(
    public, client_as, other_user, admin_client_moderator
):
    held = give(client_as(other_user), public, comment=f"use {TOKEN}")
    assert held["comments"][0]["state"] == "held"
    assert TOKEN not in client_as(None).get(url(public)).content.decode()
    queue = admin_client_moderator.get("/admin/feedback/stepnotereview/")
    assert queue.status_code == 200 and b"the scan found" in queue.content
    note = StepNote.objects.get()
    detail = admin_client_moderator.get(f"/admin/feedback/stepnotereview/{note.pk}/change/")
    # The trajectory in context: its title, the step and its neighbours.
    assert b"list the files" in detail.content and b"ls 0" in detail.content
    admin_client_moderator.post(
        "/admin/feedback/stepnotereview/",
        {"action": "show", "_selected_action": [note.pk]},
    )
    (shown,) = client_as(None).get(url(public)).json()["comments"]
    assert shown["state"] == "shown"
    assert shown["text"] == f"use <{note.findings[0]['kind'].upper()}>"


def test_moderator_rejects_and_others_cannot_use_the_queue(
    public, client_as, other_user, admin_client_moderator, client
):
    give(client_as(other_user), public, comment=f"use {TOKEN}")
    note = StepNote.objects.get()
    client.force_login(other_user)
    assert client.get("/admin/feedback/stepnotereview/").status_code == 302
    admin_client_moderator.post(
        "/admin/feedback/stepnotereview/", {"action": "reject", "_selected_action": [note.pk]}
    )
    assert StepNote.objects.get().state == NoteState.REJECTED
    assert client_as(None).get(url(public)).json()["comments"] == []


def test_reports_from_distinct_readers_hold_a_note(
    public, client_as, other_user, django_user_model, settings
):
    settings.TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT = 2
    give(client_as(other_user), public, comment="buy cheap watches at example.com")
    note = StepNote.objects.get()
    report = f"/api/v1/trajectories/{public.share_id}/feedback/notes/{note.public_id}/report"
    first = client_as(django_user_model.objects.create_user("r1"))
    assert (
        first.post(report, {"reason": "spam"}, format="json", REMOTE_ADDR="10.0.0.1").status_code
        == 202
    )
    # One reader reporting again, or from the same address, does not hold it.
    first.post(report, {"reason": "spam"}, format="json", REMOTE_ADDR="10.0.0.1")
    assert StepNote.objects.get().state == NoteState.SHOWN
    second = client_as(django_user_model.objects.create_user("r2"))
    second.post(report, {"reason": "spam"}, format="json", REMOTE_ADDR="10.0.0.2")
    held = StepNote.objects.get()
    assert held.state == NoteState.HELD and "reported" in held.hold_reason
    assert client_as(None).get(url(public)).json()["comments"] == []


def test_a_setting_holds_new_accounts_feedback(public, client_as, django_user_model, settings):
    settings.TRAJHUB_FEEDBACK_HOLD_NEW_ACCOUNTS_DAYS = 3
    fresh = django_user_model.objects.create_user("fresh")
    seasoned = django_user_model.objects.create_user("seasoned")
    seasoned.date_joined = timezone.now() - timedelta(days=10)
    seasoned.save()
    assert give(client_as(fresh), public, comment="hello")["comments"][0]["state"] == "held"
    assert give(client_as(seasoned), public, comment="hi")["comments"][-1]["state"] == "shown"
    assert [n["author"] for n in client_as(None).get(url(public)).json()["comments"]] == [
        "seasoned"
    ]


def test_owner_is_told_once_of_corrections_and_flags(
    public, client_as, other_user, owner, django_user_model
):
    give(client_as(owner), public, correction="my own note", first_wrong=True)
    assert Notice.objects.count() == 0  # the owner's own feedback tells nobody
    give(client_as(other_user), public, correction="run the tests first", first_wrong=True)
    third = django_user_model.objects.create_user("third")
    give(client_as(third), public, step=4, correction="and again")
    kinds = sorted(Notice.objects.filter(user=owner).values_list("kind", flat=True))
    assert kinds == ["corrected", "flagged"]  # one of each while unread
    notice = Notice.objects.get(kind="corrected")
    assert f"/t/{public.share_id}/steps/2/feedback" in notice.link
    assert "run the tests" not in notice.body  # the reader's words stay on the page


def test_a_held_correction_tells_the_owner_only_once_shown(
    public, client_as, other_user, owner, admin_client_moderator
):
    give(client_as(other_user), public, correction=f"set {TOKEN}")
    assert not Notice.objects.filter(kind="corrected").exists()
    note = StepNote.objects.get()
    admin_client_moderator.post(
        "/admin/feedback/stepnotereview/", {"action": "show", "_selected_action": [note.pk]}
    )
    assert Notice.objects.filter(user=owner, kind="corrected").count() == 1


def test_owner_opts_out_of_one_kind(public, client_as, other_user, owner, mailoutbox):
    owner.email = "owner@example.org"
    owner.save()
    notice_unsubscribe(token=unsubscribe_token(email=owner.email, kind="flagged"))
    give(client_as(other_user), public, correction="run the tests first", first_wrong=True)
    sent = {notice.kind: notice_email(notice=notice) for notice in Notice.objects.all()}
    assert sent == {"corrected": True, "flagged": False}


@pytest.fixture
def admin_client_moderator(django_user_model):
    from django.test import Client

    client = Client()
    user = django_user_model.objects.create_user("mod-staff", password="pw", is_staff=True)
    group, _ = Group.objects.get_or_create(name="moderators")
    user.groups.add(group)
    client.force_login(user)
    return client
