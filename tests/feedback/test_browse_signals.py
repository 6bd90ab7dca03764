"""Browse and the public API by readers' feedback (issue 23): ?has_corrections=1, ?flagged=1
(a reader marked a first wrong step), ?flagged_at=<decile> (where in the run) and the sort
?ordering=-corrections, read from the counts feedback keeps on each trajectory. Only public()
is ever listed, whoever asks; a held correction is not counted; query counts pinned."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.feedback import moderating
from apps.feedback.services import Author, step_feedback_give
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

API = "/api/v1/trajectories"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CALLERS = ["anonymous", "owner", "other", "moderator", "staff"]


@pytest.fixture
def readers(django_user_model):
    return [Author(user=django_user_model.objects.create_user(f"reader{i}")) for i in range(3)]


@pytest.fixture
def world(owner, readers):
    """Four public trajectories of 5 steps (agent steps 2 and 4):
    `corrected`: two corrections, no mark; `flagged`: marks at step 4 (decile 6) only;
    `both`: one correction and a mark at step 2 (decile 2); `plain`: nothing but ratings."""
    made = {
        name: make_trajectory(owner=owner, task=f"task {name}")
        for name in ("corrected", "flagged", "both", "plain")
    }
    for reader in readers[:2]:
        step_feedback_give(trajectory=made["corrected"], step=2, author=reader, correction="pytest")
        step_feedback_give(trajectory=made["flagged"], step=4, author=reader, first_wrong=True)
    step_feedback_give(
        trajectory=made["both"], step=2, author=readers[2], correction="ls", first_wrong=True
    )
    step_feedback_give(trajectory=made["plain"], step=2, author=readers[2], rating="bad")
    return made


def api_ids(client, query: str) -> list[str]:
    answer = client.get(f"{API}?{query}")
    assert answer.status_code == 200, answer.content
    return [row["id"] for row in answer.json()["results"]]


def page_ids(client, query: str) -> list[str]:
    answer = client.get(f"/browse/?{query}")
    assert answer.status_code == 200, answer.content
    return re.findall(r'class="traj-title" href="/t/([0-9a-f]{64})/"', answer.content.decode())


def ids(world, *names: str) -> list[str]:
    return [world[name].share_id for name in names]


@pytest.fixture
def callers(client_as, owner, other_user, moderator, staff):
    users = {"anonymous": None, "owner": owner, "other": other_user}
    users.update(moderator=moderator, staff=staff)
    return {name: (client_as(user), user) for name, user in users.items()}


def _page_client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("caller", CALLERS)
def test_filters_and_the_sort_list_what_readers_said(world, callers, caller):
    api, user = callers[caller]
    page = _page_client(user)
    # Newest first within each filter (made in order corrected, flagged, both, plain).
    for lister in (lambda q: api_ids(api, q), lambda q: page_ids(page, q)):
        assert lister("has_corrections=1") == ids(world, "both", "corrected")
        assert lister("has_corrections=0") == ids(world, "plain", "flagged")
        assert lister("flagged=1") == ids(world, "both", "flagged")
        assert lister("flagged_at=6") == ids(world, "flagged")
        assert lister("flagged_at=2") == ids(world, "both")
        assert lister("flagged_at=5") == []
        assert lister("flagged=1&has_corrections=1") == ids(world, "both")
        # Most corrected first; ties newest-made (higher id) first.
        assert lister("ordering=-corrections") == ids(
            world, "corrected", "both", "plain", "flagged"
        )
    rows = {row["id"]: row for row in api.get(API).json()["results"]}
    assert rows[world["corrected"].share_id]["corrections"] == 2
    assert rows[world["flagged"].share_id]["first_wrong_marks"] == 2
    assert rows[world["plain"].share_id]["corrections"] == 0


def test_the_browse_page_shows_the_controls_and_the_counts(world, client):
    html = client.get("/browse/?has_corrections=1&flagged_at=2&ordering=-corrections").content
    page = html.decode()
    assert '<option value="-corrections" selected>Most corrected</option>' in page
    assert 'name="has_corrections" type="checkbox" value="1" checked' in page
    assert 'name="flagged" type="checkbox" value="1">' in page  # not ticked
    assert '<option value="2" selected>20–30 % of the steps</option>' in page
    assert "Filters (active)" in page
    # The sort form and the search form carry the filters along.
    assert page.count('<input type="hidden" name="has_corrections" value="1">') == 2
    assert page.count('<input type="hidden" name="flagged_at" value="2">') == 2
    both = client.get("/browse/?flagged=1").content.decode()
    assert "✎ 1" in both and "⚑ 2" in both and "⚑ 1" in both


def test_a_held_correction_is_not_counted(owner, readers, moderator):
    trajectory = make_trajectory(owner=owner, task="held one")
    step_feedback_give(trajectory=trajectory, step=2, author=readers[0], correction=f"use {TOKEN}")
    assert page_ids(Client(), "has_corrections=1") == []
    assert api_ids(Client(), "ordering=-corrections") == [trajectory.share_id]
    assert Client().get(API).json()["results"][0]["corrections"] == 0
    moderating.note_decide(note=trajectory_notes(trajectory)[0], moderator=moderator, approve=True)
    assert page_ids(Client(), "has_corrections=1") == [trajectory.share_id]


def trajectory_notes(trajectory):
    from apps.feedback.models import StepNote

    return list(StepNote.objects.filter(trajectory=trajectory))


@pytest.mark.parametrize("caller", CALLERS)
def test_what_is_not_public_is_never_listed_by_the_new_filters(owner, readers, callers, caller):
    """Each not-public state, with corrections and marks of its own: listed by no filter or
    sort, to anyone (moderators and staff included: lists are public lists)."""
    hidden = {}
    for state, fields in {
        "private": {"visibility": "private"},
        "pending": {"review_state": "pending"},
        "held": {"review_state": "held"},
        "rejected": {"review_state": "rejected"},
        "hidden": {"review_state": "hidden"},
    }.items():
        trajectory = make_trajectory(owner=owner, task=f"task {state}")
        step_feedback_give(
            trajectory=trajectory, step=2, author=readers[0], correction="x", first_wrong=True
        )
        Trajectory.objects.filter(pk=trajectory.pk).update(**fields)
        hidden[state] = trajectory.share_id
    # The owner's own feedback on their private share counts for it, and still lists nowhere.
    private = make_trajectory(owner=owner, visibility="private", task="owners private")
    step_feedback_give(
        trajectory=private, step=4, author=Author(user=owner), correction="y", first_wrong=True
    )
    deleted = make_trajectory(owner=owner, task="task deleted")
    step_feedback_give(trajectory=deleted, step=2, author=readers[0], correction="z")
    trajectory_delete(trajectory=deleted)
    shown = make_trajectory(owner=owner, task="task shown")
    step_feedback_give(
        trajectory=shown, step=2, author=readers[1], correction="w", first_wrong=True
    )
    api, user = callers[caller]
    page = _page_client(user)
    for query in (
        "has_corrections=1",
        "flagged=1",
        "flagged_at=2",
        "flagged_at=6",
        "ordering=-corrections",
        "has_corrections=0",
    ):
        for listed in (api_ids(api, query), page_ids(page, query)):
            assert not set(listed) & {*hidden.values(), private.share_id, deleted.share_id}
            if query != "has_corrections=0" and query != "flagged_at=6":
                assert listed == [shown.share_id], query


def test_the_owner_filters_their_own_by_feedback(owner, other_user, client_as):
    private = make_trajectory(owner=owner, visibility="private", task="owners private")
    step_feedback_give(trajectory=private, step=2, author=Author(user=owner), correction="y")
    assert api_ids(client_as(owner), "owner=me&has_corrections=1") == [private.share_id]
    assert api_ids(client_as(other_user), "owner=me&has_corrections=1") == []


@pytest.mark.parametrize(
    "query, field",
    [
        ("has_corrections=yes", "has_corrections"),
        ("flagged=2", "flagged"),
        ("flagged_at=10", "flagged_at"),
        ("flagged_at=-1", "flagged_at"),
        ("ordering=corrections", "ordering"),
    ],
)
def test_bad_values_are_explained(client, query, field):
    answer = client.get(f"{API}?{query}")
    assert answer.status_code == 400 and field in answer.content.decode()
    page = client.get(f"/browse/?{query}")
    assert page.status_code == 400
    assert f"<li>{field}: " in page.content.decode()


def test_query_counts_do_not_grow(owner, readers, django_assert_num_queries):
    def more(start: int, end: int) -> None:
        for index in range(start, end):
            trajectory = make_trajectory(owner=owner, task=f"task {index}")
            step_feedback_give(
                trajectory=trajectory, step=2, author=readers[0], correction="c", first_wrong=True
            )

    more(0, 3)
    client = Client()
    client.get("/browse/")  # warm the facets' cache
    queries = ["has_corrections=1", "flagged=1&ordering=-corrections", "flagged_at=2"]
    for query in queries:
        # The page's count and its rows.
        with django_assert_num_queries(2):
            assert len(page_ids(client, query)) == 3
        with django_assert_num_queries(1):
            assert len(api_ids(client, query)) == 3
    more(3, 12)
    for query in queries:
        with django_assert_num_queries(2):
            assert len(page_ids(client, query)) == 12
        with django_assert_num_queries(1):
            assert len(api_ids(client, query)) == 12
