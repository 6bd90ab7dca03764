"""A moderator drops an image whose OCR found a secret (issue 7, "Screenshots carry secrets too").

The whole way for real: a screenshot with a key drawn into it (Pillow) is shared in a browse
observation and in a message's Markdown, the real tesseract reads the key, the scan holds the
trajectory and points at the image; the moderator drops it on the review item's page as part of
"redact and approve". Then, as every kind of caller: visitors (anonymous, another user) get the
placeholder on the page, 410 from both image endpoints, and no trace of the image in the API's
events, "Show JSON" or any export; the owner, moderators and staff still get the original (the
secret is the owner's own, and their raw upload holds it anyway; moderators must be able to
see what was dropped). A release holds the placeholder PNG, never the bytes.
"""

from __future__ import annotations

import base64
import hashlib
from types import SimpleNamespace

import orjson
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import Group
from django.test import Client

from apps.datasets import selectors as release_selectors
from apps.datasets import services as release_services
from apps.datasets.services.build import PLACEHOLDER_PNG
from apps.moderation.errors import ModerationError
from apps.moderation.models import AuditEntry, Finding
from apps.moderation.services.decisions import trajectory_approve
from apps.moderation.services.redact import image_drop
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.dropped import IMAGE_REMOVED
from apps.trajectories.models import Image, Trajectory
from apps.trajectories.services.ingest import ShareOptions, trajectory_ingest
from tests.conftest import skip_or_fail
from tests.datasets.conftest import release_storage  # noqa: F401  (a fixture)
from tests.moderation.conftest import make_finding, make_trajectory
from tests.moderation.test_ocr import DRAWN_TOKEN, attach, screenshot

pytestmark = pytest.mark.django_db
FORMATS = ("openhands", "openai", "sharegpt", "adp")


@pytest.fixture
def tesseract(settings):
    """OCR on, with the real tesseract (it is off in the test settings)."""
    from apps.moderation.scanning import ocr

    if not ocr.available():
        skip_or_fail("tesseract (Debian tesseract-ocr) is not installed")
    settings.TRAJHUB_OCR = True
    settings.TRAJHUB_OCR_TIMEOUT = 600  # a loaded machine: never cut the test's OCR short


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def share_with_screenshot(owner, png: bytes) -> Trajectory:
    url = data_url(png)
    events = [
        {
            "id": 1,
            "timestamp": "2025-03-01T10:00:00",
            "source": "user",
            "message": "Open my tokens page",
            "action": "message",
            "args": {
                "content": f"Open my tokens page, it looks like this: ![my dashboard]({url})",
                "image_urls": None,
                "wait_for_response": False,
            },
        },
        {
            "id": 2,
            "timestamp": "2025-03-01T10:00:05",
            "source": "agent",
            "message": "Browsing https://github.com/settings/tokens",
            "action": "browse",
            "args": {"url": "https://github.com/settings/tokens", "thought": "Look at the page"},
        },
        {
            "id": 3,
            "timestamp": "2025-03-01T10:00:09",
            "source": "environment",
            "message": "Visited https://github.com/settings/tokens",
            "cause": 2,
            "observation": "browse",
            "content": "Personal access tokens (classic) for the account",
            "extras": {
                "url": "https://github.com/settings/tokens",
                "screenshot": url,
                "error": False,
            },
        },
    ]
    result = trajectory_ingest(
        data=orjson.dumps(events),
        user=owner,
        options=ShareOptions(
            visibility="public", license_agreed=True, title="Look at my tokens page"
        ),
    )
    assert result.errors == [], result.errors
    return result.stored[0].trajectory


@pytest.fixture
def callers(owner, other_user, moderator, staff):
    """The five kinds of caller, each as a page client: whether it sees the original."""

    def client(user):
        c = Client()
        if user is not None:
            c.force_login(user)
        return c

    return {
        "anonymous": SimpleNamespace(client=client(None), original=False),
        "other user": SimpleNamespace(client=client(other_user), original=False),
        "owner": SimpleNamespace(client=client(owner), original=True),
        "moderator": SimpleNamespace(client=client(moderator), original=True),
        "staff": SimpleNamespace(client=client(staff), original=True),
    }


