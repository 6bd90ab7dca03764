"""Browse by readers' feedback in real Chromium (issue 23): the filter panel's "Has corrections"
and "Flagged" boxes and "First wrong step marked at" choice, the "Most corrected" sort, and the
stats histogram's bars leading there."""

from __future__ import annotations

from apps.feedback.services import Author, step_feedback_give
from tests.browser.test_upload import assert_quiet
from tests.ingest_helpers import make_trajectory


def test_a_reader_filters_and_sorts_by_corrections_and_flags(
    browser_page, owner, django_user_model
):
    readers = [Author(user=django_user_model.objects.create_user(f"r{i}")) for i in range(2)]
    corrected = make_trajectory(owner=owner, task="corrected run")
    flagged = make_trajectory(owner=owner, task="flagged run")
    plain = make_trajectory(owner=owner, task="plain run")
    for reader in readers:
        step_feedback_give(trajectory=corrected, step=2, author=reader, correction="pytest -x")
    step_feedback_give(trajectory=flagged, step=4, author=readers[0], first_wrong=True)
    step_feedback_give(trajectory=flagged, step=2, author=readers[1], correction="ls")
    bp, page = browser_page, browser_page.page
    rows = page.locator(".traj-row .traj-title")

    bp.goto("/browse/")
    if page.locator("#filters").get_attribute("open") is None:  # a narrow window: folded
        page.locator("#filters summary").click()
    page.locator("#f-corrected").check()
    page.locator("#filter-form button[type=submit]").click()
    page.wait_for_url("**/browse/?**has_corrections=1**")
    hrefs = [rows.nth(i).get_attribute("href") for i in range(rows.count())]
    assert hrefs == [flagged.get_absolute_url(), corrected.get_absolute_url()]
    assert page.locator("#f-corrected").is_checked()

    page.locator("#sort").select_option("-corrections")
    page.locator(".sort-form button[type=submit]").click()
    page.wait_for_url("**ordering=-corrections**")
    # The sort keeps the filter: still the two with corrections, the most corrected first.
    hrefs = [rows.nth(i).get_attribute("href") for i in range(rows.count())]
    assert hrefs == [corrected.get_absolute_url(), flagged.get_absolute_url()]
    assert page.locator(".traj-row .meta-corrections").first.inner_text() == "✎ 2"

    page.locator("#f-corrected").uncheck()
    page.locator("#f-flagged-at").select_option("6")
    page.locator("#filter-form button[type=submit]").click()
    page.wait_for_url("**flagged_at=6**")
    assert "has_corrections" not in page.url
    hrefs = [rows.nth(i).get_attribute("href") for i in range(rows.count())]
    assert hrefs == [flagged.get_absolute_url()]
    assert page.locator(".traj-row .meta-flagged").inner_text() == "⚑ 1"
    bp.screenshot("browse-flagged-at")

    bp.goto("/stats/")
    page.locator('#first-wrong svg a[href="/browse/?flagged_at=6"]').click()
    page.wait_for_url("**/browse/?flagged_at=6")
    hrefs = [rows.nth(i).get_attribute("href") for i in range(rows.count())]
    assert hrefs == [flagged.get_absolute_url()] and plain.get_absolute_url() not in hrefs
    assert_quiet(bp)
