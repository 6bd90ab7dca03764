"""One rule for images where OCR is off or missing (issue 20): public on the site and in
releases alike only once a moderator clears them, unless TRAJHUB_IMAGES_PUBLISH_UNREAD publishes
them unread; the release card says which rule applied and how many images it withheld; staff
are told that OCR is off (admin pages, the review queue, the site) and `make run` says so.

Before, with OCR on and no tesseract (`make run` on a fresh machine), the site showed every
image while releases held 1x1 placeholders under a card promising "the screenshots and plots".
"""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.test import Client

from apps.datasets import services as release_services
from apps.datasets.services.build import PLACEHOLDER_PNG
from apps.moderation.models import AuditEntry
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.dropped import IMAGE_WITHHELD
from apps.trajectories.models import Image, Trajectory
from tests.datasets.conftest import release_storage  # noqa: F401  (a fixture)
from tests.moderation.test_image_drop import png_of, share_with_screenshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def ocr_missing(settings, monkeypatch):
    """OCR on, as by default, but no tesseract on the machine (a fresh `make run`)."""
    settings.TRAJHUB_OCR = True
    settings.TRAJHUB_IMAGES_PUBLISH_UNREAD = False
    monkeypatch.setattr("apps.trajectories.image_rule.shutil.which", lambda name: None)
    monkeypatch.setattr("apps.moderation.scanning.ocr.available", lambda: False)


def shared(owner, png: bytes) -> Trajectory:
    trajectory = share_with_screenshot(owner, png)
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    return trajectory


