"""/api/v1/retrieve for every caller, over examples cut from trajectories in every state.

Windows are cut by the real service from every trajectory of the world (even those synthesis
would never pick, to prove the query-time gate on its own), each gets an example whose
instruction repeats its window's text, and the index holds them all. Whoever asks, only the
public trajectory's examples come back, and none carries a value its redactions hide.
"""

from __future__ import annotations

import orjson
import pytest

from apps.learn import services
from apps.learn.models import Example, SynthesisRun, Window
from apps.learn.retrieval import index
from tests.security.world import CALLERS, SECRET_EMAIL, SECRET_KEY, STATES, marker, world_fixture

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_fixture(django_db_blocker) as built:
        yield built


@pytest.fixture
def indexed(world, settings, tmp_path):
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path / "retrieval"
    settings.TRAJHUB_RETRIEVE_DENSE = "off"
    index._current = None
    run = SynthesisRun.objects.create(model="m", prompt_version=1)
    for trajectory in world.trajectories.values():
        services.windows_create(run=run, trajectory=trajectory)
    for window in Window.objects.select_related("trajectory"):
        text = " ".join(step["text"] for step in window.steps)
        Example.objects.create(
            window=window,
            trajectory=window.trajectory,
            prompt_type="task",
            prompt_version=1,
            model="m",
            instruction=f"Do {text}"[:3000],
            state="kept",
        )
    index.index_build()
    yield
    index._current = None


def test_windows_are_cut_from_redacted_text(world, indexed):
    steps = orjson.dumps(list(Window.objects.values_list("steps", flat=True))).decode()
    assert SECRET_EMAIL not in steps and SECRET_KEY not in steps
    assert "<EMAIL_1>" in steps or "<OPENAI_API_KEY_1>" in steps


@pytest.mark.parametrize("caller", CALLERS)
def test_only_public_examples_whoever_asks(world, indexed, caller):
    everyone = " ".join(marker(state) for state in [*STATES, "anon"])
    for body in (
        {"instruction": everyone, "k": 20},
        {"instruction": "x", "observation": everyone, "k": 20},
    ):
        response = world.client(caller).post(
            "/api/v1/retrieve", orjson.dumps(body), content_type="application/json"
        )
        assert response.status_code == 200
        text = response.content.decode()
        assert marker("public") in text
        for state in [*STATES, "anon"]:
            if state != "public":
                assert marker(state) not in text, (caller, state)
        assert SECRET_EMAIL not in text and SECRET_KEY not in text
        ids = {e["trajectory_id"] for e in response.json()["examples"]}
        assert ids == {world.trajectories["public"].share_id}
