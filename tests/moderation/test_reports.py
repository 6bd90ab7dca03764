"""Readers' reports: a Report button on every public trajectory, a no-JS form (CSRF, rate
limited, anonymous allowed), and enough distinct reporters within the window hold it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.moderation.models import AuditEntry, Report
from apps.moderation.services import trajectory_approve, trajectory_scan
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
    refused = report(others[2], "10.2.0.1")
    assert refused.status_code == 429 and refused["Retry-After"] == "3600"
    assert b"Too many reports" in refused.content
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
