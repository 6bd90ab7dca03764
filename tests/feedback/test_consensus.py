"""apps.feedback.consensus: what readers' majority says about a public trajectory's steps, at
the boundaries of each rule (ties, halves, outdated, switched off, observations, not public)."""

from __future__ import annotations

import pytest

from apps.feedback.consensus import accepted_corrections, readers_verdicts
from apps.feedback.models import FirstWrongMark, StepNote, StepRating
from apps.feedback.screening import current_map_digest
from apps.feedback.services import Author, feedback_switch, note_owner_reject, step_feedback_give
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory, reindex

pytestmark = pytest.mark.django_db

# v0_events(4): step 1 the user's task, then (action, observation) pairs: steps 2, 4, 6, 8 are
# the agent's actions, steps 3, 5, 7, 9 their observations (filed under the agent).


@pytest.fixture
def readers(django_user_model):
    return [django_user_model.objects.create_user(f"reader{n}") for n in range(6)]


@pytest.fixture
def public(owner):
    return make_trajectory(owner=owner, steps=4)


def give(trajectory, user, step, **feedback):
    step_feedback_give(
        trajectory=trajectory, step=step, author=Author(user=user, client_ip="10.0.0.1"), **feedback
    )


def rate(trajectory, readers, step, bad: int, good: int) -> None:
    for user in readers[:bad]:
        give(trajectory, user, step, rating="bad")
    for user in readers[bad : bad + good]:
        give(trajectory, user, step, rating="good")


def verdict(trajectory):
    return readers_verdicts([trajectory.pk]).get(trajectory.pk)


def test_more_bad_than_good_on_an_agent_step_is_rated_wrong(public, readers):
    rate(public, readers, 4, bad=2, good=1)
    (rated,) = verdict(public).rated_wrong
    assert (rated.step, rated.bad, rated.good) == (4, 2, 1)
    assert verdict(public).first_wrong is None


def test_a_tie_is_no_verdict(public, readers):
    rate(public, readers, 4, bad=2, good=2)
    assert verdict(public) is None


def test_observations_and_the_users_steps_are_not_the_agents(public, readers):
    rate(public, readers, 3, bad=3, good=0)  # an observation the format files under the agent
    rate(public, readers, 1, bad=3, good=0)  # the user's task
    assert verdict(public) is None


def test_outdated_ratings_do_not_count(public, readers):
    rate(public, readers, 4, bad=2, good=1)
    StepRating.objects.filter(trajectory=public, value="bad").update(outdated=True)
    assert verdict(public) is None


@pytest.mark.parametrize(
    ("marks", "majority"),
    [
        ({4: 2, 6: 1}, 4),  # 2 of 3
        ({4: 1, 6: 1}, None),  # 1 of 2: half is no majority
        ({4: 2, 6: 1, 8: 1}, None),  # 2 of 4
        ({6: 3, 4: 1, 8: 1}, 6),  # 3 of 5
        ({8: 1}, 8),  # the one reader who marked any
    ],
)
def test_first_wrong_step_by_the_majority_of_those_who_marked(public, readers, marks, majority):
    users = iter(readers)
    for step, count in marks.items():
        for _ in range(count):
            give(public, next(users), step, first_wrong=True)
    found = verdict(public)
    if majority is None:
        assert found is None
    else:
        first = found.first_wrong
        assert first.step == majority
        assert (first.votes, first.markers) == (marks[majority], sum(marks.values()))


def test_outdated_marks_are_not_counted_among_the_markers(public, readers):
    give(public, readers[0], 4, first_wrong=True)
    give(public, readers[1], 6, first_wrong=True)
    assert verdict(public) is None
    FirstWrongMark.objects.filter(trajectory=public, position=5).update(outdated=True)
    assert verdict(public).first_wrong.step == 4


def test_switched_off_or_not_public_says_nothing(public, readers, owner):
    rate(public, readers, 4, bad=2, good=0)
    give(public, readers[0], 4, first_wrong=True)
    feedback_switch(trajectory=public, author=Author(user=owner), on=False)
    assert verdict(public) is None
    feedback_switch(trajectory=public, author=Author(user=owner), on=True)
    assert verdict(public).first_wrong.step == 4
    for state in ({"visibility": "private"}, {"review_state": "held"}):
        Trajectory.objects.filter(pk=public.pk).update(**state)
        assert verdict(public) is None
        Trajectory.objects.filter(pk=public.pk).update(visibility="public", review_state="approved")


def corrections(trajectory, first=0, last=8):
    digest = current_map_digest(Trajectory.objects.get(pk=trajectory.pk))
    return accepted_corrections([(trajectory.pk, first, last)], digests={trajectory.pk: digest})


def test_accepted_corrections_only(public, readers, owner, settings):
    give(public, readers[0], 2, correction="run ls -la first")
    give(public, readers[1], 4, correction="use ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")
    give(public, readers[2], 6, correction="the owner says no")
    give(public, readers[3], 8, correction="outdated now")
    give(public, readers[4], 2, comment="a comment is no correction")
    rejected = StepNote.objects.get(trajectory=public, position=5)
    note_owner_reject(note=rejected, author=Author(user=owner))
    StepNote.objects.filter(trajectory=public, position=7).update(outdated=True)
    assert StepNote.objects.get(trajectory=public, position=3).state == "held"  # the scan
    (accepted,) = corrections(public)
    assert (accepted.text, accepted.step, accepted.mode) == ("run ls -la first", 2, "message")
    assert accepted.id == StepNote.objects.get(text="run ls -la first").public_id
    assert corrections(public, 2, 8) == []
    feedback_switch(trajectory=public, author=Author(user=owner), on=False)
    assert corrections(public) == []


def test_the_text_is_the_redacted_one_after_a_later_redaction(
    public, readers, django_assert_num_queries
):
    give(public, readers[0], 2, correction="connect to db.acme-corp.internal first")
    digest = current_map_digest(Trajectory.objects.get(pk=public.pk))
    with django_assert_num_queries(1):
        (note,) = accepted_corrections([(public.pk, 1, 1)], digests={public.pk: digest})
    assert note.text == "connect to db.acme-corp.internal first"
    Trajectory.objects.filter(pk=public.pk).update(redactions={"db.acme-corp.internal": "<HOST_1>"})
    reindex(public)
    (note,) = corrections(public, 1, 1)
    assert note.text == "connect to <HOST_1> first"
    # The stored text, made with the old map, is never what is served.
    assert StepNote.objects.get().shown_text == "connect to db.acme-corp.internal first"
