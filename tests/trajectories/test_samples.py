"""The suite's own sample files (tests/samples/): each imports as its format, is stored, renders
and exports. They are what import, page and upload tests use on a machine without the shared
real-world fixtures, so they must stay true to their formats."""

from __future__ import annotations

import html
import re

import orjson
import pytest

from apps.trajectories.importers import parse
from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest
from tests.conftest import SAMPLE_FILES

pytestmark = pytest.mark.django_db

# file: (format, events per trajectory, a text its page shows)
EXPECTED = {
    "openhands_v0_events.json": ("openhands_v0", [11], "python -m pytest -q"),
    "openhands_share_payload.json": ("openhands_share", [11], "greet.py now takes --verbose"),
    "openhands_eval_output.jsonl": ("openhands_eval", [11, 5], "Add a --verbose flag"),
    "openhands_v1_sdk_output.jsonl": ("openhands_v1", [4, 3], "The tests pass."),
    "sweagent_run.traj": ("sweagent", [10], "open greet.py"),
    "sharegpt_conversations.json": ("sharegpt", [5, 2], "18 °C and clear in Paris"),
    "openai_messages.json": ("openai_messages", [5], "greet.py has 4 lines."),
    "claude_code_session.jsonl": (
        "claude_code",
        [19],
        "Added --verbose; the tests need a test file.",
    ),
    "codex_rollout.jsonl": ("codex_cli", [8], "greet.py takes --verbose now."),
    "gemini_cli_session.jsonl": (
        "gemini_cli",
        [14],
        "greet.py takes --verbose now; a test file is still missing.",
    ),
    "atif_trajectory.json": ("atif", [15], "greet.py takes --verbose now and has a test."),
}


def test_every_sample_file_is_listed():
    assert sorted(EXPECTED) == SAMPLE_FILES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_imports_as_its_format(sample, name):
    format, counts, _ = EXPECTED[name]
    result = parse(sample(name))
    assert result.errors == []
    assert result.format == format
    assert [len(t.events) for t in result.trajectories] == counts


def test_samples_carry_their_metadata(sample):
    (v0,) = parse(sample("openhands_share_payload.json")).trajectories
    assert v0.polarity == "positive"
    rows = parse(sample("openhands_eval_output.jsonl")).trajectories
    assert [row.agent for row in rows] == ["CodeActAgent", "CodeActAgent"]
    assert rows[0].model == "sample/model-1"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_is_stored_shown_and_exported(client, owner, sample, name):
    format, counts, shown = EXPECTED[name]
    result = trajectory_ingest(data=sample(name), user=owner, options=ShareOptions(filename=name))
    assert result.errors == [] and [s.trajectory.num_events for s in result.stored] == counts
    trajectory = result.stored[0].trajectory
    assert Trajectory.objects.get(pk=trajectory.pk).source_format == format

    client.force_login(owner)
    page = client.get(trajectory.get_absolute_url())
    assert page.status_code == 200
    words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode())).split())
    assert shown in words
    url = f"/api/v1/trajectories/{trajectory.share_id}/download"
    for export in ("openhands", "openai", "sharegpt", "atif"):
        response = client.get(url, {"format": export})
        assert response.status_code == 200, (export, response.content[:200])
        assert orjson.loads(
            b"".join(response.streaming_content) if response.streaming else response.content
        )
    original = client.get(url, {"format": "original"})
    body = b"".join(original.streaming_content) if original.streaming else original.content
    assert original.status_code == 200 and body
