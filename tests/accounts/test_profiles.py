"""GitHub avatars fetched once into our own storage and served from /u/<username>/avatar (tested
against a local HTTP server standing in for GitHub's avatar host). The profile page's list of
trajectories: tests/owners/test_profiles.py."""

from __future__ import annotations

import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client
from PIL import Image

from apps.accounts.models import User
from apps.accounts.services.avatars import avatar_fetch
from tests.accounts.test_github_login import github_user, sign_in_with_github
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def _png(size=(400, 300), color=(10, 120, 200)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def avatar_server():
    """A local HTTP server: /octocat.png is a PNG, /not-an-image.png is HTML. Counts requests."""
    hits: list[str] = []
    body = _png()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            if self.path == "/octocat.png":
                payload, kind = body, "image/png"
            else:
                payload, kind = b"<html><script>alert(1)</script></html>", "image/png"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def allowed(settings, avatar_server, private_storage):
    base, _ = avatar_server
    settings.TRAJHUB_AVATAR_SOURCES = [base + "/"]
    return base


@pytest.fixture(autouse=True)
def github_app(settings):
    provider = dict(settings.SOCIALACCOUNT_PROVIDERS["github"])
    provider["APP"] = {"client_id": "Iv1.trajhubtestclient", "secret": "s"}
    settings.SOCIALACCOUNT_PROVIDERS = {**settings.SOCIALACCOUNT_PROVIDERS, "github": provider}


def test_unknown_and_disabled_users_are_not_found(client, django_user_model):
    django_user_model.objects.create_user("sleeper", is_active=False)
    assert client.get("/u/nobody/").status_code == 404
    assert client.get("/u/sleeper/").status_code == 404
    assert client.get("/u/nobody/avatar").status_code == 404


def test_github_sign_in_fetches_the_avatar_once_into_storage(
    allowed, avatar_server, django_capture_on_commit_callbacks
):
    _, hits = avatar_server
    user_json = {
        **github_user(101, "octocat", "octocat@example.org"),
        "avatar_url": f"{allowed}/octocat.png",
    }
    emails = [{"email": "octocat@example.org", "primary": True, "verified": True}]
    with django_capture_on_commit_callbacks(execute=True):
        callback, _ = sign_in_with_github(Client(), user=user_json, emails=emails)
    assert callback.status_code == 302
    user = User.objects.get(username="octocat")
    assert user.avatar_path and hits == ["/octocat.png"]

    page = Client().get("/u/octocat/").content.decode()
    assert 'src="/u/octocat/avatar"' in page and allowed not in page
    assert 'href="https://github.com/octocat"' in page
    avatar = Client().get("/u/octocat/avatar")
    assert avatar.status_code == 200 and avatar["Content-Type"] == "image/png"
    with Image.open(io.BytesIO(avatar.content)) as image:
        assert image.format == "PNG" and max(image.size) <= 160

    # Signing in again does not fetch it again.
    with django_capture_on_commit_callbacks(execute=True):
        sign_in_with_github(Client(), user=user_json, emails=emails, code="again")
    assert hits == ["/octocat.png"]


def test_only_allowed_sources_and_only_images(owner, allowed, avatar_server):
    _, hits = avatar_server
    assert avatar_fetch(user=owner, url="http://169.254.169.254/latest/meta-data") is False
    assert hits == []
    from apps.accounts.services.avatars import AvatarError

    with pytest.raises(AvatarError):
        avatar_fetch(user=owner, url=f"{allowed}/not-an-image.png")
    owner.refresh_from_db()
    assert owner.avatar_path == ""
    assert Client().get("/u/owner/avatar").status_code == 404


def test_a_refused_connection_leaves_no_avatar(owner, settings, private_storage):
    from apps.accounts.tasks import avatar_fetch_task

    settings.TRAJHUB_AVATAR_SOURCES = ["http://127.0.0.1:9/"]
    assert avatar_fetch_task(owner.pk, "http://127.0.0.1:9/x.png") is False
    owner.refresh_from_db()
    assert owner.avatar_path == ""


def test_the_trajectory_page_links_the_owners_profile(client, owner):
    trajectory = make_trajectory(owner=owner)
    assert 'href="/u/owner/"' in client.get(trajectory.get_absolute_url()).content.decode()
