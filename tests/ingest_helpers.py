"""Builders and fixtures shared by the ingest service and API tests.

Import the fixtures into a test module with `from tests.ingest_helpers import *  # noqa`.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import orjson
import pytest
from PIL import Image as PILImage

from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest


def png_bytes(color: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (6, 4)) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def data_url(blob: bytes, content_type: str = "image/png") -> str:
    return f"data:{content_type};base64," + base64.b64encode(blob).decode()


def v0_events(steps: int = 3, *, task: str = "list the files", start_id: int = 0) -> list[dict]:
    """A user message then `steps` run actions, each answered by its observation."""
    events: list[dict] = [
        {
            "id": start_id,
            "timestamp": "2025-03-01T10:00:00",
            "source": "user",
            "message": task,
            "action": "message",
            "args": {"content": task, "image_urls": None, "wait_for_response": False},
        }
    ]
    for step in range(steps):
        action_id = start_id + 1 + 2 * step
        events.append(
            {
                "id": action_id,
                "timestamp": f"2025-03-01T10:{step + 1:02d}:00",
                "source": "agent",
                "message": f"Running command: ls {step}",
                "action": "run",
                "args": {"command": f"ls {step}", "thought": ""},
                "llm_metrics": {
                    "accumulated_cost": 0.01 * (step + 1),
                    "accumulated_token_usage": {
                        "model": "gpt-4o",
                        "prompt_tokens": 100 * (step + 1),
                        "completion_tokens": 10 * (step + 1),
                    },
                },
            }
        )
        events.append(
            {
                "id": action_id + 1,
                "timestamp": f"2025-03-01T10:{step + 1:02d}:30",
                "source": "agent",
                "message": f"Command `ls {step}` executed with exit code 0.",
                "cause": action_id,
                "observation": "run",
                "content": f"README.md\nfile{step}.txt\n",
                "extras": {"command": f"ls {step}", "metadata": {"exit_code": 0}},
                "success": True,
            }
        )
    return events


def share_payload(
    events: list[dict],
    *,
    email: str = "dev@example.org",
    permissions: str = "private",
    polarity: str = "negative",
    **extra,
) -> dict:
    """What OpenHands' store_feedback sends (FeedbackDataModel.model_dump(), v0.12.1+)."""
    return {
        "version": "1.0",
        "email": email,
        "polarity": polarity,
        "feedback": polarity,
        "permissions": permissions,
        "trajectory": events,
        **extra,
    }


def dumps(value) -> bytes:
    return orjson.dumps(value)


def ingest(value, *, user=None, **options):
    data = value if isinstance(value, bytes) else dumps(value)
    return trajectory_ingest(data=data, user=user, options=ShareOptions(**options))


def ingest_one(value, *, user=None, **options) -> Trajectory:
    result = ingest(value, user=user, **options)
    assert result.errors == [], result.errors
    (stored,) = result.stored
    return stored.trajectory


def make_trajectory(
    *,
    owner=None,
    visibility="public",
    review_state="approved",
    steps=2,
    task="list the files",
    redactions=None,
    email="",
) -> Trajectory:
    """A stored trajectory in the given state (states set directly: the scan is not under test)."""
    trajectory = ingest_one(v0_events(steps, task=task), user=owner, email=email)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility=visibility,
        review_state=review_state,
        redactions=redactions or {},
        license="MIT" if visibility == "public" else "",
    )
    reindex(trajectory)
    return trajectory


def reindex(trajectory: Trajectory) -> None:
    """What the scan does after it wrote the map (and an edit's rescan after a change of the
    agent, model and title): the search text built from the redacted view, then the redaction
    index and the redacted view's columns. For tests that set fields directly: ingest alone
    leaves a trajectory that no search finds until its scan."""
    from apps.trajectories.services import trajectory_search_refresh
    from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh

    trajectory_search_refresh(trajectory=Trajectory.objects.get(pk=trajectory.pk))
    trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
    trajectory.refresh_from_db()


def storage_files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


@pytest.fixture
def private_storage(settings, tmp_path) -> Path:
    """The "default" storage in a fresh folder, so tests can count the files it holds."""
    root = tmp_path / "private"
    root.mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root)},
        },
    }
    return root