@pytest.fixture
def admin_mod(django_user_model):
    user = django_user_model.objects.create_user("drop-mod", is_staff=True)
    user.groups.add(Group.objects.get(name="moderators"))
    return user


def test_found_held_dropped_approved_and_gone_from_every_surface(
    tesseract,
    owner,
    callers,
    admin_mod,
    release_storage,  # noqa: F811
):
    png = screenshot("Personal access tokens", f"token {DRAWN_TOKEN}")
    sha = hashlib.sha256(png).hexdigest()
    trajectory = share_with_screenshot(owner, png)
    stored = Trajectory.objects.get(pk=trajectory.pk)
    assert any(f"trajhub-image:{sha}" in str(e.data) for e in stored.events.all())

    # Found by the real tesseract, held, the finding pointing at the image.
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "held" and result.counts == {"github_token": 1}
    assert Finding.objects.get(trajectory=trajectory).path == f"image:{sha}"
    image = Image.objects.get(sha256=sha)
    assert image.ocr_version and image.ocr_findings == 1
    assert not release_selectors.image_releasable(image)  # found something: never released

    # Flagged, so withheld from visitors until a moderator decides: search snippets too.
    assert sha not in Trajectory.objects.get(pk=trajectory.pk).search_text
    assert "trajhub-image:withheld" in Trajectory.objects.get(pk=trajectory.pk).search_text
    # The review item's page shows the image with what OCR found, ticked for dropping.
    moderator_page = Client()
    moderator_page.force_login(admin_mod)
    review = f"/admin/moderation/queueitem/{trajectory.pk}/change/"
    page = moderator_page.get(review).content.decode()
    assert f'value="{sha}"' in page and "found: github_token" in page
    assert f'src="/t/{trajectory.share_id}/images/{sha}"' in page
    answer = moderator_page.post(
        review,
        {
            "decision": "redact_approve",
            "seen_state": "held",
            "drop": [sha],
            "redact": "",
            "reason": "the screenshot shows a live token",
        },
    )
    assert answer.status_code == 302
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved" and trajectory.dropped_images == [sha]
    assert Image.objects.get(sha256=sha).dropped_at is not None
    assert not Finding.objects.filter(trajectory=trajectory).exists()
    assert sha not in trajectory.search_text  # search snippets show it
    dropped = AuditEntry.objects.get(share_id=trajectory.share_id, action="image_dropped")
    assert dropped.actor_username == "drop-mod" and dropped.actor_kind == "moderator"
    assert dropped.details["image"] == sha and dropped.reason == "the screenshot shows a live token"
    assert AuditEntry.objects.filter(
        share_id=trajectory.share_id, action="redacted_approved"
    ).exists()

    share_id = trajectory.share_id
    step_of_screenshot = 3
    for who, caller in callers.items():
        c = caller.client
        html = c.get(f"/t/{share_id}/").content.decode()
        page_image = c.get(f"/t/{share_id}/images/{sha}")
        api_image = c.get(f"/api/v1/trajectories/{share_id}/images/{sha}")
        events = c.get(f"/api/v1/trajectories/{share_id}/events").content.decode()
        json_fragment = c.get(
            f"/t/{share_id}/events/{step_of_screenshot}/json", HTTP_X_REQUESTED_WITH="fetch"
        ).content.decode()
        exports = {
            fmt: c.get(f"/api/v1/trajectories/{share_id}/download", {"format": fmt})
            for fmt in FORMATS
        }
        for fmt, export in exports.items():
            assert export.status_code == 200, (who, fmt, export.status_code)
        if caller.original:
            assert page_image.status_code == 200, who
            assert b"".join(page_image.streaming_content) == png, who
            assert api_image.status_code == 200 and api_image.content == png, who
            assert f"/t/{share_id}/images/{sha}" in html, who
            assert "Removed by a moderator: only you and moderators see it" in html, who
            assert sha in events and sha in json_fragment, who
            continue
        assert page_image.status_code == 410, who
        assert api_image.status_code == 410, who
        assert api_image.json()["error"]["message"] == "image removed by a moderator"
        assert "Image removed by a moderator" in html, who  # the screenshot's placeholder
        assert "[image removed by a moderator]" in html, who  # the message's Markdown image
        assert IMAGE_REMOVED in events and IMAGE_REMOVED in json_fragment, who
        for text in (html, events, json_fragment):
            assert sha not in text, who
        for fmt, export in exports.items():
            body = export.content
            assert sha.encode() not in body and png not in body, (who, fmt)
        assert IMAGE_REMOVED.encode() in exports["openhands"].content, who

    # A release build: the placeholder PNG in its place, never the bytes.
    run = release_services.release_run(force=True)
    assert run.action == "published", run.message
    folder = release_storage / run.release.prefix
    rows = []
    for path in sorted((folder / "data").glob("train-*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    (row,) = [row for row in rows if row["id"] == share_id]
    assert row["images"] and all(item["bytes"] == PLACEHOLDER_PNG for item in row["images"])
    for path in folder.rglob("*.parquet"):
        for record in pq.read_table(path).to_pylist():
            assert png not in orjson.dumps(record, default=repr), path


def test_a_dropped_image_is_not_read_again_and_does_not_hold_a_rescan(
    tesseract,
    admin_mod,
):
    trajectory = make_trajectory(events=["browse https://github.com/settings/tokens"])
    image = attach(trajectory, screenshot("Personal access tokens", f"token {DRAWN_TOKEN}"))
    assert trajectory_scan(trajectory=trajectory).review_state == "held"
    image_drop(trajectory=trajectory, moderator=admin_mod, sha256=image.sha256)
    trajectory.refresh_from_db()
    trajectory_approve(trajectory=trajectory, moderator=admin_mod)
    # A rescan (new rules, say) does not read it, so it finds nothing to hold it for.
    rescan = trajectory_scan(trajectory=trajectory)
    assert rescan.review_state == "approved" and rescan.counts == {}
    trajectory.refresh_from_db()
    assert trajectory.dropped_images == [image.sha256]


# --- without OCR: the service, the hook, the queue page --------------------------------------


def png_of(text: str) -> bytes:
    return screenshot(text)


def test_drop_covers_every_trajectory_with_the_same_bytes(moderator):
    first = make_trajectory(events=["one"], review_state="held")
    second = make_trajectory(events=["two"], review_state="approved")
    image = attach(first, png_of("a secret dashboard"))
    second.image_links.create(image=image)
    image_drop(trajectory=first, moderator=moderator, sha256=image.sha256, note="a key")
    assert Trajectory.objects.get(pk=first.pk).dropped_images == [image.sha256]
    assert Trajectory.objects.get(pk=second.pk).dropped_images == [image.sha256]
    entry = AuditEntry.objects.get(action="image_dropped")
    assert entry.share_id == first.share_id and entry.details["also_in_trajectories"] == 1
    with pytest.raises(ModerationError, match="dropped already"):
        image_drop(trajectory=second, moderator=moderator, sha256=image.sha256)
    assert AuditEntry.objects.filter(action="image_dropped").count() == 1


def test_each_owner_of_the_dropped_bytes_is_told_with_the_reason(
    django_user_model, moderator, django_capture_on_commit_callbacks
):
    from django.core import mail

    from apps.accounts.models import Notice

    owner = django_user_model.objects.create_user("shot-owner", email="shot-owner@example.org")
    first = make_trajectory(events=["one"], review_state="held", owner=owner)
    second = make_trajectory(events=["two"], contact_email="anon.shot@example.org")
    image = attach(first, png_of("a secret dashboard"))
    second.image_links.create(image=image)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        image_drop(trajectory=first, moderator=moderator, sha256=image.sha256, note="an AWS key")
    by_address = {message.to[0]: message for message in mail.outbox}
    assert set(by_address) == {owner.email, "anon.shot@example.org"}
    for message, mine, other in (
        (by_address[owner.email], first, second),
        (by_address["anon.shot@example.org"], second, first),
    ):
        assert "removed by a moderator" in message.subject
        assert "an AWS key" in message.body and "revoke" in message.body
        assert mine.share_id[:12] in message.body and other.share_id[:12] not in message.body
        assert image.sha256 not in message.body
    # The owner's dashboard lists it; the anonymous sharer's address is not kept once mailed.
    notice = Notice.objects.get(user=owner)
    assert notice.kind == "image_dropped" and notice.share_id == first.share_id
    assert Notice.objects.get(share_id=second.share_id).email == ""


def test_a_refused_drop_tells_nobody(owner, moderator, django_capture_on_commit_callbacks):
    from django.core import mail

    trajectory = make_trajectory(events=["one"], review_state="held", owner=owner)
    image = attach(trajectory, png_of("a secret dashboard"))
    image_drop(trajectory=trajectory, moderator=moderator, sha256=image.sha256)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ModerationError):
        image_drop(trajectory=trajectory, moderator=moderator, sha256=image.sha256)
    assert mail.outbox == []


def test_drop_is_for_moderators_and_for_the_trajectorys_own_images(owner, moderator):
    from django.core.exceptions import PermissionDenied

    trajectory = make_trajectory(events=["one"], review_state="held", owner=owner)
    stranger = make_trajectory(events=["two"])
    image = attach(stranger, png_of("not in the first one"))
    with pytest.raises(ModerationError, match="no such image"):
        image_drop(trajectory=trajectory, moderator=moderator, sha256=image.sha256)
    own = attach(trajectory, png_of("my own picture"))
    with pytest.raises(PermissionDenied):
        image_drop(trajectory=trajectory, moderator=owner, sha256=own.sha256)
    assert Image.objects.get(pk=own.pk).dropped_at is None


def test_a_rescan_keeps_the_dropped_list(moderator):
    trajectory = make_trajectory(events=["one"])
    image = attach(trajectory, png_of("picture"))
    trajectory_scan(trajectory=trajectory)
    image_drop(trajectory=trajectory, moderator=moderator, sha256=image.sha256)
    Trajectory.objects.filter(pk=trajectory.pk).update(dropped_images=[])  # as if lost
    trajectory_scan(trajectory=trajectory)
    assert Trajectory.objects.get(pk=trajectory.pk).dropped_images == [image.sha256]


@pytest.mark.parametrize(
    ("publish_unread", "ocr_version", "ocr_findings", "dropped", "cleared", "releasable"),
    [
        (False, "v1", 0, False, False, True),  # read by OCR, nothing found: goes in
        (False, "v1", 2, False, False, False),  # OCR found something
        (False, "v1", 2, False, True, True),  # ... and a moderator cleared it
        (False, "", 0, False, False, False),  # nobody read it (OCR off or missing)
        (False, "", 0, False, True, True),  # a moderator cleared it
        (True, "", 0, False, False, True),  # the setting publishes it unread
        (True, "v1", 1, False, False, False),  # found while OCR was on: stays out
        (False, "v1", 0, True, False, False),  # dropped by a moderator
        (True, "", 0, True, True, False),  # dropped wins over everything
    ],
)
def test_image_releasable(
    settings, publish_unread, ocr_version, ocr_findings, dropped, cleared, releasable
):
    from django.utils import timezone

    settings.TRAJHUB_OCR = False  # the setting applies where OCR is off or missing
    settings.TRAJHUB_IMAGES_PUBLISH_UNREAD = publish_unread
    image = Image(
        sha256="a" * 64,
        content_type="image/png",
        size=1,
        path="images/x.png",
        ocr_version=ocr_version,
        ocr_findings=ocr_findings,
        dropped_at=timezone.now() if dropped else None,
        cleared_at=timezone.now() if cleared else None,
    )
    assert release_selectors.image_releasable(image) is releasable


def test_drop_from_the_review_page_without_approving(admin_mod):
    trajectory = make_trajectory(events=["one"], review_state="held")
    image = attach(trajectory, png_of("picture"))
    client = Client()
    client.force_login(admin_mod)
    review = f"/admin/moderation/queueitem/{trajectory.pk}/change/"
    answer = client.post(
        review, {"decision": "drop_images", "seen_state": "held", "drop": [image.sha256]}
    )
    assert answer.status_code == 302 and answer["Location"] == review
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"
    assert Image.objects.get(pk=image.pk).dropped_at is not None
    page = client.get(review).content.decode()
    assert "others see a placeholder" in page and f'name="drop" value="{image.sha256}"' not in page
    nothing = client.post(review, {"decision": "drop_images", "seen_state": "held"}, follow=True)
    assert "tick the images to drop" in nothing.content.decode()


def test_an_ocr_read_that_timed_out_does_not_count_as_clean(settings, monkeypatch):
    """tesseract's timeout gives "" like a picture without text: such an image stays unread,
    so releases keep it out (with OCR on) instead of taking it as clean."""
    import time

    from apps.moderation.scanning import ocr

    settings.TRAJHUB_OCR = True
    settings.TRAJHUB_OCR_TIMEOUT = 0.05
    settings.TRAJHUB_IMAGES_PUBLISH_UNREAD = False  # whether tesseract is installed or not
    monkeypatch.setattr(ocr, "available", lambda: True)
    slow = make_trajectory(events=["one"])
    image = attach(slow, png_of("slow"))

    def timing_out(data, *, timeout):
        time.sleep(timeout * 1.2)
        return ""

    monkeypatch.setattr(ocr, "read_text", timing_out)
    trajectory_scan(trajectory=slow)
    image.refresh_from_db()
    assert image.ocr_version == "" and not release_selectors.image_releasable(image)
    monkeypatch.setattr(ocr, "read_text", lambda data, *, timeout: "")
    trajectory_scan(trajectory=slow)
    image.refresh_from_db()
    assert image.ocr_version and release_selectors.image_releasable(image)


def test_an_image_read_clean_is_not_read_again_by_the_same_rules(settings, monkeypatch):
    """A rescan ("redact and approve" runs one inside the moderator's request) reads only what
    it has not read clean by today's rules and allowlist; an image with findings is read again
    so its findings are stored again; a new allowlist reads everything again."""
    from apps.moderation.scanning import ocr

    settings.TRAJHUB_OCR = True
    monkeypatch.setattr(ocr, "available", lambda: True)
    trajectory = make_trajectory(events=["one"])
    clean = attach(trajectory, png_of("clean"))
    dirty = attach(trajectory, png_of("dirty"))
    reads: list[bytes] = []
    texts = {clean.sha256: "Welcome to the documentation", dirty.sha256: f"token {DRAWN_TOKEN}"}

    def reading(data, *, timeout):
        reads.append(data)
        return texts[hashlib.sha256(data).hexdigest()]

    monkeypatch.setattr(ocr, "read_text", reading)
    assert trajectory_scan(trajectory=trajectory).counts == {"github_token": 1}
    assert len(reads) == 2
    reads.clear()
    again = trajectory_scan(trajectory=trajectory)
    assert again.counts == {"github_token": 1}  # the dirty one's finding is stored again
    assert [hashlib.sha256(data).hexdigest() for data in reads] == [dirty.sha256]
    assert Finding.objects.get(trajectory=trajectory).path == f"image:{dirty.sha256}"
    reads.clear()
    settings.TRAJHUB_SCAN_ALLOWLIST = {"domains": ["docs.example.org"], "values": []}
    trajectory_scan(trajectory=trajectory)
    assert len(reads) == 2


def _held_with_flagged_image() -> tuple[Trajectory, Image]:
    """Held because OCR found a key in its screenshot (the finding made as the scan makes it,
    without running tesseract)."""
    trajectory = make_trajectory(events=["browse the settings page"], review_state="held")
    image = attach(trajectory, png_of("a secret dashboard"))
    make_finding(trajectory, image_sha256=image.sha256)
    return trajectory, image


def test_bulk_redact_and_approve_skips_a_flagged_image_unless_told_to_drop_it(admin_mod):
    from django.urls import reverse

    from apps.moderation.services.scan import trajectory_scan
    from tests.moderation import samples as s
    from tests.moderation.conftest import bulk

    queue = reverse("admin:moderation_queueitem_changelist")
    with_image, image = _held_with_flagged_image()
    text_only = make_trajectory(events=[f"export OPENAI_API_KEY={s.openai_key()}"])
    trajectory_scan(trajectory=text_only)
    client = Client()
    client.force_login(admin_mod)
    page = client.get(queue).content.decode()
    assert "Also drop the images the scan flagged" in page

    answer = bulk(
        client, queue, "redact_approve", [with_image, text_only], redact="OPENAI_API", follow=True
    )
    shown = answer.content.decode()
    assert Trajectory.objects.get(pk=text_only.pk).review_state == "approved"
    assert Trajectory.objects.get(pk=with_image.pk).review_state == "held"
    assert Image.objects.get(pk=image.pk).dropped_at is None
    assert f"Skipped {with_image.share_id[:12]}: 1 of its images showed a finding" in shown
    assert f'href="/admin/moderation/queueitem/{with_image.pk}/change/"' in shown

    bulk(client, queue, "redact_approve", [with_image], drop_flagged="on")
    with_image.refresh_from_db()
    assert with_image.review_state == "approved" and with_image.dropped_images == [image.sha256]
    assert Image.objects.get(pk=image.pk).dropped_at is not None
    entry = AuditEntry.objects.get(share_id=with_image.share_id, action="redacted_approved")
    assert entry.details["dropped_images"] == 1


def test_bulk_approve_skips_a_flagged_image_unless_told_to_drop_it(admin_mod):
    """Plain "Approve" in bulk would publish a screenshot whose OCR found a key, unseen by the
    moderator: such a row is skipped and named, unless the box drops its flagged images."""
    from django.urls import reverse

    from tests.moderation.conftest import bulk

    queue = reverse("admin:moderation_queueitem_changelist")
    with_image, image = _held_with_flagged_image()
    plain = make_trajectory(events=["nothing to see"], review_state="held")
    client = Client()
    client.force_login(admin_mod)

    shown = bulk(client, queue, "approve", [with_image, plain], follow=True).content.decode()
    assert Trajectory.objects.get(pk=plain.pk).review_state == "approved"
    assert Trajectory.objects.get(pk=with_image.pk).review_state == "held"
    assert Image.objects.get(pk=image.pk).dropped_at is None
    assert f"Skipped {with_image.share_id[:12]}: 1 of its images showed a finding" in shown

    shown = bulk(client, queue, "approve", [with_image], drop_flagged="on", follow=True)
    with_image.refresh_from_db()
    assert with_image.review_state == "approved" and with_image.dropped_images == [image.sha256]
    assert "1 trajectories approved with their flagged images dropped" in shown.content.decode()


def test_an_approved_trajectorys_flagged_image_stays_withheld_on_the_site_as_in_releases(
    tesseract,
    owner,
    callers,
    admin_mod,
    release_storage,  # noqa: F811
):
    """One rule for the site and the releases (issue 20): approving a held trajectory redacts
    its text, but no placeholder can redact a picture, so an image in which OCR found a key
    stays withheld from visitors, on the page, both image endpoints, the API's events and the
    exports, exactly as the release withholds it, until a moderator clears (or drops) it. Before,
    the site showed it the moment the trajectory was approved while the release left it out."""
    from apps.trajectories.dropped import IMAGE_WITHHELD
    from apps.trajectories.image_rule import FLAGGED_TEXT

    png = screenshot("Personal access tokens", f"token {DRAWN_TOKEN}")
    sha = hashlib.sha256(png).hexdigest()
    trajectory = share_with_screenshot(owner, png)
    assert trajectory_scan(trajectory=trajectory).review_state == "held"
    assert Trajectory.objects.get(pk=trajectory.pk).flagged_images == [sha]

    # A moderator approves on the review page without ticking the image for dropping.
    moderator_page = Client()
    moderator_page.force_login(admin_mod)
    review = f"/admin/moderation/queueitem/{trajectory.pk}/change/"
    page = moderator_page.get(review).content.decode()
    assert "text found: others see a placeholder until a moderator clears or drops it" in page
    answer = moderator_page.post(
        review, {"decision": "approve", "seen_state": "held", "redact": "", "reason": ""}
    )
    assert answer.status_code == 302
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved" and trajectory.flagged_images == [sha]
    queue = moderator_page.get("/admin/moderation/queueitem/").content.decode()
    assert "1 image with findings" in queue  # it still waits for a moderator

    share_id = trajectory.share_id
    for who, caller in callers.items():
        c = caller.client
        html = c.get(f"/t/{share_id}/").content.decode()
        page_image = c.get(f"/t/{share_id}/images/{sha}")
        api_image = c.get(f"/api/v1/trajectories/{share_id}/images/{sha}")
        events = c.get(f"/api/v1/trajectories/{share_id}/events").content.decode()
        exports = [
            c.get(f"/api/v1/trajectories/{share_id}/download", {"format": fmt}).content
            for fmt in FORMATS
        ]
        if caller.original:
            assert page_image.status_code == 200 and api_image.status_code == 200, who
            assert "Text that may be a secret was found in it" in html, who
            continue
        assert page_image.status_code == 403, who
        assert page_image.content.decode() == FLAGGED_TEXT, who
        assert api_image.status_code == 403, who
        assert api_image.json()["error"]["message"] == FLAGGED_TEXT, who
        assert "Image not shown until a moderator checks it" in html, who
        assert IMAGE_WITHHELD in events, who
        for text in (html, events):
            assert sha not in text, who
        for body in exports:
            assert sha.encode() not in body and png not in body, who

    def release_row_images() -> list[bytes]:
        run = release_services.release_run(force=True)
        assert run.action == "published", run.message
        folder = release_storage / run.release.prefix
        rows = []
        for path in sorted((folder / "data").glob("train-*.parquet")):
            rows.extend(pq.read_table(path).to_pylist())
        (row,) = [row for row in rows if row["id"] == share_id]
        return [item["bytes"] for item in row["images"]]

    withheld = release_row_images()
    assert withheld and all(image == PLACEHOLDER_PNG for image in withheld)

    # The moderator looks at it and clears it: public on the site and in the next release.
    answer = moderator_page.post(
        review, {"decision": "clear_images", "seen_state": "approved", "clear": [sha]}
    )
    assert answer.status_code == 302
    assert Trajectory.objects.get(pk=trajectory.pk).flagged_images == []
    anonymous = callers["anonymous"].client
    assert anonymous.get(f"/t/{share_id}/images/{sha}").status_code == 200
    assert f"/t/{share_id}/images/{sha}" in anonymous.get(f"/t/{share_id}/").content.decode()
    # (A release is made when its set of trajectories changes: one more share makes the next.)
    trajectory_scan(trajectory=share_with_screenshot(owner, png_of("another run")))
    assert png in release_row_images()
