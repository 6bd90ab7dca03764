"""Step feedback's writes: one rating and mark per author, corrections and comments with their
author's and the owner's controls, the switch, and the anchoring that survives a re-import
only where the step is unchanged (issue 23)."""

from __future__ import annotations

import pytest

from apps.feedback import services
from apps.feedback.errors import FeedbackError
from apps.feedback.models import FirstWrongMark, NoteState, StepNote, StepRating
from apps.feedback.selectors import reader_for, step_feedback, trajectory_summary
from apps.feedback.services import Author, step_feedback_give
from apps.trajectories.models import Event
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

# v0_events(2): step 1 the user's task, 2 and 4 the agent's commands, 3 and 5 their output.
ACTION_STEP = 2
OUTPUT_STEP = 3


@pytest.fixture
def public(owner):
    return make_trajectory(owner=owner, steps=2)


def test_one_rating_per_author_per_step_and_changing_replaces(public, other_user):
    reader = Author(user=other_user, client_ip="10.0.0.1")
    step_feedback_give(trajectory=public, step=ACTION_STEP, author=reader, rating="good")
    step_feedback_give(trajectory=public, step=ACTION_STEP, author=reader, rating="bad")
    step_feedback_give(trajectory=public, step=ACTION_STEP, author=reader, rating="bad")
    assert list(StepRating.objects.values_list("position", "value")) == [(1, "bad")]
    step_feedback_give(trajectory=public, step=ACTION_STEP, author=reader, rating=None)
    assert StepRating.objects.count() == 0


def test_first_wrong_mark_moves_and_only_on_agent_steps(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, first_wrong=True)
    step_feedback_give(trajectory=public, step=4, author=reader, first_wrong=True)
    assert list(FirstWrongMark.objects.values_list("position", flat=True)) == [3]
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=public, step=OUTPUT_STEP, author=reader, first_wrong=True)
    assert refused.value.where == "first_wrong"
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=public, step=1, author=reader, correction="do it")
    assert refused.value.where == "correction"
    # Any step can be rated and commented.
    step_feedback_give(trajectory=public, step=1, author=reader, rating="good", comment="clear")
    assert StepNote.objects.get().kind == "comment"


def test_refused_give_stores_nothing(public, other_user):
    reader = Author(user=other_user)
    with pytest.raises(FeedbackError):
        step_feedback_give(
            trajectory=public, step=OUTPUT_STEP, author=reader, rating="good", correction="x"
        )
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=public, step=99, author=reader, rating="good")
    assert refused.value.status_code == 404
    with pytest.raises(FeedbackError):
        step_feedback_give(trajectory=public, step=2, author=reader, rating="excellent")
    assert StepRating.objects.count() == 0 and StepNote.objects.count() == 0


def test_action_correction_starts_from_the_redacted_step_and_diffs(owner, other_user):
    trajectory = make_trajectory(owner=owner, steps=2, redactions={"ls 0": "<SECRET_1>"})
    reader = Author(user=other_user)
    step_feedback_give(
        trajectory=trajectory,
        step=ACTION_STEP,
        author=reader,
        correction="pytest -x",
        mode="action",
    )
    note = StepNote.objects.get()
    assert note.original == "<SECRET_1>"
    assert note.state == NoteState.SHOWN
    view = step_feedback(
        trajectory,
        Event.objects.get(trajectory=trajectory, position=1),
        reader_for(trajectory, owner),
    )
    (correction,) = view.corrections
    assert correction.diff == [
        ("@", "@@ -1 +1 @@"),
        ("-", "<SECRET_1>"),
        ("+", "pytest -x"),
    ]


def test_author_edits_and_deletes_others_cannot(public, other_user, django_user_model):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, comment="first words")
    step_feedback_give(trajectory=public, step=2, author=reader, comment="better words")
    note = StepNote.objects.get()
    assert note.text == "better words"
    third = Author(user=django_user_model.objects.create_user("third"))
    with pytest.raises(FeedbackError):
        services.note_delete(note=note, author=third)
    services.note_delete(note=note, author=reader)
    assert StepNote.objects.count() == 0
    step_feedback_give(trajectory=public, step=2, author=reader, comment="again")
    step_feedback_give(trajectory=public, step=2, author=reader, comment="")
    assert StepNote.objects.count() == 0


