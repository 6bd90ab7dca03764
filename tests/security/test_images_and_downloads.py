"""Images and downloads: only raster images a browser shows (never SVG or HTML, which it would
run), always with `X-Content-Type-Options: nosniff`; downloads are attachments with a safe name."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.test import Client

from apps.trajectories.models import Image, Trajectory, TrajectoryImage
from tests.security.world import World, world_fixture
from tests.trajectories.viewer_factories import png

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_fixture(django_db_blocker) as built:
        yield built


def image_urls(trajectory: Trajectory, sha: str) -> list[str]:
    return [
        f"/t/{trajectory.share_id}/images/{sha}",
        f"/api/v1/trajectories/{trajectory.share_id}/images/{sha}",
    ]


def attach(trajectory: Trajectory, blob: bytes, content_type: str, sha: str) -> None:
    path = storages["default"].save(f"images/test/{sha}", ContentFile(blob))
    image = Image.objects.create(sha256=sha, content_type=content_type, size=len(blob), path=path)
    TrajectoryImage.objects.create(trajectory=trajectory, image=image)


@pytest.mark.parametrize("caller", ["anonymous", "owner", "staff"])
def test_stored_images_are_served_as_images_that_cannot_be_sniffed(world: World, caller):
    trajectory = world.trajectories["public"]
    client = world.client(caller)
    for url in image_urls(trajectory, world.images["public"]):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"] == "image/png", url
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert "private" in response["Cache-Control"], url
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert body.startswith(b"\x89PNG"), url


HOSTILE = {
    "image/svg+xml": b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>',
    "text/html": b"<script>alert(1)</script>",
    "application/xhtml+xml": b'<html xmlns="http://www.w3.org/1999/xhtml"><script>x</script></html>',
    "application/octet-stream": b"<script>alert(1)</script>",
    "image/png; charset=utf-8\r\nX-Injected: 1": png(),
    "": b"<script>alert(1)</script>",
}


@pytest.mark.parametrize("content_type", sorted(HOSTILE))
def test_nothing_a_browser_could_run_is_served_from_our_origin(world: World, content_type):
    trajectory = world.trajectories["public"]
    sha = f"{sorted(HOSTILE).index(content_type) + 1:x}" * 64
    attach(trajectory, HOSTILE[content_type], content_type, sha[:64])
    for caller in ("anonymous", "owner", "staff"):
        client = world.client(caller)
        for url in image_urls(trajectory, sha[:64]):
            response = client.get(url)
            assert response.status_code == 404, (caller, url, response.status_code)
            assert b"alert(1)" not in response.content


@pytest.mark.parametrize("content_type", ["image/jpeg", "image/gif", "image/webp", "image/bmp"])
def test_every_raster_format_ingest_stores_is_shown(world: World, content_type):
    trajectory = world.trajectories["public"]
    sha = "c" * 63 + str(["image/jpeg", "image/gif", "image/webp", "image/bmp"].index(content_type))
    attach(trajectory, b"raster bytes", content_type, sha)
    for url in image_urls(trajectory, sha):
        response = Client().get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"] == content_type


def test_every_response_says_nosniff(world: World):
    trajectory = world.trajectories["public"]
    client = world.client("anonymous")
    for url in (
        "/",
        trajectory.get_absolute_url(),
        f"{trajectory.get_absolute_url()}events?after=0",
        f"{trajectory.get_absolute_url()}find?q=a",
        f"/api/v1/trajectories/{trajectory.share_id}",
        f"/api/v1/trajectories/{trajectory.share_id}/download",
        "/api/v1/nothing-here",
        "/feed.atom",
    ):
        assert client.get(url)["X-Content-Type-Options"] == "nosniff", url


HOSTILE_NAMES = [
    'evil"; filename="x.html',
    "evil.json\r\nSet-Cookie: a=b",
    "../../etc/passwd",
    "<script>alert(1)</script>.json",
    "résumé ünïcode.json",
    "",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_downloads_are_attachments_with_a_name_that_cannot_break_out(world: World, name):
    trajectory = world.trajectories["public"]
    Trajectory.objects.filter(pk=trajectory.pk).update(raw_filename=name)
    staff = world.client("staff")
    for fmt in ("original", "openhands", "openai", "sharegpt", "atif"):
        response = staff.get(f"/api/v1/trajectories/{trajectory.share_id}/download?format={fmt}")
        assert response.status_code == 200, fmt
        disposition = response["Content-Disposition"]
        assert disposition.startswith("attachment; filename="), disposition
        filename = disposition.removeprefix("attachment; filename=").strip('"')
        assert all(ch.isalnum() or ch in "._-" for ch in filename), disposition
        assert response["Content-Type"] in ("application/json", "application/octet-stream")
        assert "\n" not in disposition and "\r" not in disposition
        assert "Set-Cookie" not in response or "a=b" not in response["Set-Cookie"]


def test_naming_another_trajectorys_image_in_an_upload_does_not_get_it(world: World):
    """Images are linked to a trajectory only when its own upload held their bytes: writing
    another trajectory's reference into an event neither serves that image through it nor keeps
    the image alive once its trajectories are gone."""
    import orjson

    from apps.trajectories.services import ShareOptions, trajectory_ingest

    held_image = world.images["held"]
    events = [
        {
            "id": 1,
            "source": "user",
            "action": "message",
            "args": {
                "content": f"![x](trajhub-image:{held_image})",
                "image_urls": [f"trajhub-image:{held_image}"],
            },
        }
    ]
    result = trajectory_ingest(
        data=orjson.dumps(events),
        user=world.users["other"],
        options=ShareOptions(visibility="public", license_agreed=True, client_ip="10.44.0.1"),
    )
    mine = result.stored[0].trajectory
    Trajectory.objects.filter(pk=mine.pk).update(review_state="approved")
    assert not TrajectoryImage.objects.filter(trajectory=mine).exists()
    client = world.client("other")
    for url in image_urls(mine, held_image):
        assert client.get(url).status_code == 404, url
    page = client.get(mine.get_absolute_url()).content.decode()
    assert f"/t/{mine.share_id}/images/{held_image}" in page  # the page asks; nothing answers
