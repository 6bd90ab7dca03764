"""Derived text (titles, link previews, feed, browse rows, the API, the search text) is made from
the redacted text, never cut before redaction: a partial secret is a secret (issue 7's attack read
72-88 characters of keys in titles cut from the first message)."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.search import SEARCH_TEXT_CHARS, trajectory_search_refresh
from tests.ingest_helpers import ingest_one, v0_events
from tests.moderation import samples as s

pytestmark = pytest.mark.django_db


def pieces(value: str, size: int = 12) -> list[str]:
    """Every run of `size` characters of a value: none may reach a visitor."""
    return [value[i : i + size] for i in range(0, len(value) - size + 1)]


def leaked(body: str, value: str) -> list[str]:
    return [piece for piece in pieces(value) if piece in body]


@pytest.mark.parametrize(
    "make",
    [s.openai_project_key, s.github_token, s.private_key_block, lambda: "jane.roe.leak@gmail.com"],
)
def test_title_cut_from_the_first_message_leaks_nothing(owner, make):
    secret = make()
    # The automatic title stops at 119 characters plus "…": put the value across that cut
    # (for a private key, inside its Base64 body).
    into = min(len(secret) // 2, 60)
    task = "x" * (118 - 5 - into) + " use " + secret + " to deploy the service and report back"
    trajectory = ingest_one(
        v0_events(2, task=task), user=owner, visibility="public", license_agreed=True
    )
    assert trajectory.title.endswith("…") and secret not in trajectory.title
    assert secret.replace("\n", " ")[into - 8 : into - 2] in trajectory.title  # the cut splits it
    result = trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    if result.review_state == "held":  # a secret: a moderator approves it as it is shown
        Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    assert Trajectory.objects.public().filter(pk=trajectory.pk).exists()
    visitor = Client()
    page = visitor.get(trajectory.get_absolute_url()).content.decode()
    assert 'property="og:title"' in page
    api = visitor.get(f"/api/v1/trajectories/{trajectory.share_id}").content.decode()
    listing = visitor.get("/api/v1/trajectories").content.decode()
    browse = visitor.get("/browse/").content.decode()
    feed = visitor.get("/feed.atom").content.decode()
    flat = " ".join(line for line in secret.split("\n") if "PRIVATE KEY" not in line)
    for name, body in [
        ("page", page),
        ("api", api),
        ("list", listing),
        ("browse", browse),
        ("feed", feed),
    ]:
        assert leaked(body, flat) == [], name


def test_search_text_is_redacted_before_it_is_cut(owner):
    key = s.github_token()
    # The key straddles the search text's cap: cut first, it would no longer match its redaction.
    filler = "y" * (SEARCH_TEXT_CHARS - 40)
    trajectory = ingest_one(
        v0_events(1, task="find the bug"), user=owner, visibility="public", license_agreed=True
    )
    event = Event.objects.filter(trajectory=trajectory).order_by("position").last()
    Event.objects.filter(pk=event.pk).update(text=f"{filler} {key} end")
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    trajectory_search_refresh(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert len(trajectory.search_text) <= SEARCH_TEXT_CHARS
    assert not any(piece in trajectory.search_text for piece in pieces(key, 8))
