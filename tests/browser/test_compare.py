"""/compare/ in real Chromium (issue 11): from "Compare with…" on a trajectory page to two
aligned columns, on a desktop and a phone."""

from __future__ import annotations

from tests.browser.conftest import PHONE
from tests.trajectories.test_outcome import LONG_PATCH, eval_row
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
    # Side by side, level with each other.
    tops = [page.locator(".cmp-side").nth(n).bounding_box()["y"] for n in (0, 1)]
    assert abs(tops[0] - tops[1]) < 1, tops
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


def test_long_runs_load_their_rows_as_the_reader_scrolls(browser_page, owner):
    from tests.trajectories.test_compare import v0

    a = ingest(v0([f"a{n}" for n in range(300)], "Long"), owner=owner, visibility="public")
    b = ingest(
        v0([f"b{n}" for n in range(300)], "Long 2"), owner=owner, visibility="public", index=0
    )
    bp, page = browser_page, browser_page.page
    bp.goto(f"/compare/?a={a.share_id}&b={b.share_id}")
    rows = page.locator("#cmp-table tbody tr")
    assert rows.count() == 200  # the first chunk only, server-rendered
    for _ in range(10):
        page.mouse.wheel(0, 20000)
        if rows.count() == 601:
            break
        page.wait_for_timeout(300)
    page.wait_for_function("() => document.querySelectorAll('#cmp-table tbody tr').length === 601")
    assert page.locator("#cmp-more").is_hidden()
    assert page.locator("#cmp-range").inner_text() == "1–601"
    steps = page.eval_on_selector_all(
        f'#cmp-table a[href^="/t/{a.share_id}/#step-"]', "links => links.map(l => l.textContent)"
    )
    assert steps == [str(n) for n in range(1, 602)]  # every step of A once, in order
    bp.screenshot("compare-long-desktop")
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []
