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


def test_search_ranks_best_match_first_and_newest_is_one_click_away(browser_page):
    make_trajectory(title="Heron sightings", events=["logged"], age_minutes=60)
    make_trajectory(
        title="Tidy the build",
        events=[
            "============================= test session starts =============================="
            " heron",
            "the heron test fails because the fixture leaks state",
        ],
    )
    bp, page = browser_page, browser_page.page
    bp.goto("/browse/?q=heron")
    titles = page.locator(".traj-title")
    assert titles.all_inner_texts() == ["Heron sightings", "Tidy the build"]
    assert page.locator("#sort").input_value() == "relevance"
    # The step's best passage, not the banner that also holds the word.
    passage = page.locator(".traj-snippet").last.inner_text()
    assert "fixture leaks" in passage and "session starts" not in passage
    page.get_by_role("link", name="Newest").click()
    page.wait_for_url("**ordering=-created**")
    assert titles.all_inner_texts() == ["Tidy the build", "Heron sightings"]
    assert page.locator("#sort").input_value() == "-created"
    # And back through the form's own select, as without the links.
    page.locator("#sort").select_option("relevance")
    page.locator(".sort-form button[type=submit]").click()
    page.wait_for_url("**ordering=relevance**")
    assert titles.all_inner_texts() == ["Heron sightings", "Tidy the build"]
    page.set_viewport_size(PHONE)
    bp.screenshot("browse-relevance-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert bp.page_errors == [] and bp.console_errors == []
