"""Search results in real Chromium show the highlighted passage that matched (issue 11)."""

from __future__ import annotations

from tests.browser.conftest import PHONE
from tests.trajectories.site_factories import make_trajectory


def test_browse_search_shows_highlighted_snippets(browser_page):
    make_trajectory(
        title="Fix the build",
        events=[
            "The flaky pagination test fails on page two of the invoice list, every second run."
        ],
    )
    make_trajectory(title="Unrelated", events=["nothing to see"])
    bp, page = browser_page, browser_page.page
    bp.goto("/browse/?q=pagination")
    snippet = page.locator(".traj-snippet")
    assert snippet.count() == 1 and "invoice" in snippet.inner_text()
    assert page.locator(".traj-snippet mark.hit").inner_text() == "pagination"
    bp.screenshot("browse-snippet-desktop")
    page.set_viewport_size(PHONE)
    bp.screenshot("browse-snippet-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert bp.page_errors == [] and bp.console_errors == []
