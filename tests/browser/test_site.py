"""The public site in real Chromium: home → browse → search → filter, the upload page from file
choice to the one-time password, deleting with that password, and screenshots of every page.
"""

from __future__ import annotations

import re

import pytest

from apps.trajectories.models import Trajectory
from tests.browser.conftest import DESKTOP, PHONE
from tests.conftest import FIXTURES_DIR
from tests.trajectories.site_factories import make_trajectory

REAL = FIXTURES_DIR / "real"


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
    assert page.url.endswith("#main")
    # Tabbing on reaches the first link inside the main content.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")


def _choose_file_with_picker(page, name: str) -> None:
    page.locator("#upload-file").set_input_files(str(REAL / name))


def _drop_file(page, name: str) -> None:
    """A real drop event carrying the file, as when dragging it from the desktop."""
    content = (REAL / name).read_text()
    handle = page.evaluate_handle(
        """([name, content]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([content], name, {type: "application/json"}));
            return transfer;
        }""",
        [name, content],
    )
    page.locator("#dropzone").dispatch_event("dragenter", {"dataTransfer": handle})
    assert "dragging" in page.locator("#dropzone").get_attribute("class")
    page.locator("#dropzone").dispatch_event("drop", {"dataTransfer": handle})


def test_anonymous_upload_shows_link_and_password_once_then_deletes_with_it(browser_page):
    page = browser_page.page
    browser_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    browser_page.goto("/upload/")
    assert page.get_by_role("button", name="Share").is_disabled()
    assert page.locator("input[name=visibility][value=private]").is_checked()
    browser_page.screenshot("upload-empty-desktop", full_page=True)

    _choose_file_with_picker(page, "openhands_v0_basic_gui_mode.json")
    preview = page.locator("#preview")
    preview.get_by_text("OpenHands event array").wait_for()
    summary = dict(
        zip(
            preview.locator("dt").all_inner_texts(),
            preview.locator("dd").all_inner_texts(),
            strict=True,
        )
    )
    assert summary == {"Format": "OpenHands event array", "Trajectories": "1", "Events": "18"}
    assert (
        page.locator("#dropzone-file").inner_text().startswith("openhands_v0_basic_gui_mode.json")
    )
    assert Trajectory.objects.count() == 0  # the preview stored nothing
    page.get_by_label("Feedback").fill("Clicked through the GUI as asked.")
    page.get_by_text("Good", exact=True).click()
    browser_page.screenshot("upload-preview-desktop", full_page=True)

    page.get_by_role("button", name="Share").click()
    result = page.locator("#upload-result")
    result.get_by_role("heading", name="Shared").wait_for()
    password = result.locator("#shared-password-0").input_value()
    link = result.locator("#shared-link-0").input_value()
    trajectory = Trajectory.objects.get()
    assert link.endswith(f"/t/{trajectory.share_id}/")
    assert trajectory.owner is None and trajectory.visibility == "private"
    assert trajectory.polarity == "positive"
    assert trajectory.feedback_text == "Clicked through the GUI as asked."
    assert len(password) >= 16
    assert "shown only this once" in result.inner_text()
    assert page.locator("#upload-form").is_hidden()

    result.locator(".copy-row", has=page.locator("#shared-password-0")).get_by_role(
        "button", name="Copy"
    ).click()
    result.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == password
    browser_page.screenshot("upload-done-desktop", full_page=True)

    # Once: a new visit to the page shows no password, and neither does the trajectory page.
    browser_page.goto("/upload/")
    assert password not in page.content()
    response = browser_page.goto(f"/t/{trajectory.share_id}/")
    assert response.status == 404  # private: not for a stranger's eyes
    assert password not in page.content()
    browser_page.screenshot("trajectory-404-unlock-desktop", full_page=True)

    # The link-and-password page: a wrong password is refused neutrally...
    browser_page.goto(f"/t/{trajectory.share_id}/unlock")
    page.locator("#delete-password").fill("not-the-password")
    page.get_by_label("Yes, delete this trajectory for good").check()
    page.get_by_role("button", name="Delete the trajectory").click()
    assert "No trajectory matches this link and password" in page.content()
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
    browser_page.screenshot("unlock-refused-desktop", full_page=True)

    # ... and the right one deletes it.
    page.locator("#delete-password").fill(password)
    page.get_by_label("Yes, delete this trajectory for good").check()
    page.get_by_role("button", name="Delete the trajectory").click()
    page.get_by_role("heading", name="Deleted").wait_for()
    assert not Trajectory.objects.filter(pk=trajectory.pk).exists()
    browser_page.screenshot("deleted-desktop", full_page=True)
    # The refused attempt above is a 404 answer the console reports; nothing else went wrong.
    assert browser_page.dialogs == [] and browser_page.page_errors == []


