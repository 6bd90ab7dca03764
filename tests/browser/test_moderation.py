"""Moderation in real Chromium: a reader reports a trajectory from its page (the plain form,
no script needed), enough reports hold it, and a moderator decides it on the queue item's page
in Django admin. Screenshots: report form, item page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from apps.moderation.models import AuditEntry, Report
from apps.moderation.services import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory


def assert_quiet(browser_page) -> None:
    assert browser_page.dialogs == []
    assert browser_page.page_errors == []
    assert browser_page.console_errors == []


@pytest.fixture
def published():
    trajectory = make_trajectory(
        events=["pytest tests/test_pagination.py", "1 failed"], title="Fix the pagination test"
    )
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def test_a_reader_reports_from_the_trajectory_page(browser_page, published, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 1
    browser_page.page.route("**/*.js", lambda route: route.abort())  # works without script
    browser_page.goto(published.get_absolute_url())
    browser_page.page.get_by_role("link", name="Report").click()
    browser_page.page.get_by_label("It shows a secret").check()
    browser_page.page.get_by_label("Details (optional)").fill("Step 2 prints a token")
    browser_page.screenshot("moderation-report-form", full_page=True)
    browser_page.page.get_by_role("button", name="Send the report").click()
    assert browser_page.page.get_by_role("heading", name="Thank you").is_visible()
    assert Report.objects.get().text == "Step 2 prints a token"
    assert Trajectory.objects.get(pk=published.pk).review_state == "held"


def test_a_moderator_decides_on_the_items_page(browser_page, browser_login, django_user_model):
    moderator = django_user_model.objects.create_user("mod-browser", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    key = s.openai_key()
    trajectory = make_trajectory(events=[f"<b>env</b> OPENAI_API_KEY={key}"], title="Deploy")
    trajectory_scan(trajectory=trajectory)
    browser_login(browser_page.context, moderator)
    browser_page.goto("/admin/moderation/queueitem/")
    browser_page.page.get_by_role("link", name=trajectory.share_id[:12]).click()
    mark = browser_page.page.locator("mark").first
    assert mark.inner_text() == key
    assert "<b>env</b>" in browser_page.page.locator("code.finding-context").first.inner_text()
    browser_page.screenshot("moderation-queue-item", full_page=True)
    browser_page.page.get_by_label("Reason").fill("A live key: revoke it and share again")
    browser_page.page.get_by_role("button", name="Reject").click()
    assert "Rejected" in browser_page.page.locator("ul.messagelist").inner_text()
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "rejected"
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="rejected")
    assert entry.actor_username == "mod-browser"
    assert_quiet(browser_page)
