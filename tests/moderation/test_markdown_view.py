"""A key the page's Markdown decodes (entity references, backslash escapes) is found by the scan
and redacted as stored: the rendered page shows a placeholder, not the key."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.moderation.scanning.scanner import Scanner
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import ingest_one, v0_events
from tests.moderation import samples as s

pytestmark = pytest.mark.django_db


def pieces(value: str, size: int = 12) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value) - size + 1)]


SPELLINGS = {
    "entity": lambda key: "&#115;" + key[1:],
    "hex-entities": lambda key: "&#x73;" + key[1:].replace("-", "&#45;"),
    "backslash": lambda key: key.replace("-", "\\-"),
    "plain": lambda key: key,
    "ansi": lambda key: key[:3] + "\x1b[m\x1b[K" + key[3:],
}


def _agent_message(text: str) -> dict:
    return {
        "id": 99,
        "timestamp": "2025-03-01T11:00:00",
        "source": "agent",
        "message": text,
        "action": "message",
        "args": {"content": text, "image_urls": None, "wait_for_response": False},
    }


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_scan_finds_the_key_as_markdown_shows_it(spelling):
    key = s.openai_project_key()
    stored = SPELLINGS[spelling](key)
    text = f"Use this key: {stored} to call the API."
    (detection,) = Scanner().scan(text)
    assert detection.kind == "openai_api_key" and detection.shown == key
    assert detection.text == stored  # the stored form: what the page's redaction replaces


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_rendered_page_shows_no_piece_of_the_key(owner, spelling):
    key = s.openai_project_key()
    stored = SPELLINGS[spelling](key)
    events = v0_events(1, task="deploy it") + [_agent_message(f"Use this key: {stored} now.")]
    trajectory = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert stored in trajectory.redactions  # the stored form is in the map
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    page = Client().get(trajectory.get_absolute_url()).content.decode()
    assert "Use this key:" in page
    assert [piece for piece in pieces(key) if piece in page] == []