def test_unlock_with_the_password_opens_the_private_page(browser_page, real_fixture):
    from apps.trajectories.services import ShareOptions, trajectory_ingest

    stored = trajectory_ingest(
        data=real_fixture("openhands_v0_basic_interactions.json"),
        user=None,
        options=ShareOptions(visibility="private", title="My private run"),
    ).stored[0]
    page = browser_page.page
    browser_page.goto(f"/t/{stored.trajectory.share_id}/")
    page.get_by_placeholder("Password").fill(stored.password)
    page.get_by_role("button", name="Open").click()
    page.wait_for_url(f"**/t/{stored.trajectory.share_id}/")
    assert "My private run" in page.title()


def test_drag_and_drop_a_file_with_several_trajectories(browser_page):
    page = browser_page.page
    browser_page.goto("/upload/")
    _drop_file(page, "openhands_resolver_mock_output_flat_legacy.jsonl")
    preview = page.locator("#preview")
    preview.get_by_text("Trajectories").wait_for()
    assert preview.locator("dd").all_inner_texts()[1:] == ["2", "52"]
    assert preview.locator(".preview-items li").count() == 2
    assert page.locator("#dropzone").get_attribute("class") == "dropzone"
    assert page.get_by_role("button", name="Share").is_enabled()
    assert_quiet(browser_page)


def test_unreadable_file_is_explained_and_cannot_be_shared(browser_page, tmp_path):
    page = browser_page.page
    broken = tmp_path / "notes.json"
    broken.write_text('{"hello": "world"}')
    browser_page.goto("/upload/")
    page.locator("#upload-file").set_input_files(str(broken))
    page.get_by_text("This file cannot be shared").wait_for()
    assert (
        "no known trajectory format matches an object with keys hello"
        in page.locator("#preview").inner_text()
    )
    assert page.get_by_role("button", name="Share").is_disabled()
    browser_page.screenshot("upload-error-desktop", full_page=True)


def test_public_share_needs_the_licence(browser_page, owner, browser_login):
    page = browser_page.page
    browser_login(browser_page.context, owner)
    browser_page.goto("/upload/")
    _choose_file_with_picker(page, "openhands_v0_basic.json")
    page.locator("#preview dd").first.wait_for()
    assert not page.locator("#license-box").is_visible()
    page.locator("input[name=visibility][value=public]").check()
    assert page.locator("#license-box").is_visible()
    page.get_by_role("button", name="Share").click()
    assert "agree to the licence" in page.locator("#upload-status").inner_text()
    assert Trajectory.objects.count() == 0

    page.locator("#license-agreed").check()
    page.get_by_role("button", name="Share").click()
    page.locator("#upload-result").get_by_role("heading", name="Shared").wait_for()
    trajectory = Trajectory.objects.get()
    assert trajectory.owner == owner and trajectory.visibility == "public"
    assert trajectory.license == "MIT"
    # Signed in: no password, the trajectory is in the account.
    assert page.locator("#shared-password-0").count() == 0
    assert_quiet(browser_page)


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
