"""The release pages in real Chromium: list, one release with its rendered card and files, and
the contributor's "in the next release" list where a click takes a trajectory out."""

from __future__ import annotations

import pytest

from apps.datasets import services
from apps.datasets.models import OptOut
from tests.datasets.conftest import share

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def releases(settings, tmp_path, owner, other_user):
    settings.STORAGES = {
        **settings.STORAGES,
        "releases": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "releases")},
        },
    }
    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    first = share(user=owner, seed=81, screenshots=1)
    share(user=other_user, seed=82)
    services.release_run(force=True)
    from apps.trajectories.services import trajectory_delete

    trajectory_delete(trajectory=first)
    share(user=owner, seed=83)
    return services.release_run(force=True).release


def test_release_pages_and_taking_out(browser_page, releases, owner, browser_login):
    page = browser_page.page
    browser_page.goto("/releases/")
    # v1; v2, published at once without the deleted trajectory (removal-only; tasks run eagerly
    # here, so its delay does not apply); v3 with the new share.
    assert page.locator("table.plain tbody tr").count() == 3
    assert page.get_by_text("superseded").count() >= 1
    browser_page.screenshot("releases-list", full_page=True)
    page.get_by_role("link", name="v3").first.click()
    page.wait_for_url("**/releases/3/")
    assert page.locator("h2", has_text="How it was cleaned").count() == 1
    assert page.locator("a", has_text="data/train-00000-of-00001.parquet").count() == 1
    browser_page.screenshot("release-detail", full_page=True)
    # Every checksum is shown whole, inside the table, on a laptop and on a phone (issue 20:
    # the sha256 column was cut).
    for width, height in ((1366, 768), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        wrap = page.locator(".table-wrap").first.bounding_box()
        for cell in page.locator("code.digest").all():
            box = cell.bounding_box()
            assert box["x"] + box["width"] <= wrap["x"] + wrap["width"] + 1, (width, box, wrap)
            assert len(cell.inner_text().replace("\n", "")) == 64
    browser_page.screenshot("release-detail-phone", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})

    browser_login(page.context, owner)
    browser_page.goto("/me/releases/")
    browser_page.screenshot("next-release", full_page=True)
    page.get_by_role("button", name="Take out").first.click()
    page.wait_for_load_state()
    assert page.get_by_role("button", name="Put back").count() == 1
    assert OptOut.objects.filter(trajectory__owner=owner).count() == 1
    assert browser_page.console_errors == [] and browser_page.page_errors == []
