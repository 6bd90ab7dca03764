"""The public site in real Chromium: home → browse → search → filter, opening a private share
with its password, and screenshots of every page. The upload page has test_upload.py.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import DESKTOP, PHONE
from tests.trajectories.site_factories import make_trajectory


def assert_quiet(browser_page) -> None:
    """Nothing a user would notice went wrong: no dialog, no script error, no CSP violation."""
    assert browser_page.dialogs == []
    assert browser_page.page_errors == []
    assert browser_page.console_errors == []


@pytest.fixture
def some_public():
    make_trajectory(
        title="Fix the flaky pagination test",
        agent="CodeActAgent",
        model_name="claude-sonnet-4",
        polarity="positive",
        feedback_text="Found the off-by-one quickly and added a regression test.",
        events=["pytest tests/test_pagination.py", "1 failed", "edit paginator.py", "4 passed"],
        age_minutes=30,
    )
    make_trajectory(
        title="Upgrade Django to 5.2",
        agent="CodeActAgent",
        model_name="gpt-4o",
        events=["pip install -U django", "python manage.py migrate", "all migrations applied"],
        age_minutes=20,
    )
    make_trajectory(
        title="marshmallow-1867: TimeDelta serialization precision",
        agent="SWE-agent",
        model_name="gpt-4",
        source_format="sweagent",
        polarity="negative",
        events=["find_file fields.py", "edit 1474:1475", "python reproduce.py"],
        age_minutes=10,
    )
    make_trajectory(title="Private run with secrets", visibility="private", events=["pytest"])


def test_home_browse_search_filter(browser_page, some_public):
    page = browser_page.page
    browser_page.goto("/")
    assert (
        page.get_by_role("heading", level=1).inner_text().startswith("Share what your AI agent did")
    )
    stats = page.locator(".stats dd").all_inner_texts()
    assert stats == ["3", "10"]
    assert "Private run" not in page.content()
    browser_page.screenshot("home-desktop", full_page=True)

    page.get_by_role("link", name="Browse trajectories").click()
    page.wait_for_url("**/browse/")
    assert page.locator(".traj-title").all_inner_texts() == [
        "marshmallow-1867: TimeDelta serialization precision",
        "Upgrade Django to 5.2",
        "Fix the flaky pagination test",
    ]
    assert page.locator("#filters").get_attribute("open") is not None  # open on a wide screen
    browser_page.screenshot("browse-desktop", full_page=True)

    # Search with the keyboard only.
    page.locator("#browse-q").focus()
    page.keyboard.type("migrate")
    page.keyboard.press("Enter")
    page.wait_for_url("**/browse/?q=migrate")
    assert page.locator(".traj-title").all_inner_texts() == ["Upgrade Django to 5.2"]
    assert "1 trajectory matching “migrate”" in page.locator("#results-count").inner_text()
    browser_page.screenshot("search-desktop", full_page=True)

    # Filter: clear the search, then agent + polarity through the filter form.
    browser_page.goto("/browse/")
    page.get_by_label("Agent").fill("CodeActAgent")
    page.get_by_label("Feedback").select_option("positive")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r".*agent=CodeActAgent.*polarity=positive.*"))
    assert page.locator(".traj-title").all_inner_texts() == ["Fix the flaky pagination test"]
    assert page.get_by_text("Filters (active)").is_visible()

    # Sorting keeps the filters.
    browser_page.goto("/browse/?agent=CodeActAgent")
    page.get_by_label("Sort").select_option("-events")
    page.get_by_role("button", name="Sort", exact=True).click()
    page.wait_for_url(re.compile(r".*ordering=-events.*"))
    assert "agent=CodeActAgent" in page.url
    assert page.locator(".traj-title").all_inner_texts() == [
        "Fix the flaky pagination test",
        "Upgrade Django to 5.2",
    ]
    assert_quiet(browser_page)


def test_browse_on_a_phone_folds_the_filters(browser_page, some_public):
    page = browser_page.page
    page.set_viewport_size(PHONE)
    browser_page.goto("/browse/")
    filters = page.locator("#filters")
    assert filters.get_attribute("open") is None
    assert not page.get_by_label("Agent").is_visible()
    page.locator("#filters summary").focus()
    page.keyboard.press("Enter")  # a keyboard user opens them
    assert page.get_by_label("Agent").is_visible()
    # Nothing is wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    browser_page.screenshot("browse-phone-filters-open", full_page=True)
    # Search words alone leave the panel folded (results first); a filter opens it.
    browser_page.goto("/browse/?q=pytest")
    assert page.locator("#filters").get_attribute("open") is None
    assert page.locator(".traj-title").first.is_visible()
    browser_page.goto("/browse/?agent=SWE-agent")
    assert page.locator("#filters").get_attribute("open") is not None
    assert_quiet(browser_page)


def test_skip_link_and_keyboard_navigation(browser_page, some_public):
    page = browser_page.page
    browser_page.goto("/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    assert page.locator(".skip-link").is_visible()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"#main$"))  # the address changes after the key's default action
    # Tabbing on reaches the first link inside the main content.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")


def test_unlock_with_the_password_opens_the_private_page(browser_page, sample):
    from apps.trajectories.services import ShareOptions, trajectory_ingest

    stored = trajectory_ingest(
        data=sample("openhands_v0_events.json"),
        user=None,
        options=ShareOptions(visibility="private", title="My private run"),
    ).stored[0]
    page = browser_page.page
    browser_page.goto(f"/t/{stored.trajectory.share_id}/")
    page.get_by_placeholder("Password").fill(stored.password)
    page.get_by_role("button", name="Open").click()
    page.wait_for_url(f"**/t/{stored.trajectory.share_id}/")
    assert "My private run" in page.title()


PAGES = [
    ("home", "/"),
    ("browse", "/browse/"),
    ("search", "/browse/?q=pytest"),
    ("upload", "/upload/"),
    ("terms", "/terms/"),
    ("privacy", "/privacy/"),
    ("license", "/license/"),
    ("removal", "/removal/"),
    ("releases", "/releases/"),
    ("login", "/accounts/login/"),
    ("signup", "/accounts/signup/"),
    ("unlock", "/t/" + "a" * 64 + "/unlock"),
    ("not-found", "/nothing/here/"),
]


def test_screenshots_of_every_page(browser_page, some_public, owner, browser_login):
    """Every page at desktop and phone width: readable, nothing wider than the screen."""
    page = browser_page.page
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        for name, path in PAGES:
            browser_page.goto(path)
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], (
                name,
                width_name,
            )
            browser_page.screenshot(f"page-{name}-{width_name}", full_page=True)
    browser_login(browser_page.context, owner)
    make_trajectory(title="My held run", owner=owner, review_state="held")
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        browser_page.goto("/me/")
        assert "My held run" in page.content()
        browser_page.screenshot(f"page-me-{width_name}", full_page=True)
    # 404 pages log their status in the console; nothing else may have.
    assert all("404" in error for error in browser_page.console_errors)
    assert browser_page.dialogs == [] and browser_page.page_errors == []


def test_a_share_made_public_reloads_itself_until_its_scan_has_passed(browser_page):
    """The "being checked" page reloads by itself (a meta refresh, no script: the CSP holds) and
    shows the trajectory once it is approved; the held and deleted pages, at both widths."""
    from apps.trajectories.models import Trajectory
    from apps.trajectories.services import trajectory_delete

    page = browser_page.page
    waiting = make_trajectory(title="Checked soon", visibility="public", review_state="pending")
    held = make_trajectory(title="Held one", visibility="public", review_state="held")
    gone = make_trajectory(title="Gone one", visibility="public")
    trajectory_delete(trajectory=gone)
    answer = browser_page.goto(f"/t/{waiting.share_id}/")
    assert answer.status == 202 and "Checked soon" not in page.content()
    browser_page.screenshot("status-checking-desktop")
    Trajectory.objects.filter(pk=waiting.pk).update(review_state="approved")
    page.get_by_role("heading", name="Checked soon").wait_for(timeout=15_000)
    for name, trajectory, status in (("held", held, 200), ("deleted", gone, 410)):
        for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(viewport)
            assert browser_page.goto(f"/t/{trajectory.share_id}/").status == status
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            browser_page.screenshot(f"status-{name}-{width}")
    # The only console messages: the browser noting the deleted page's 410.
    assert all("410 (Gone)" in error for error in browser_page.console_errors)
