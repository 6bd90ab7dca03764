"""OCR off or missing, in real Chromium (issue 20): staff see it said on the admin index and the
review queue, and a moderator clears an unread screenshot on the item's page, after which a
visitor's page shows it. Screenshots: admin-ocr-off-banner, moderation-clear-image."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Image, Trajectory
from tests.moderation.test_image_drop import png_of, share_with_screenshot


@pytest.fixture
def ocr_missing(settings, monkeypatch):
    settings.TRAJHUB_OCR = True
    settings.TRAJHUB_IMAGES_PUBLISH_UNREAD = False
    monkeypatch.setattr("apps.trajectories.image_rule.shutil.which", lambda name: None)
    monkeypatch.setattr("apps.moderation.scanning.ocr.available", lambda: False)


def test_staff_see_ocr_is_off_and_clear_an_image(
    ocr_missing, browser_page, browser_login, django_user_model
):
    owner = django_user_model.objects.create_user("ocr-owner")
    trajectory = share_with_screenshot(owner, png_of("an unread screenshot"))
    trajectory_scan(trajectory=trajectory)
    trajectory = Trajectory.objects.get(pk=trajectory.pk)
    sha = Image.objects.get(trajectory_links__trajectory=trajectory).sha256
    moderator = django_user_model.objects.create_user("ocr-mod", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    browser_login(browser_page.context, moderator)
    page = browser_page.page

    browser_page.goto("/admin/")
    banner = page.locator(".ocr-off-banner")
    assert banner.is_visible()
    assert "OCR is off." in banner.inner_text()
    assert "tesseract is not installed" in banner.inner_text()
    browser_page.screenshot("admin-ocr-off-banner")

    banner.get_by_role("link", name="The review queue").click()
    page.wait_for_url("**/admin/moderation/queueitem/**")
    page.locator(".ocr-off-banner").wait_for()
    assert page.locator(".ocr-off-banner").is_visible()
    row = page.locator("#result_list tr", has_text=trajectory.share_id[:12])
    assert "1 image to check" in row.inner_text()
    row.get_by_role("link", name=trajectory.share_id[:12]).click()
    page.get_by_label(f"Clear image {sha[:12]}…").check()
    browser_page.screenshot("moderation-clear-image", full_page=True)
    page.get_by_role("button", name="Clear the ticked images").click()
    assert "1 image cleared" in page.locator("ul.messagelist:not(.ocr-off-banner)").inner_text()
    assert Image.objects.get(sha256=sha).cleared_at is not None

    visitor = browser_page.context.browser.new_context()
    try:
        shown = visitor.new_page()
        answer = shown.goto(f"{browser_page.base_url}/t/{trajectory.share_id}/images/{sha}")
        assert answer.status == 200
    finally:
        visitor.close()
    assert browser_page.page_errors == []