def test_owner_rejects_a_correction_and_switches_feedback_off(public, owner, other_user):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, correction="run the tests")
    note = StepNote.objects.get()
    with pytest.raises(FeedbackError):
        services.note_owner_reject(note=note, author=reader)
    services.note_owner_reject(note=note, author=Author(user=owner))
    assert StepNote.objects.get().owner_rejected_at is not None

    services.feedback_switch(trajectory=public, author=Author(user=owner), on=False)
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=public, step=2, author=reader, rating="good")
    assert refused.value.status_code == 403
    stranger = reader_for(public, None)
    assert trajectory_summary(public, stranger)["steps"] == {}
    assert trajectory_summary(public, reader_for(public, owner))["steps"] == {
        "2": {"corrections": 1}
    }
    services.feedback_switch(trajectory=public, author=Author(user=owner), on=True)
    assert trajectory_summary(public, stranger)["steps"] == {"2": {"corrections": 1}}


def test_password_holder_counts_as_owner(other_user):
    anonymous = make_trajectory(owner=None, steps=1, email="a@example.org")
    holder = Author(user=None, is_holder=True)
    assert services.is_owner(anonymous, holder)
    step_feedback_give(trajectory=anonymous, step=2, author=holder, rating="bad")
    services.feedback_switch(trajectory=anonymous, author=holder, on=False)
    assert StepRating.objects.get().author_key == "holder"
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=anonymous, step=2, author=Author(user=None), rating="bad")
    assert refused.value.status_code == 401


def test_only_the_owner_gives_feedback_on_a_private_trajectory(owner, other_user):
    private = make_trajectory(owner=owner, visibility="private", steps=1)
    step_feedback_give(trajectory=private, step=2, author=Author(user=owner), rating="good")
    with pytest.raises(FeedbackError) as refused:
        step_feedback_give(trajectory=private, step=2, author=Author(user=other_user), rating="bad")
    assert refused.value.status_code == 403


def _reimport_with(trajectory, texts: dict[int, str]) -> None:
    """What a re-import that renders some steps differently leaves in the table, then the
    signal it sends (services/notify.announce_stored, after commit)."""
    from apps.trajectories.signals import trajectory_stored

    for position, text in texts.items():
        Event.objects.filter(trajectory=trajectory, position=position).update(text=text)
    trajectory_stored.send(sender=None, trajectory_id=trajectory.pk, created=False)


def test_feedback_stays_on_an_unchanged_step_after_a_reimport(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(
        trajectory=public, step=2, author=reader, rating="bad", first_wrong=True, comment="no"
    )
    _reimport_with(public, {3: "ls 1 (rendered anew)"})  # another step changed
    assert not StepRating.objects.get().outdated
    assert not FirstWrongMark.objects.get().outdated
    assert not StepNote.objects.get().outdated
    summary = trajectory_summary(public, reader_for(public, None))
    assert summary["steps"] == {"2": {"bad": 1, "first_wrong": 1, "comments": 1}}


def test_feedback_on_a_changed_step_is_outdated_after_a_reimport(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(
        trajectory=public, step=2, author=reader, rating="bad", first_wrong=True, comment="no"
    )
    _reimport_with(public, {1: "ls 0 --all"})
    assert StepRating.objects.get().outdated
    assert FirstWrongMark.objects.get().outdated
    assert StepNote.objects.get().outdated
    summary = trajectory_summary(public, reader_for(public, None))
    # Outdated ratings and marks no longer count; the comment stays readable, marked outdated.
    assert summary["steps"] == {"2": {"comments": 1}}
    view = step_feedback(
        public, Event.objects.get(trajectory=public, position=1), reader_for(public, None)
    )
    assert view.outdated == 1 and view.comments[0].outdated
    # The step rendered as it was: the feedback is current again.
    _reimport_with(public, {1: "ls 0"})
    assert not StepRating.objects.get().outdated


def test_feedback_on_a_step_that_is_gone_is_outdated(public, other_user):
    step_feedback_give(trajectory=public, step=4, author=Author(user=other_user), rating="good")
    Event.objects.filter(trajectory=public, position__gte=3).delete()
    from apps.trajectories.signals import trajectory_stored

    trajectory_stored.send(sender=None, trajectory_id=public.pk, created=False)
    assert StepRating.objects.get().outdated
