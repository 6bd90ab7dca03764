"""The star button in real Chromium (issue 23): a form with its CSRF token, as a reader
presses it."""

from __future__ import annotations

from tests.browser.test_upload import assert_quiet
from tests.ingest_helpers import make_trajectory


def test_a_reader_stars_and_unstars_a_trajectory(browser_page, browser_login, owner, other_user):
    trajectory = make_trajectory(owner=owner)
    bp, page = browser_page, browser_page.page
    browser_login(bp.context, other_user)
    bp.goto(trajectory.get_absolute_url())
    button = page.locator(".star-button")
    assert button.inner_text() == "☆ Star 0"

    button.click()

    page.wait_for_url(f"**/t/{trajectory.share_id}/")
    assert page.locator(".star-button").inner_text() == "★ Starred 1"
    assert page.locator(".star-button").get_attribute("aria-pressed") == "true"
    trajectory.refresh_from_db()
    assert trajectory.star_count == 1
    bp.screenshot("page-starred")
    bp.goto("/browse/?ordering=-stars")
    assert page.locator(".traj-row .meta-stars").first.inner_text() == "★ 1"
    bp.goto(trajectory.get_absolute_url())

    page.locator(".star-button").click()

    page.wait_for_url(f"**/t/{trajectory.share_id}/")
    assert page.locator(".star-button").inner_text() == "☆ Star 0"
    assert_quiet(bp)
