"""The notice service: who gets a notice, what the email says, and the one-click unsubscribe."""

from __future__ import annotations

import logging

import pytest
from django.db import transaction
from django.test import Client

from apps.accounts.models import Notice, NoticeKind, NoticeOptOut
from apps.accounts.notices import notice_send, unsubscribe_url
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(owner):
    owner.email = "owner@example.org"
    owner.save()
    return make_trajectory(
        owner=owner,
        title="Deploy with sk-secret-title",
        redactions={"sk-secret-title": "<OPENAI_API_KEY_1>"},
        review_state="held",
    )


@pytest.fixture
def anonymous_share():
    return make_trajectory(owner=None, contact_email="anon@example.org", review_state="held")


def _send(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        notice_send(**kwargs)


def test_owner_gets_a_stored_notice_and_an_email(
    owned, owner, mailoutbox, django_capture_on_commit_callbacks
):
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned, reason="an AWS key")
    notice = Notice.objects.get()
    assert notice.user == owner and notice.kind == "held" and notice.share_id == owned.share_id
    assert notice.read_at is None and notice.emailed_at is not None
    [mail] = mailoutbox
    assert mail.to == ["owner@example.org"]
    assert "waiting for a moderator" in mail.subject
    assert "an AWS key" in mail.body
    assert f"/t/{owned.share_id}/" in mail.body
    # Named by its title from the redacted view: what the scan found in it stays out.
    assert "“Deploy with <OPENAI_API_KEY_1>”" in mail.subject
    assert "“Deploy with <OPENAI_API_KEY_1>”" in mail.body
    assert "sk-secret-title" not in mail.body and "sk-secret-title" not in mail.subject


def test_anonymous_sharer_is_emailed_the_manage_link_and_the_address_is_forgotten(
    anonymous_share, mailoutbox, django_capture_on_commit_callbacks
):
    _send(django_capture_on_commit_callbacks, kind="hidden", trajectory=anonymous_share)
    [mail] = mailoutbox
    assert mail.to == ["anon@example.org"]
    assert f"/t/{anonymous_share.share_id}/unlock" in mail.body
    notice = Notice.objects.get()
    assert notice.user is None and notice.email == ""  # cleared once sent


def test_explicit_user_or_email_wins_over_the_trajectory(
    owned, other_user, mailoutbox, django_capture_on_commit_callbacks
):
    other_user.email = "other@example.org"
    other_user.save()
    _send(django_capture_on_commit_callbacks, kind="reported", trajectory=owned, user=other_user)
    _send(
        django_capture_on_commit_callbacks, kind="reported", trajectory=owned, email="x@example.org"
    )
    assert [m.to for m in mailoutbox] == [["other@example.org"], ["x@example.org"]]
    assert Notice.objects.filter(user=other_user).count() == 1


def test_user_without_email_still_gets_the_dashboard_notice(
    owner, mailoutbox, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner)
    _send(django_capture_on_commit_callbacks, kind="hidden", trajectory=trajectory)
    assert Notice.objects.filter(user=owner).count() == 1
    assert mailoutbox == []


def test_nobody_to_tell_stores_nothing(mailoutbox, django_capture_on_commit_callbacks):
    trajectory = make_trajectory(owner=None, contact_email="")
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=trajectory)
    assert Notice.objects.count() == 0 and mailoutbox == []


def test_unknown_kind_is_refused(owned):
    with pytest.raises(ValueError):
        notice_send(kind="nonsense", trajectory=owned)


def test_rejected_says_how_to_ask_for_a_second_look(
    owned, mailoutbox, django_capture_on_commit_callbacks
):
    _send(
        django_capture_on_commit_callbacks,
        kind="rejected",
        trajectory=owned,
        reason="personal data of a third party",
        link="https://trajhub.example/appeal/abc",
    )
    [mail] = mailoutbox
    assert "second look" in mail.body and "https://trajhub.example/appeal/abc" in mail.body
    assert "personal data of a third party" in mail.body


