"""Readers' reports: a Report button on every public trajectory, a no-JS form (CSRF, rate
limited, anonymous allowed), and enough distinct reporters within the window hold it."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import Notice
from apps.moderation.admin.actions import row_token
from apps.moderation.errors import ModerationError
from apps.moderation.models import AuditEntry, Report
from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.reports import reports_dismiss
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db

REPORTER_EMAIL = "reader.reporting@example.org"


@pytest.fixture
def published(django_user_model):
    owner = django_user_model.objects.create_user(
        "sharer", email="sharer@example.org", password="x"
    )
    trajectory = make_trajectory(events=["ls -la"], owner=owner, title="A public one")
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert trajectory.is_public
    return trajectory


def report(trajectory, address: str, client: Client | None = None, **data):
    client = client or Client(REMOTE_ADDR=address)
    return client.post(
        f"/t/{trajectory.share_id}/report",
        {"reason": "secret", "text": "step 3 shows a key", **data},
        REMOTE_ADDR=address,
    )


def state(trajectory) -> str:
    return Trajectory.objects.get(pk=trajectory.pk).review_state


def test_every_public_trajectory_page_has_a_report_button(published, owner):
    page = Client().get(published.get_absolute_url())
    assert f'href="/t/{published.share_id}/report"'.encode() in page.content
    form = Client().get(f"/t/{published.share_id}/report")
    assert form.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in form.content and b'type="radio"' in form.content
    private = make_trajectory(events=["ls"], owner=owner, visibility="private")
    trajectory_scan(trajectory=private)
    viewer = Client()
    viewer.force_login(owner)
    assert b"/report" not in viewer.get(private.get_absolute_url()).content


@pytest.mark.parametrize("state_, visibility", [("held", "public"), ("approved", "private")])
@pytest.mark.parametrize("who", [None, "owner", "other_user", "admin_moderator"])
def test_only_public_trajectories_can_be_reported(request, who, state_, visibility):
    user = request.getfixturevalue(who) if who else None
    trajectory = make_trajectory(
        events=["ls"],
        review_state=state_,
        visibility=visibility,
        owner=request.getfixturevalue("owner"),
    )
    client = Client()
    if user is not None:
        client.force_login(user)
    assert client.get(f"/t/{trajectory.share_id}/report").status_code == 404
    assert report(trajectory, "10.1.0.1", client).status_code == 404
    assert client.get(f"/t/{'0' * 64}/report").status_code == 404
    assert not Report.objects.exists()


def test_the_form_needs_the_csrf_token(published):
    client = Client(enforce_csrf_checks=True)
    response = client.post(f"/t/{published.share_id}/report", {"reason": "spam"})
    assert response.status_code == 403
    assert not Report.objects.exists()


def test_a_bad_reason_is_a_400_that_says_so(published):
    response = report(published, "10.1.0.1", reason="nonsense")
    assert response.status_code == 400 and b"Select a valid choice" in response.content
    assert not Report.objects.exists()


def test_reports_from_distinct_addresses_hold_it_and_tell_the_owner(
    published, settings, django_capture_on_commit_callbacks
):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 3
    with django_capture_on_commit_callbacks(execute=True):
        for n in (1, 2):
            assert report(published, f"10.1.0.{n}", email=REPORTER_EMAIL).status_code == 200
    assert state(published) == "approved"
    assert mail.outbox == []
    with django_capture_on_commit_callbacks(execute=True):
        assert report(published, "10.1.0.3").status_code == 200
    assert state(published) == "held"
    assert not Trajectory.objects.public().filter(pk=published.pk).exists()
    page = Client().get(published.get_absolute_url()).content.decode()
    assert "A public one" not in page and "ls -la" not in page  # "waiting for a moderator"
    entry = AuditEntry.objects.get(share_id=published.share_id, action="reports_held")
    assert entry.actor_kind == "report" and entry.details["reporters"] == 3
    (notice,) = mail.outbox
    assert notice.to == ["sharer@example.org"]
    assert "reported" in notice.subject.lower() and "3 readers reported it" in notice.body
    assert REPORTER_EMAIL not in notice.body and "step 3 shows a key" not in notice.body


def test_one_address_reporting_again_counts_once(published, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    for _ in range(3):
        assert report(published, "10.1.0.9").status_code == 200
    assert Report.objects.count() == 1
    assert state(published) == "approved"


def test_distinct_accounts_behind_one_address_count_once(published, settings, django_user_model):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    for name in ("reader-a", "reader-b"):
        client = Client()
        client.force_login(django_user_model.objects.create_user(name))
        assert report(published, "10.1.0.50", client).status_code == 200
    assert state(published) == "approved"  # one address, one reporter


def test_reports_older_than_the_window_do_not_count(published, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    settings.TRAJHUB_REPORT_WINDOW_SECONDS = 3600
    report(published, "10.1.0.1")
    Report.objects.update(created_at=timezone.now() - timedelta(hours=2))
    report(published, "10.1.0.2")
    assert state(published) == "approved"


def test_a_moderators_approval_answers_the_reports(published, settings, admin_moderator):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    report(published, "10.1.0.1")
    report(published, "10.1.0.2")
    held = Trajectory.objects.get(pk=published.pk)
    trajectory_approve(trajectory=held, moderator=admin_moderator, note="no key there")
    assert state(published) == "approved"
    assert not Report.objects.filter(resolved_at__isnull=True).exists()
    report(published, "10.1.0.3")  # one new report: not enough on its own
    assert state(published) == "approved"


def test_reports_are_rate_limited_per_address(published, settings):
    settings.TRAJHUB_REPORTS_PER_HOUR = 2
    settings.TRAJHUB_REPORT_HOLD_COUNT = 100
    others = [make_trajectory(events=["ls"], review_state="approved") for _ in range(3)]
    assert report(others[0], "10.2.0.1").status_code == 200
    assert report(others[1], "10.2.0.1").status_code == 200
    before = int(time.time())
    refused = report(others[2], "10.2.0.1")
    after = int(time.time())
    # The time the hour's window has left (core.ratelimit aligns windows on the clock).
    assert refused.status_code == 429
    assert refused["Retry-After"] in {str(3600 - now % 3600) for now in range(before, after + 1)}
    assert b"Too many reports from your network in the last hour" in refused.content
    assert report(others[2], "10.2.0.2").status_code == 200  # another address


def test_the_reporters_email_is_never_shown_publicly(published, client_as):
    report(published, "10.1.0.1", email=REPORTER_EMAIL)
    assert Report.objects.get().email == REPORTER_EMAIL
    for url in (
        published.get_absolute_url(),
        f"/api/v1/trajectories/{published.share_id}",
        f"/api/v1/trajectories/{published.share_id}/events",
        "/browse/",
        "/feed.atom",
    ):
        assert REPORTER_EMAIL not in Client().get(url).content.decode(), url


def test_overruled_reporters_do_not_hold_it_again(published, admin_moderator, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 3
    for address in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
        report(published, address)
    assert state(published) == "held"
    trajectory_approve(
        trajectory=Trajectory.objects.get(pk=published.pk), moderator=admin_moderator, note="ok"
    )
    assert state(published) == "approved"
    for address in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
        report(published, address)
    assert state(published) == "approved"  # the same three, overruled: they count no more


def test_accounts_behind_one_address_count_as_one_reporter(published, django_user_model, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 3
    for name in ("sock-a", "sock-b"):
        client = Client(REMOTE_ADDR="198.51.100.7")
        client.force_login(django_user_model.objects.create_user(name))
        report(published, "198.51.100.7", client=client)
    report(published, "198.51.100.7")  # and anonymously
    assert state(published) == "approved"
    assert Report.objects.filter(trajectory=published).count() == 3


# --- Dismissing reports -------------------------------------------------------------------------


def report_as(trajectory, user, address: str):
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    return report(trajectory, address, client)


@pytest.fixture
def readers(django_user_model):
    return [
        django_user_model.objects.create_user(f"reader-{n}", email=f"reader{n}@example.org")
        for n in (1, 2, 3)
    ]


def fresh(trajectory) -> Trajectory:
    return Trajectory.objects.get(pk=trajectory.pk)


def test_dismissing_reports_keeps_it_public_and_the_same_reporters_count_no_more(
    published, admin_moderator, readers, settings
):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 3
    for n, reader in enumerate(readers[:2], start=1):
        report_as(published, reader, f"198.51.100.{n}")
    assert state(published) == "approved"
    assert reports_dismiss(trajectory=fresh(published), moderator=admin_moderator) == 2
    assert state(published) == "approved"
    assert Trajectory.objects.public().filter(pk=published.pk).exists()
    assert not Report.objects.filter(resolved_at__isnull=True).exists()
    assert set(Report.objects.values_list("resolution", flat=True)) == {"dismissed"}
    entry = AuditEntry.objects.get(share_id=published.share_id, action="reports_dismissed")
    assert entry.actor == admin_moderator and entry.details["reports"] == 2
    # The same two again, and a third: the dismissed two count no more, so one reporter.
    for n, reader in enumerate(readers, start=1):
        report_as(published, reader, f"198.51.100.{n}")
    assert state(published) == "approved"


def test_dismissing_reports_that_held_it_makes_it_public_again(
    published, admin_moderator, readers, settings
):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 3
    for n, reader in enumerate(readers, start=1):
        report_as(published, reader, f"198.51.100.{n}")
    assert state(published) == "held"
    dismissed = reports_dismiss(
        trajectory=fresh(published), moderator=admin_moderator, note="no key in step 3"
    )
    assert dismissed == 3
    assert state(published) == "approved"
    assert Trajectory.objects.public().filter(pk=published.pk).exists()
    assert set(Report.objects.values_list("resolution", flat=True)) == {"dismissed"}
    actions = set(
        AuditEntry.objects.filter(share_id=published.share_id).values_list("action", flat=True)
    )
    assert {"reports_held", "reports_dismissed", "approved"} <= actions
    for n, reader in enumerate(readers, start=1):
        report_as(published, reader, f"198.51.100.{n}")
    assert state(published) == "approved"  # dismissed reporters do not hold it again


def test_dismissing_does_not_approve_what_the_scan_held(admin_moderator, readers, owner):
    trajectory = make_trajectory(events=["ls"], owner=owner, review_state="held")
    Report.objects.create(trajectory=trajectory, reason="spam", reporter_key="addr:x")
    reports_dismiss(trajectory=trajectory, moderator=admin_moderator)
    assert state(trajectory) == "held"


def test_only_moderators_dismiss_reports(published, readers, other_user):
    report_as(published, readers[0], "198.51.100.1")
    with pytest.raises(ModerationError):
        reports_dismiss(trajectory=fresh(published), moderator=other_user)
    assert Report.objects.filter(resolved_at__isnull=True).count() == 1
    assert not AuditEntry.objects.filter(action="reports_dismissed").exists()


def test_dismissing_with_no_open_report_is_refused(published, admin_moderator):
    with pytest.raises(ModerationError):
        reports_dismiss(trajectory=published, moderator=admin_moderator)


def test_reporters_with_an_account_are_told_the_outcome(
    published, admin_moderator, readers, django_capture_on_commit_callbacks
):
    report_as(published, readers[0], "198.51.100.1")
    report(published, "198.51.100.9", email=REPORTER_EMAIL)  # anonymous: no notice
    with django_capture_on_commit_callbacks(execute=True):
        reports_dismiss(trajectory=fresh(published), moderator=admin_moderator, note="nope")
    (notice,) = Notice.objects.filter(kind="report_outcome")
    assert notice.user == readers[0] and notice.share_id == published.share_id
    # Named by its title from the redacted view (issue 20), never its events' text.
    assert "dismissed" in notice.body and "“A public one”" in notice.body
    assert "ls -la" not in notice.body
    assert "nope" not in notice.body  # the moderator's note is for the owner
    (sent,) = [m for m in mail.outbox if m.to == ["reader1@example.org"]]
    assert "report" in sent.subject.lower()
    assert not [m for m in mail.outbox if REPORTER_EMAIL in m.to]


@pytest.mark.parametrize(("decide", "word"), [("hide", "hidden"), ("reject", "rejected")])
def test_reporters_are_told_when_a_moderator_hides_or_rejects_it(
    published, admin_moderator, readers, decide, word
):
    report_as(published, readers[0], "198.51.100.1")
    service = trajectory_hide if decide == "hide" else trajectory_reject
    service(trajectory=fresh(published), moderator=admin_moderator, note="a key")
    (notice,) = Notice.objects.filter(kind="report_outcome", user=readers[0])
    assert f"was {word}" in notice.body and "a key" not in notice.body


def test_the_report_admin_action_dismisses(published, admin_moderator, readers, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    for n, reader in enumerate(readers[:2], start=1):
        report_as(published, reader, f"198.51.100.{n}")
    assert state(published) == "held"
    client = Client()
    client.force_login(admin_moderator)
    response = client.post(
        reverse("admin:moderation_report_changelist"),
        {
            "action": "dismiss",
            "_selected_action": [Report.objects.first().pk],
            "index": 0,
            "reason": "fine",
        },
        follow=True,
    )
    assert response.status_code == 200 and b"2 open reports dismissed" in response.content
    assert state(published) == "approved"
    assert not Report.objects.filter(resolved_at__isnull=True).exists()
    assert AuditEntry.objects.get(action="reports_dismissed").reason == "fine"


def test_the_queue_admin_action_and_page_dismiss(published, admin_moderator, readers, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 2
    for n, reader in enumerate(readers[:2], start=1):
        report_as(published, reader, f"198.51.100.{n}")
    row = fresh(published)
    assert row.review_state == "held"
    client = Client()
    client.force_login(admin_moderator)
    response = client.post(
        reverse("admin:moderation_queueitem_changelist"),
        {
            "action": "dismiss_reports",
            "_selected_action": [row.pk],
            "index": 0,
            f"seen-{row.pk}": row_token(row),
        },
        follow=True,
    )
    assert response.status_code == 200 and b"had their reports dismissed" in response.content
    assert state(published) == "approved"
    # The item's page: a new report, dismissed with its button.
    report_as(published, readers[2], "198.51.100.3")
    page = client.get(reverse("admin:moderation_queueitem_change", args=[row.pk]))
    assert b'value="dismiss_reports"' in page.content
    client.post(
        reverse("admin:moderation_queueitem_change", args=[row.pk]),
        {"decision": "dismiss_reports", "seen_state": "approved"},
    )
    assert not Report.objects.filter(resolved_at__isnull=True).exists()
    assert AuditEntry.objects.filter(action="reports_dismissed").count() == 2


def test_a_non_moderator_cannot_use_the_admin_action(published, readers, django_user_model):
    report_as(published, readers[0], "198.51.100.1")
    staff = django_user_model.objects.create_user("plain-staff", is_staff=False)
    client = Client()
    client.force_login(staff)
    client.post(
        reverse("admin:moderation_report_changelist"),
        {"action": "dismiss", "_selected_action": [Report.objects.get().pk], "index": 0},
    )
    assert Report.objects.filter(resolved_at__isnull=True).count() == 1