def release_row(folder_root, share_id: str) -> tuple[dict, str]:
    run = release_services.release_run(force=True)
    assert run.action == "published", run.message
    folder = folder_root / run.release.prefix
    rows = []
    for path in sorted((folder / "data").glob("train-*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    (row,) = [row for row in rows if row["id"] == share_id]
    return row, (folder / "README.md").read_text()


def surfaces(client: Client, trajectory: Trajectory, sha: str) -> dict:
    share_id = trajectory.share_id
    return {
        "page": client.get(f"/t/{share_id}/").content.decode(),
        "image": client.get(f"/t/{share_id}/images/{sha}"),
        "api_image": client.get(f"/api/v1/trajectories/{share_id}/images/{sha}"),
        "events": client.get(f"/api/v1/trajectories/{share_id}/events").content.decode(),
        "export": client.get(
            f"/api/v1/trajectories/{share_id}/download", {"format": "openhands"}
        ).content.decode(),
    }


def test_without_ocr_an_image_waits_for_a_moderator_on_the_site_and_in_releases(
    ocr_missing,
    owner,
    admin_moderator,
    release_storage,  # noqa: F811
):
    png = png_of("a screenshot nobody has read")
    trajectory = shared(owner, png)
    sha = Image.objects.get(trajectory_links__trajectory=trajectory).sha256
    assert trajectory.review_state == "approved", trajectory.review_state
    assert trajectory.is_public and trajectory.unchecked_images == [sha]

    # A visitor: a placeholder everywhere, the image endpoints refuse it.
    seen = surfaces(Client(), trajectory, sha)
    assert seen["image"].status_code == 403 and seen["api_image"].status_code == 403
    assert "not read for text" in seen["api_image"].json()["error"]["message"]
    assert "Image not shown until a moderator checks it" in seen["page"]
    for name in ("page", "events", "export"):
        assert sha not in seen[name], name
    assert IMAGE_WITHHELD in seen["events"] and IMAGE_WITHHELD in seen["export"]
    # The owner still sees it, and is told why others do not.
    mine = Client()
    mine.force_login(owner)
    own = surfaces(mine, trajectory, sha)
    assert own["image"].status_code == 200 and own["api_image"].content == png
    assert "only you and moderators see it until a moderator clears it" in own["page"]

    # The release holds the placeholder, and its card says so and why.
    row, card = release_row(release_storage, trajectory.share_id)
    assert [item["bytes"] for item in row["images"]] == [PLACEHOLDER_PNG]
    assert "OCR is on but tesseract is not installed" in card
    assert "each one is public only once a moderator has cleared it" in card
    assert "Of the 1 images of this release, 1 was withheld" in card
    assert "`moderator_cleared`" in card

    # The queue lists it for its image; the moderator clears it on its page.
    moderator = Client()
    moderator.force_login(admin_moderator)
    queue = moderator.get("/admin/moderation/queueitem/").content.decode()
    assert trajectory.share_id[:12] in queue and "1 image to check" in queue
    review = f"/admin/moderation/queueitem/{trajectory.pk}/change/"
    page = moderator.get(review).content.decode()
    assert f'name="clear" value="{sha}"' in page and "not read: others see a placeholder" in page
    answer = moderator.post(
        review, {"decision": "clear_images", "seen_state": "approved", "clear": [sha]}
    )
    assert answer.status_code == 302
    trajectory.refresh_from_db()
    assert trajectory.unchecked_images == []
    assert Image.objects.get(sha256=sha).cleared_at is not None
    entry = AuditEntry.objects.get(action="image_cleared")
    assert entry.actor_username == "mod-staff" and entry.details["image"] == sha
    assert (
        trajectory.share_id[:12]
        not in moderator.get("/admin/moderation/queueitem/").content.decode()
    )

    # Now public on every surface and in the next release.
    seen = surfaces(Client(), trajectory, sha)
    assert seen["image"].status_code == 200 and seen["api_image"].content == png
    assert sha in seen["events"] and sha in seen["export"]
    assert IMAGE_WITHHELD not in seen["events"]
    # (A release is made when the set of trajectories changes: a second share, unread.)
    shared(owner, png_of("another screenshot, not cleared"))
    row, card = release_row(release_storage, trajectory.share_id)
    assert [item["bytes"] for item in row["images"]] == [png]
    assert "Of the 2 images of this release, 1 was withheld" in card


def test_the_setting_publishes_unread_images_and_the_card_says_so(
    ocr_missing,
    settings,
    owner,
    release_storage,  # noqa: F811
):
    settings.TRAJHUB_IMAGES_PUBLISH_UNREAD = True
    png = png_of("published unread")
    trajectory = shared(owner, png)
    sha = Image.objects.get(trajectory_links__trajectory=trajectory).sha256
    seen = surfaces(Client(), trajectory, sha)
    assert seen["image"].status_code == 200 and sha in seen["events"]
    row, card = release_row(release_storage, trajectory.share_id)
    assert [item["bytes"] for item in row["images"]] == [png]
    assert "TRAJHUB_IMAGES_PUBLISH_UNREAD publishes them unread" in card
    assert "0 were withheld" in card and "`unread_published`" in card


def test_the_setting_is_on_under_make_run_and_off_in_production():
    import subprocess
    import sys

    code = "from django.conf import settings; print(settings.TRAJHUB_IMAGES_PUBLISH_UNREAD)"

    def read(**env_changes) -> str:
        import os

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(
                ("DATABASE_URL", "TRAJHUB_IMAGES", "DJANGO_DEBUG", "DJANGO_SETTINGS")
            )
        }
        env.update(
            env_changes, DJANGO_SETTINGS_MODULE="config.settings", DJANGO_SECRET_KEY="x" * 50
        )
        out = subprocess.run(
            [sys.executable, "-c", "import django; django.setup(); " + code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()

    assert read() == "True"  # `make run`: the embedded default (no DATABASE_URL)
    assert read(DATABASE_URL="postgres://u@127.0.0.1:1/x") == "False"  # production
    assert read(DATABASE_URL="postgres://u@127.0.0.1:1/x", DJANGO_DEBUG="true") == "True"


def test_staff_are_told_that_ocr_is_off_and_others_are_not(ocr_missing, admin_moderator, owner):
    staff = Client()
    staff.force_login(admin_moderator)
    for url in ("/admin/", "/admin/moderation/queueitem/", "/"):
        page = staff.get(url).content.decode()
        assert "OCR is off." in page and "tesseract is not installed" in page, url
    visitor = Client()
    visitor.force_login(owner)
    assert "OCR is off." not in visitor.get("/").content.decode()
    assert "OCR is off." not in Client().get("/").content.decode()


def test_no_banner_where_ocr_reads_images(settings, monkeypatch, admin_moderator):
    settings.TRAJHUB_OCR = True
    monkeypatch.setattr("apps.trajectories.image_rule.shutil.which", lambda name: "/usr/bin/x")
    staff = Client()
    staff.force_login(admin_moderator)
    assert "OCR is off." not in staff.get("/admin/").content.decode()


def test_ocr_status_says_which_rule_applies(ocr_missing, settings):
    out = io.StringIO()
    call_command("ocr_status", stdout=out)
    assert "OCR is off." in out.getvalue() and "apt install tesseract-ocr" in out.getvalue()
    settings.TRAJHUB_OCR = False
    out = io.StringIO()
    call_command("ocr_status", stdout=out)
    assert "TRAJHUB_OCR is off" in out.getvalue()
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="OCR is off"):
        call_command("ocr_status", "--require", stdout=io.StringIO())


def test_make_run_prints_the_ocr_status_at_start():
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    run = makefile[makefile.index("\nrun:") : makefile.index("\ntest:")]
    assert "manage.py ocr_status" in run
    assert run.index("ocr_status") < run.index("runserver")
