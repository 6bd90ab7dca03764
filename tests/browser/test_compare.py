"""/compare/ in real Chromium (issue 11): from "Compare with…" on a trajectory page to two
aligned columns, on a desktop and a phone."""

from __future__ import annotations

from tests.browser.conftest import PHONE
from tests.trajectories.test_results import LONG_PATCH, eval_row
from tests.trajectories.viewer_factories import ingest


def test_compare_with_then_side_by_side(browser_page, owner, other_user):
    a = ingest(eval_row(), owner=owner, visibility="public")
    b = ingest(
        eval_row(LONG_PATCH.replace("line 3 new", "line 3 other"), resolved=False),
        owner=other_user,
        visibility="public",
    )
    bp, page = browser_page, browser_page.page
    bp.goto(a.get_absolute_url())
    page.get_by_role("link", name="Compare with…").click()
    page.wait_for_url("**/compare/?a=*")
    bp.screenshot("compare-choose")
    page.locator(f'a[href*="b={b.share_id}"]').click()
    page.wait_for_selector("#cmp-table")
    assert page.locator(".cmp-side").count() == 2
    assert page.locator("#cmp-table tbody tr").count() >= 10
    assert "line 3 other" in page.locator(".cmp-patch").inner_text()
    bp.screenshot("compare-desktop", full_page=True)
    page.set_viewport_size(PHONE)
    bp.screenshot("compare-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    # A step number opens that step on its own page.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#cmp-table tbody tr").nth(2).locator("td.cmp-n a").first.click()
    page.wait_for_url(f"**/t/{a.share_id}/#step-3")
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []
