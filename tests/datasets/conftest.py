"""Trajectories shared the way users share them (ingest, then the real scan), and a release
storage in a folder of the test's own."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from apps.demo import generator as demo
from apps.moderation.services.decisions import trajectory_approve
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from apps.trajectories.services.ingest import ShareOptions, trajectory_ingest
from tests.moderation.samples import github_token

PLANTED_EMAIL = "carol.planted@corpmail-example.net"
CONTACT_EMAIL = "anon.contact@mailbox-example.org"


@pytest.fixture
def release_storage(settings, tmp_path) -> Path:
    root = tmp_path / "releases"
    root.mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "releases": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root)},
        },
    }
    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    return root


def share(
    *,
    user=None,
    seed: int = 1,
    events: int = 12,
    screenshots: int = 0,
    plots: int = 0,
    visibility: str = "public",
    email: str = "",
    extra_text: str = "",
    polarity: str = "positive",
    scan: bool = True,
) -> Trajectory:
    """A demo OpenHands session shared as a share payload (the share button), then scanned."""
    session = demo.generate_session(
        random.Random(seed), events=events, screenshots=screenshots, plots=plots
    )
    if extra_text:
        session["events"].append(
            {
                "id": 10_000,
                "timestamp": "2025-01-01T00:00:00",
                "source": "user",
                "message": extra_text,
                "action": "message",
                "args": {"content": extra_text, "image_urls": None, "wait_for_response": False},
            }
        )
    body = orjson.loads(demo.share_payload(session, email=email, polarity=polarity))
    result = trajectory_ingest(
        data=orjson.dumps(body["trajectory"]) if user is not None else orjson.dumps(body),
        user=user,
        options=ShareOptions(
            visibility=visibility,
            license_agreed=visibility == "public",
            email=email if user is None else "",
            polarity=polarity,
            title=f"session {seed}",
        ),
    )
    assert result.errors == [], result.errors
    trajectory = result.stored[0].trajectory
    if scan:
        trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    return trajectory


def approve(trajectory: Trajectory, moderator) -> Trajectory:
    trajectory_approve(trajectory=trajectory, moderator=moderator)
    trajectory.refresh_from_db()
    return trajectory


__all__ = ["CONTACT_EMAIL", "PLANTED_EMAIL", "approve", "github_token", "share"]
