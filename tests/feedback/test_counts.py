"""The counts lists sort and filter by (Trajectory.correction_count, first_wrong_count and the
marks' deciles, FlaggedDecile) stay right through every change of the feedback: a give, an
edit, a deletion, a moderator's decision, a report that holds a note, the owner's rejection,
outdating on re-import, an account's erasure, the switch (issue 23). Each test would fail if its
service did not recount."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command

from apps.feedback import moderating, services
from apps.feedback.counts import decile
from apps.feedback.models import FirstWrongMark, NoteState, StepNote
from apps.feedback.services import Author, step_feedback_give
from apps.owners.services.erasure import account_delete
from apps.trajectories.models import Event, FlaggedDecile, Trajectory
from apps.trajectories.signals import trajectory_stored
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def public(owner):
    # Steps 1 (the task) to 5; the agent's commands are steps 2 and 4.
    return make_trajectory(owner=owner, steps=2)


def counts(trajectory: Trajectory) -> tuple[int, int, dict[int, int]]:
    trajectory.refresh_from_db()
    deciles = dict(
        FlaggedDecile.objects.filter(trajectory=trajectory).values_list("decile", "marks")
    )
    # The bits the list's ?flagged_at= filters by say the same as the rows, after every change.
    assert trajectory.first_wrong_deciles == sum(1 << tenth for tenth in deciles)
    return trajectory.correction_count, trajectory.first_wrong_count, deciles


def test_decile_is_the_marked_steps_place_in_the_run():
    assert [decile(position, 10) for position in range(10)] == list(range(10))
    assert decile(1, 5) == 2 and decile(3, 5) == 6 and decile(4, 5) == 8
    assert decile(0, 1) == 0 and decile(7, 0) == 0 and decile(12, 10) == 9


def test_giving_counts_a_shown_correction_and_a_mark(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, correction="run the tests")
    step_feedback_give(trajectory=public, step=4, author=reader, first_wrong=True)
    # Ratings and comments are not what these count.
    step_feedback_give(trajectory=public, step=2, author=reader, rating="bad", comment="hm")
    assert counts(public) == (1, 1, {6: 1})


def test_editing_moves_a_mark_and_a_held_edit_is_not_counted(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(
        trajectory=public, step=4, author=reader, first_wrong=True, correction="run it"
    )
    step_feedback_give(trajectory=public, step=2, author=reader, first_wrong=True)
    assert counts(public) == (1, 1, {2: 1})
    # The edit has a token in it: held for a moderator, so no longer shown, so not counted.
    step_feedback_give(trajectory=public, step=4, author=reader, correction=f"use {TOKEN}")
    assert StepNote.objects.get().state == NoteState.HELD
    assert counts(public) == (0, 1, {2: 1})


def test_deleting_takes_them_off(public, other_user, django_user_model):
    reader, second = (
        Author(user=other_user),
        Author(user=django_user_model.objects.create_user("b")),
    )
    for author in (reader, second):
        step_feedback_give(
            trajectory=public, step=2, author=author, first_wrong=True, correction="ls -la"
        )
    assert counts(public) == (2, 2, {2: 2})
    services.note_delete(note=StepNote.objects.get(author_key=second.key), author=second)
    assert counts(public) == (1, 2, {2: 2})
    step_feedback_give(trajectory=public, step=2, author=reader, first_wrong=False, correction="")
    assert counts(public) == (0, 1, {2: 1})
    services.step_feedback_withdraw(trajectory=public, step=2, author=second)
    assert counts(public) == (0, 0, {})


def test_a_moderators_decision_and_a_report_hold(public, other_user, moderator, settings):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, correction=f"use {TOKEN}")
    note = StepNote.objects.get()
    assert note.state == NoteState.HELD and counts(public)[0] == 0  # held: not counted
    assert moderating.note_decide(note=note, moderator=moderator, approve=True)
    assert counts(public)[0] == 1
    # Enough readers report it: held again, off the count until a moderator decides.
    settings.TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT = 1
    moderating.note_report(note=note, reason="wrong", user=None, client_ip="10.0.0.9")
    assert StepNote.objects.get().state == NoteState.HELD and counts(public)[0] == 0
    assert moderating.note_decide(note=note, moderator=moderator, approve=False)
    assert StepNote.objects.get().state == NoteState.REJECTED and counts(public)[0] == 0


def test_the_owners_rejection(public, owner, other_user):
    step_feedback_give(trajectory=public, step=2, author=Author(user=other_user), correction="x")
    note = StepNote.objects.get()
    services.note_owner_reject(note=note, author=Author(user=owner))
    assert counts(public)[0] == 0
    services.note_owner_reject(note=note, author=Author(user=owner), rejected=False)
    assert counts(public)[0] == 1


def test_outdating_on_a_reimport_and_back(public, other_user):
    reader = Author(user=other_user)
    step_feedback_give(trajectory=public, step=2, author=reader, first_wrong=True, correction="x")
    Event.objects.filter(trajectory=public, position=1).update(text="ls 0 --all")
    trajectory_stored.send(sender=None, trajectory_id=public.pk, created=False)
    assert FirstWrongMark.objects.get().outdated
    assert counts(public) == (0, 0, {})
    Event.objects.filter(trajectory=public, position=1).update(text="ls 0")
    trajectory_stored.send(sender=None, trajectory_id=public.pk, created=False)
    assert counts(public) == (1, 1, {2: 1})


def test_a_reimport_with_more_steps_moves_the_decile(public, other_user):
    step_feedback_give(trajectory=public, step=4, author=Author(user=other_user), first_wrong=True)
    assert counts(public)[2] == {6: 1}
    # The same steps, and ten more after them: step 4 is now early in the run.
    Trajectory.objects.filter(pk=public.pk).update(num_events=15)
    trajectory_stored.send(sender=None, trajectory_id=public.pk, created=False)
    assert counts(public) == (0, 1, {2: 1})


def test_erasing_an_account_takes_its_feedback_off_the_counts(public, other_user, moderator):
    step_feedback_give(
        trajectory=public, step=2, author=Author(user=other_user), first_wrong=True, correction="x"
    )
    step_feedback_give(trajectory=public, step=4, author=Author(user=moderator), first_wrong=True)
    assert counts(public) == (1, 2, {2: 1, 6: 1})
    account_delete(user=other_user)
    assert counts(public) == (0, 1, {6: 1})


def test_switching_feedback_off_hides_it_from_the_counts_and_on_brings_it_back(
    public, owner, other_user
):
    step_feedback_give(
        trajectory=public, step=2, author=Author(user=other_user), first_wrong=True, correction="x"
    )
    services.feedback_switch(trajectory=public, author=Author(user=owner), on=False)
    assert counts(public) == (0, 0, {})
    services.feedback_switch(trajectory=public, author=Author(user=owner), on=True)
    assert counts(public) == (1, 1, {2: 1})


def test_the_command_and_the_data_migration_recount_what_was_stored(public, other_user, owner):
    step_feedback_give(
        trajectory=public, step=2, author=Author(user=other_user), first_wrong=True, correction="x"
    )
    other = make_trajectory(owner=owner, steps=1, task="another task")
    # Counts made before they were kept, or a row changed by hand.
    Trajectory.objects.filter(pk=public.pk).update(correction_count=0, first_wrong_count=0)
    Trajectory.objects.filter(pk=other.pk).update(correction_count=7)
    FlaggedDecile.objects.all().delete()
    call_command("recount_feedback", stdout=open("/dev/null", "w"))
    assert counts(public) == (1, 1, {2: 1}) and counts(other) == (0, 0, {})

    Trajectory.objects.filter(pk=public.pk).update(correction_count=0, first_wrong_count=0)
    FlaggedDecile.objects.all().delete()
    migration = importlib.import_module("apps.feedback.migrations.0003_feedback_counts")
    migration.recount(django_apps, None)
    assert counts(public) == (1, 1, {2: 1})