@pytest.mark.parametrize("kind", NoticeKind.values)
def test_every_kind_has_a_subject_and_body_and_unsubscribe_headers(
    kind, owned, mailoutbox, django_capture_on_commit_callbacks
):
    _send(
        django_capture_on_commit_callbacks, kind=kind, trajectory=owned, link="https://x.example/l"
    )
    [mail] = mailoutbox
    assert mail.subject and "{" not in mail.subject
    assert "{%" not in mail.body and "{{" not in mail.body
    url = mail.extra_headers["List-Unsubscribe"].strip("<>")
    assert url.startswith("http") and "/notices/unsubscribe/" in url
    assert url in mail.body
    assert mail.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_nothing_is_sent_when_the_callers_transaction_rolls_back(
    owned, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                notice_send(kind="held", trajectory=owned)
                raise RuntimeError("the moderation change failed")
        except RuntimeError:
            pass
    assert callbacks == [] and mailoutbox == [] and Notice.objects.count() == 0


def _unsubscribe_path(email: str, kind: str) -> str:
    return unsubscribe_url(email=email, kind=kind).split("://", 1)[1].split("/", 1)[1]


def test_one_click_unsubscribe_stops_that_kind_only(
    owned, mailoutbox, django_capture_on_commit_callbacks
):
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned)
    url = mailoutbox[0].extra_headers["List-Unsubscribe"].strip("<>")
    path = "/" + url.split("://", 1)[1].split("/", 1)[1]
    # A mail client's RFC 8058 POST: no session, no CSRF token.
    client = Client(enforce_csrf_checks=True)
    page = client.get(path)
    assert page.status_code == 200 and b"Unsubscribe" in page.content
    assert NoticeOptOut.objects.count() == 0  # a GET (a link scanner) changes nothing
    response = client.post(path, {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200 and b"no more emails" in response.content
    # The opt-out keeps no address.
    assert "owner@example.org" not in str(list(NoticeOptOut.objects.values()))
    mailoutbox.clear()
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned)
    _send(django_capture_on_commit_callbacks, kind="rejected", trajectory=owned)
    assert [m.subject for m in mailoutbox] == ["“Deploy with <OPENAI_API_KEY_1>” was not published"]
    # The dashboard still lists the unsubscribed kind.
    assert Notice.objects.filter(kind="held").count() == 2
    assert client.post(path).status_code == 200  # repeating is harmless


def test_a_forged_or_altered_unsubscribe_link_is_refused(client):
    path = _unsubscribe_path("a@example.org", "held")
    assert client.post(path[:-2] + "xx").status_code == 404
    assert client.get("/notices/unsubscribe/not-a-token").status_code == 404
    assert NoticeOptOut.objects.count() == 0


def test_no_address_reaches_the_logs(
    owned, anonymous_share, caplog, mailoutbox, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.DEBUG)
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned)
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=anonymous_share)
    assert len(mailoutbox) == 2
    assert "@example.org" not in caplog.text


def test_a_broker_that_is_down_does_not_break_the_caller(
    owned, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    from apps.accounts import tasks

    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.notice_email_send, "delay", down)
    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned)
    assert Notice.objects.count() == 1
    assert "could not queue" in caplog.text


def test_approving_what_the_scan_held_answers_the_waiting_notice(
    owned, owner, moderator, mailoutbox, django_capture_on_commit_callbacks
):
    """Issue 20: nobody was told when a held trajectory was approved, and the "waiting for a
    moderator" notice stayed unread."""
    from apps.moderation.services.decisions import trajectory_approve

    _send(django_capture_on_commit_callbacks, kind="held", trajectory=owned, reason="a key")
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_approve(trajectory=owned, moderator=moderator, note="a test key, harmless")
    waiting = Notice.objects.get(kind="held", share_id=owned.share_id)
    assert waiting.read_at is not None
    approved = Notice.objects.get(kind="approved", user=owner)
    assert approved.read_at is None and "public now" in approved.body
    assert "harmless" in approved.body
    assert [m.subject for m in mailoutbox][-1].endswith("” was approved and is public now")
