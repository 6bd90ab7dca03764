"""The dashboard in real Chromium, with JavaScript off: the checkbox form works as plain HTML,
and every accounts page fits a phone's width."""

from __future__ import annotations

import pytest

from apps.trajectories.models import Tombstone, Trajectory
from tests.browser.conftest import DESKTOP, PHONE
from tests.trajectories.site_factories import make_trajectory


@pytest.fixture
def no_script_page(browser, live_server, transactional_db):
    context = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield context, page
    context.close()


def test_bulk_actions_without_javascript(no_script_page, live_server, owner, browser_login):
    context, page = no_script_page
    runs = [
        make_trajectory(title=f"Run {index}", owner=owner, visibility="public", license="MIT")
        for index in range(3)
    ]
    browser_login(context, owner)
    page.goto(live_server.url + "/me/")
    page.check(f'input[name="ids"][value="{runs[0].share_id}"]')
    page.check(f'input[name="ids"][value="{runs[1].share_id}"]')
    page.select_option('select[name="action"]', "make_private")
    page.click("text=Apply")
    assert "2 trajectories made private" in page.content()
    assert set(
        Trajectory.objects.filter(pk__in=[runs[0].pk, runs[1].pk]).values_list(
            "visibility", flat=True
        )
    ) == {"private"}

    page.check(f'input[name="ids"][value="{runs[2].share_id}"]')
    page.select_option('select[name="action"]', "delete")
    page.click("text=Apply")
    assert "Delete 1 trajectory" in page.content()
    assert Trajectory.objects.filter(pk=runs[2].pk).exists()  # not before confirming
    page.check('input[name="confirm"]')
    page.click("button.danger")
    assert "1 trajectory deleted" in page.content()
    assert not Trajectory.objects.filter(pk=runs[2].pk).exists()
    assert Tombstone.objects.filter(share_id=runs[2].share_id).exists()


def test_accounts_pages_fit_a_phone(browser_page, owner, browser_login):
    trajectory = make_trajectory(
        title="A long title " * 8, owner=owner, visibility="private", num_bytes=123_456
    )
    browser_login(browser_page.context, owner)
    page = browser_page.page
    pages = [
        ("me", "/me/"),
        ("me-edit", f"/me/t/{trajectory.share_id}/edit"),
        ("me-notices", "/me/notices/"),
        ("me-tokens", "/me/tokens/"),
        ("me-claim", "/me/claim/"),
        ("me-export", "/me/export/"),
        ("me-account-delete", "/me/delete-account/"),
        ("profile", "/u/owner/"),
        ("owner-trajectory", trajectory.get_absolute_url()),
        ("delete-by-email", "/delete-by-email/"),
    ]
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        for name, path in pages:
            browser_page.goto(path)
            browser_page.screenshot(f"accounts-{name}-{width_name}", full_page=True)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], (name, width_name, width)
    assert browser_page.page_errors == [] and browser_page.dialogs == []


def test_select_all_and_row_actions_on_a_phone(browser_page, owner, browser_login):
    """Issue 20: the dashboard had no "select all", and on a phone its row actions were off
    the screen (inside a table that scrolled sideways)."""
    runs = [
        make_trajectory(title=f"Phone run {index} " * 4, owner=owner, visibility="private")
        for index in range(3)
    ]
    browser_login(browser_page.context, owner)
    page = browser_page.page
    page.set_viewport_size(PHONE)
    browser_page.goto("/me/")
    select_all = page.get_by_label("Select all on this page")
    select_all.check()
    assert page.locator('input[name="ids"]:checked').count() == len(runs)
    page.locator('input[name="ids"]').first.uncheck()
    assert not select_all.is_checked()
    assert page.evaluate("document.querySelector('[data-select-all]').indeterminate")
    browser_page.screenshot("accounts-me-phone-select", full_page=True)
    for link in page.locator("td.row-actions a").all():
        box = link.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    select_all.check()
    page.select_option('select[name="action"]', "make_public")
    page.check('input[name="license_agreed"]')
    page.click("text=Apply")
    assert "3 trajectories made public" in page.content()
    assert browser_page.page_errors == [] and browser_page.console_errors == []
