"""The owner's outcome form on the Result card in real Chromium (issue 23): the browser sends the
form with its CSRF token and its own Origin, the page comes back with the outcome; a post from
another origin is refused even with a valid token."""

from __future__ import annotations

import re

from django.test import Client

from apps.trajectories.models import Trajectory
from tests.browser.test_upload import assert_quiet
from tests.ingest_helpers import make_trajectory


def test_the_owner_says_it_worked_then_clears_it(browser_page, browser_login, owner, other_user):
    trajectory = make_trajectory(owner=owner)
    bp, page = browser_page, browser_page.page
    browser_login(bp.context, owner)
    bp.goto(trajectory.get_absolute_url())
    card = page.locator("#result")
    assert "Did it work?" in card.inner_text()

    card.get_by_role("button", name="It worked").click()

    page.wait_for_url(f"**/t/{trajectory.share_id}/#result")
    assert "Saved: resolved, as you said." in page.locator("body").inner_text()
    assert page.locator("#result h2 .badge").inner_text() == "Resolved"
    assert "Resolved, said by the owner" in page.locator("#result").inner_text()
    pressed = page.locator("#result").get_by_role("button", name="It worked")
    assert pressed.get_attribute("aria-pressed") == "true"
    trajectory.refresh_from_db()
    assert (trajectory.outcome, trajectory.outcome_source) == ("resolved", "owner")
    bp.screenshot("result-card-outcome-owner")

    page.locator("#result").get_by_role("button", name="Clear").click()
    page.wait_for_url(f"**/t/{trajectory.share_id}/#result")
    assert "the outcome is unknown again" in page.locator("body").inner_text()
    trajectory.refresh_from_db()
    assert trajectory.outcome == "unknown"
    assert_quiet(bp)


def test_a_post_from_another_origin_is_refused(live_server, owner):
    trajectory = make_trajectory(owner=owner)
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    page = client.get(trajectory.get_absolute_url()).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    path = f"/t/{trajectory.share_id}/outcome"
    refused = client.post(
        path,
        {"outcome": "resolved", "csrfmiddlewaretoken": token},
        HTTP_ORIGIN="https://elsewhere.example",
        secure=True,
    )
    assert refused.status_code == 403
    assert Trajectory.objects.get(pk=trajectory.pk).outcome == "unknown"
    accepted = client.post(
        path,
        {"outcome": "resolved", "csrfmiddlewaretoken": token},
        HTTP_ORIGIN="http://testserver",
    )
    assert accepted.status_code == 302
    assert Trajectory.objects.get(pk=trajectory.pk).outcome == "resolved"
