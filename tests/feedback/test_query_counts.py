"""The trajectory page, the viewer's feedback summary and the notes of a chunk take a fixed
number of queries whatever the feedback on the steps (issue 23: pinned, as the page's are)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.feedback.models import FirstWrongMark, NoteState, StepNote, StepRating
from apps.feedback.screening import current_map_digest
from apps.trajectories.models import Event
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

# What each takes today, pinned; the point is that they do not grow with the feedback.
SUMMARY_QUERIES = 5  # the trajectory, the switch, ratings, marks, notes (anonymous: no "mine")
SUMMARY_QUERIES_WARM = 1  # the trajectory: the counts come from the cache
# Warm, signed in: session, user, groups (is_moderator), the trajectory, own unshown notes,
# own ratings, own mark.
SUMMARY_QUERIES_SIGNED_IN = 7
NOTES_QUERIES = 3  # the trajectory, the switch, the notes


def flood(trajectory, users) -> None:
    """Feedback on every step: each user rates it, the agent actions get a correction and a
    comment each, and every user marks one step first wrong."""
    digest = current_map_digest(trajectory)
    events = list(Event.objects.filter(trajectory=trajectory).order_by("position"))
    ratings, notes = [], []
    for event in events:
        for index, user in enumerate(users):
            common = {
                "trajectory": trajectory,
                "position": event.position,
                "fingerprint": "f" * 32,
                "author": user,
                "author_key": f"user:{user.pk}",
            }
            ratings.append(StepRating(**common, value="good" if index % 2 else "bad"))
            if event.source == "agent" and event.kind == "action":
                for kind in ("correction", "comment"):
                    notes.append(
                        StepNote(
                            **common,
                            kind=kind,
                            mode="message" if kind == "correction" else "",
                            text=f"{kind} of step {event.position + 1} by {user}",
                            shown_text=f"{kind} of step {event.position + 1} by {user}",
                            shown_map=digest,
                            state=NoteState.SHOWN,
                        )
                    )
    StepRating.objects.bulk_create(ratings)
    StepNote.objects.bulk_create(notes)
    FirstWrongMark.objects.bulk_create(
        FirstWrongMark(
            trajectory=trajectory,
            position=events[1 + 2 * index].position,
            fingerprint="f" * 32,
            author=user,
            author_key=f"user:{user.pk}",
        )
        for index, user in enumerate(users)
    )


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, HTTP_X_REQUESTED_WITH="fetch")
    assert response.status_code == 200
    return len(captured.captured_queries)


@pytest.fixture
def readers(django_user_model):
    return [django_user_model.objects.create_user(f"reader{i}") for i in range(4)]


def test_counts_do_not_grow_with_feedback(owner, readers, client):
    few = make_trajectory(owner=owner, steps=2)
    many = make_trajectory(owner=owner, steps=40, task="a longer one")
    flood(many, readers)
    assert StepNote.objects.filter(trajectory=many).count() == 40 * 2 * len(readers)
    everything = ",".join(str(step) for step in range(1, 82))
    for trajectory, expect_notes in ((few, False), (many, True)):
        base = f"/t/{trajectory.share_id}/"
        assert queries(client, base + "feedback") == SUMMARY_QUERIES
        assert queries(client, base + "feedback") == SUMMARY_QUERIES_WARM
        assert queries(client, base + f"feedback/notes?steps={everything}") == NOTES_QUERIES
        page = client.get(base)
        assert (
            b"fb-notes" in client.get(base + f"feedback/notes?steps={everything}").content
        ) is expect_notes
        assert page.status_code == 200
    # The trajectory page itself reads no feedback: its count is the same with or without.
    assert queries(client, f"/t/{few.share_id}/") == queries(client, f"/t/{many.share_id}/")
    client.force_login(readers[0])
    assert queries(client, f"/t/{many.share_id}/feedback") == SUMMARY_QUERIES_SIGNED_IN
    summary = client.get(f"/t/{many.share_id}/feedback").json()
    assert len(summary["steps"]) == 81
    assert summary["steps"]["2"] == {
        "good": 2,
        "bad": 2,
        "first_wrong": 1,
        "corrections": 4,
        "comments": 4,
    }


def test_the_cached_summary_follows_every_change(owner, readers, client):
    from apps.feedback.services import Author, feedback_switch, step_feedback_give

    trajectory = make_trajectory(owner=owner, steps=2)
    url = f"/t/{trajectory.share_id}/feedback"
    assert client.get(url).json()["steps"] == {}
    step_feedback_give(trajectory=trajectory, step=2, author=Author(user=readers[0]), rating="bad")
    assert client.get(url).json()["steps"] == {"2": {"bad": 1}}
    feedback_switch(trajectory=trajectory, author=Author(user=owner), on=False)
    assert client.get(url).json()["steps"] == {}
    feedback_switch(trajectory=trajectory, author=Author(user=owner), on=True)
    readers[0].delete()
    assert client.get(url).json()["steps"] == {}
