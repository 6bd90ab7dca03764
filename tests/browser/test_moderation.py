"""Moderation in real Chromium: a reader reports a trajectory from its page (the plain form,
no script needed), enough reports hold it, and a moderator decides it on the queue item's page
in Django admin. Screenshots: report form, item page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from apps.moderation.models import AuditEntry, Report
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.browser.conftest import SCREENSHOTS
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

# An image's decoded width once it has loaded: screenshots load lazily, so right after a
# scroll the bytes may still be on their way (naturalWidth 0 until then).
LOADED_WIDTH = """img => img.complete ? img.naturalWidth : new Promise(resolve => {
  img.addEventListener('load', () => resolve(img.naturalWidth));
  img.addEventListener('error', () => resolve(0));
})"""


def assert_quiet(browser_page) -> None:
    assert browser_page.dialogs == []
    assert browser_page.page_errors == []
    assert browser_page.console_errors == []


@pytest.fixture
def published():
    trajectory = make_trajectory(
        events=["pytest tests/test_pagination.py", "1 failed"], title="Fix the pagination test"
    )
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def test_a_reader_reports_from_the_trajectory_page(browser_page, published, settings):
    settings.TRAJHUB_REPORT_HOLD_COUNT = 1
    browser_page.page.route("**/*.js", lambda route: route.abort())  # works without script
    browser_page.goto(published.get_absolute_url())
    browser_page.page.get_by_role("link", name="Report").click()
    browser_page.page.get_by_label("It shows a secret").check()
    browser_page.page.get_by_label("Details (optional)").fill("Step 2 prints a token")
    browser_page.screenshot("moderation-report-form", full_page=True)
    browser_page.page.get_by_role("button", name="Send the report").click()
    assert browser_page.page.get_by_role("heading", name="Thank you").is_visible()
    assert Report.objects.get().text == "Step 2 prints a token"
    assert Trajectory.objects.get(pk=published.pk).review_state == "held"


def test_a_moderator_decides_on_the_items_page(browser_page, browser_login, django_user_model):
    moderator = django_user_model.objects.create_user("mod-browser", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    key = s.openai_key()
    trajectory = make_trajectory(events=[f"<b>env</b> OPENAI_API_KEY={key}"], title="Deploy")
    trajectory_scan(trajectory=trajectory)
    browser_login(browser_page.context, moderator)
    browser_page.goto("/admin/moderation/queueitem/")
    browser_page.page.get_by_role("link", name=trajectory.share_id[:12]).click()
    mark = browser_page.page.locator("mark").first
    assert mark.inner_text() == key
    assert "<b>env</b>" in browser_page.page.locator("code.finding-context").first.inner_text()
    browser_page.screenshot("moderation-queue-item", full_page=True)
    browser_page.page.get_by_label("Reason").fill("A live key: revoke it and share again")
    browser_page.page.get_by_role("button", name="Reject").click()
    assert (
        "Rejected" in browser_page.page.locator("ul.messagelist:not(.ocr-off-banner)").inner_text()
    )
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "rejected"
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="rejected")
    assert entry.actor_username == "mod-browser"
    assert_quiet(browser_page)


def test_a_dropped_screenshot_shows_a_placeholder_in_the_viewer(browser_page, browser_login, owner):
    """A moderator dropped the screenshot (its OCR found a key): a visitor sees "Image removed
    by a moderator" in its place and the image link answers 410; the owner still sees it,
    marked as removed for everyone else."""
    from apps.moderation.services.redact import image_drop
    from apps.trajectories.models import Event
    from tests.moderation.test_ocr import attach, screenshot

    trajectory = make_trajectory(
        events=["Open my tokens page"], title="Look at my tokens page", owner=owner
    )
    image = attach(trajectory, screenshot("Personal access tokens", "token ghp_..."))
    Event.objects.create(
        trajectory=trajectory,
        position=1,
        source="environment",
        kind="observation",
        type="browse",
        text="Personal access tokens",
        data={
            "observation": "browse",
            "content": "Personal access tokens",
            "extras": {
                "url": "https://github.com/settings/tokens",
                "screenshot": f"trajhub-image:{image.sha256}",
            },
        },
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(num_events=2)
    trajectory_scan(trajectory=trajectory)
    moderator = owner.__class__.objects.create_user("mod-dropper", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    image_drop(trajectory=trajectory, moderator=moderator, sha256=image.sha256)
    assert Trajectory.objects.get(pk=trajectory.pk).is_public

    browser_page.goto(trajectory.get_absolute_url())
    placeholder = browser_page.page.get_by_role("img", name="Image removed by a moderator")
    placeholder.scroll_into_view_if_needed()
    assert placeholder.is_visible()
    box = placeholder.bounding_box()
    assert box["width"] > 300 and box["height"] > 150  # the screenshot's place, not a line
    assert browser_page.page.locator(f'img[src*="{image.sha256}"]').count() == 0
    browser_page.screenshot("moderation-dropped-image-visitor", full_page=True)
    gone = browser_page.page.request.get(
        browser_page.base_url + f"/t/{trajectory.share_id}/images/{image.sha256}"
    )
    assert gone.status == 410
    assert_quiet(browser_page)

    owners = browser_page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        browser_login(owners, owner)
        page = owners.new_page()
        page.goto(browser_page.base_url + trajectory.get_absolute_url())
        shown = page.locator(f'img[src*="{image.sha256}"]')
        shown.scroll_into_view_if_needed()
        assert shown.is_visible()
        assert shown.evaluate(LOADED_WIDTH) > 0
        assert "only you and moderators see it" in page.locator(".shot-dropped").inner_text()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(SCREENSHOTS / "moderation-dropped-image-owner.png"), full_page=True
        )
    finally:
        owners.close()


def test_a_moderator_drops_an_image_on_the_items_page(browser_page, browser_login, owner):
    """The review item's page shows the trajectory's images with what OCR found (the one with a
    finding ticked); "Redact and approve" drops the ticked one and approves."""
    from apps.trajectories.models import Image
    from tests.moderation.conftest import make_finding
    from tests.moderation.test_ocr import attach, screenshot

    trajectory = make_trajectory(events=["browse the tokens page"], owner=owner)
    dirty = attach(trajectory, screenshot("Personal access tokens", "token ghp_..."))
    clean = attach(trajectory, screenshot("Welcome to the documentation"))
    trajectory_scan(trajectory=trajectory)
    # What the OCR scan records (OCR is off in the test settings; test_image_drop reads for real).
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="held")
    Image.objects.filter(pk=dirty.pk).update(ocr_version="v", ocr_findings=1)
    Image.objects.filter(pk=clean.pk).update(ocr_version="v")
    make_finding(trajectory, image_sha256=dirty.sha256, start=6, end=46, preview="ghp_…mvdY")
    moderator = owner.__class__.objects.create_user("mod-images", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    browser_login(browser_page.context, moderator)
    browser_page.goto(f"/admin/moderation/queueitem/{trajectory.pk}/change/")
    ticked = browser_page.page.get_by_label(f"Drop image {dirty.sha256[:12]}…")
    assert ticked.is_checked()
    assert not browser_page.page.get_by_label(f"Drop image {clean.sha256[:12]}…").is_checked()
    thumbnail = browser_page.page.locator(f'img[src$="{dirty.sha256}"]')
    assert thumbnail.evaluate(LOADED_WIDTH) > 0  # moderators see the original
    assert "found: github_token" in browser_page.page.locator("table.review-images").inner_text()
    assert f"text read (OCR) in image {dirty.sha256[:12]}" in browser_page.page.inner_text("body")
    browser_page.screenshot("moderation-item-images", full_page=True)
    browser_page.page.get_by_role("button", name="Redact and approve").click()
    assert (
        "1 image replaced by a placeholder"
        in browser_page.page.locator("ul.messagelist:not(.ocr-off-banner)").inner_text()
    )
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved" and trajectory.dropped_images == [dirty.sha256]
    assert Image.objects.get(pk=clean.pk).dropped_at is None
    assert_quiet(browser_page)


def test_the_queue_list_shows_every_column_on_a_laptop(
    browser_page, browser_login, django_user_model
):
    # At 1366 x 768 the queue's last columns (state, claim, date) were cut off past the window's
    # right edge. A long title, a held one with reports and a claim: the widest rows it shows.
    from apps.moderation.claims import claim_take

    moderator = django_user_model.objects.create_user("mod-laptop", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    owner = django_user_model.objects.create_user("a-contributor-with-a-long-name")
    for n in range(3):
        trajectory = make_trajectory(
            events=[f"export OPENAI_API_KEY={s.openai_key()} && deploy --region eu-west-{n}"],
            title="Fix the flaky pagination test in the billing service's invoice export "
            f"pipeline, then deploy it to staging and production, run {n}",
            owner=owner,
        )
        trajectory_scan(trajectory=trajectory)
        Report.objects.create(trajectory=trajectory, reason="secret", reporter_key=f"addr:{n}")
        claim_take(trajectory=trajectory, moderator=moderator)
    browser_login(browser_page.context, moderator)
    page = browser_page.page
    page.set_viewport_size({"width": 1366, "height": 768})
    browser_page.goto("/admin/moderation/queueitem/")
    path = browser_page.screenshot("moderation-queue-1366")
    assert path.exists()
    # The list scrolls inside its own box (Django admin's .results): cut is past that box's edge.
    results = page.locator("#changelist .results")
    edge = results.bounding_box()
    right = edge["x"] + edge["width"]
    headers = page.locator("#result_list thead th")
    assert headers.count() >= 7
    for index in range(headers.count()):
        box = headers.nth(index).bounding_box()
        assert box is not None and box["x"] + box["width"] <= right + 1, (
            headers.nth(index).inner_text(),
            box,
            right,
        )
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    assert_quiet(browser_page)
