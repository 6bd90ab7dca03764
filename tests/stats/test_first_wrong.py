"""Stats: where in a run readers mark the first wrong step (issue 23): ten bars by the marked
step's position over the number of steps, over listed public trajectories only, each bar
linking to the browse page that lists exactly what it counts; the cached numbers follow the
marks and the public set."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.feedback import services
from apps.feedback.services import Author, step_feedback_give
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete, trajectory_update
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def readers(django_user_model):
    return [Author(user=django_user_model.objects.create_user(f"reader{i}")) for i in range(3)]


def bars(client) -> dict[int, tuple[int, int]]:
    data = client.get("/api/v1/stats").json()["first_wrong_at"]
    assert [bar["decile"] for bar in data["bars"]] == list(range(10))
    return {
        bar["decile"]: (bar["marks"], bar["trajectories"]) for bar in data["bars"] if bar["marks"]
    }


def test_marks_by_place_in_the_run_only_public_ones(
    owner, readers, client_as, moderator, staff, other_user
):
    early = make_trajectory(owner=owner, task="early")  # 5 steps: step 2 is decile 2
    for reader in readers[:2]:
        step_feedback_give(trajectory=early, step=2, author=reader, first_wrong=True)
    late = make_trajectory(owner=owner, steps=7, task="late")  # 15 steps: step 14 -> 8
    step_feedback_give(trajectory=late, step=14, author=readers[0], first_wrong=True)
    step_feedback_give(trajectory=late, step=2, author=readers[1], first_wrong=True)  # 0
    # Marks on trajectories nobody else may see, or that are gone, count nowhere.
    for state, fields in {
        "private": {"visibility": "private"},
        "pending": {"review_state": "pending"},
        "held": {"review_state": "held"},
        "rejected": {"review_state": "rejected"},
    }.items():
        trajectory = make_trajectory(owner=owner, task=f"task {state}")
        step_feedback_give(trajectory=trajectory, step=4, author=readers[2], first_wrong=True)
        Trajectory.objects.filter(pk=trajectory.pk).update(**fields)
    gone = make_trajectory(owner=owner, task="gone")
    step_feedback_give(trajectory=gone, step=4, author=readers[2], first_wrong=True)
    trajectory_delete(trajectory=gone)
    # An owner's mark on their own private share is no public figure either.
    private = make_trajectory(owner=owner, visibility="private", task="owners private")
    step_feedback_give(trajectory=private, step=4, author=Author(user=owner), first_wrong=True)
    for user in (None, owner, other_user, moderator, staff):
        assert bars(client_as(user)) == {2: (2, 1), 8: (1, 1), 0: (1, 1)}
    data = client_as(None).get("/api/v1/stats").json()["first_wrong_at"]
    assert data["marks"] == 4 and data["trajectories"] == 2
    assert data["bars"][3] == {
        "decile": 3,
        "label": "30–40 %",
        "marks": 0,
        "trajectories": 0,
        "browse": "/browse/?flagged_at=3",
    }


def test_each_bar_links_to_the_browse_page_of_what_it_counts(owner, readers):
    for index in range(3):
        trajectory = make_trajectory(owner=owner, task=f"task {index}")
        step_feedback_give(
            trajectory=trajectory, step=2 + 2 * (index % 2), author=readers[0], first_wrong=True
        )
    page = Client().get("/stats/").content.decode()
    section = page[page.index('id="first-wrong"') :]
    links = re.findall(r'<a href="(/browse/\?flagged_at=\d)">', section)
    # Every bar of the chart is a link (empty ones too), and the table's counts link as well.
    assert (
        len(links) >= 10 and "/browse/?flagged_at=2" in links and "/browse/?flagged_at=6" in links
    )
    for bar in Client().get("/api/v1/stats").json()["first_wrong_at"]["bars"]:
        listed = Client().get(bar["browse"]).content.decode()
        assert listed.count('class="traj-row"') == bar["trajectories"], bar


def test_the_numbers_follow_the_marks_and_the_public_set(
    owner, readers, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, task="one")
    client = Client()
    assert bars(client) == {}
    with django_capture_on_commit_callbacks(execute=True):
        step_feedback_give(trajectory=trajectory, step=2, author=readers[0], first_wrong=True)
    assert bars(client) == {2: (1, 1)}  # cached before, dropped by the mark
    with django_capture_on_commit_callbacks(execute=True):
        services.feedback_switch(trajectory=trajectory, author=Author(user=owner), on=False)
    assert bars(client) == {}  # switched off: hidden, so not counted
    with django_capture_on_commit_callbacks(execute=True):
        services.feedback_switch(trajectory=trajectory, author=Author(user=owner), on=True)
    assert bars(client) == {2: (1, 1)}
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=Trajectory.objects.get(pk=trajectory.pk), visibility="private")
    assert bars(client) == {}  # left public(): the marks no longer count


def test_the_page_says_so_when_nothing_is_marked(client):
    page = client.get("/stats/").content.decode()
    assert "No reader has marked a first wrong step on a public trajectory yet." in page
