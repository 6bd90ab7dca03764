"""GET / POST / DELETE /api/v1/trajectories/<id>/steps/<n>/feedback as anonymous, owner, other
user, moderator and staff; the states of trajectories whose feedback nobody else may read; and
the attacks: voting many times, forged ids, spam (issue 23)."""

from __future__ import annotations

import secrets

import pytest

from apps.feedback.models import NoteState, StepNote, StepRating
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


def url(trajectory, step=2) -> str:
    return f"/api/v1/trajectories/{trajectory.share_id}/steps/{step}/feedback"


@pytest.fixture
def public(owner):
    return make_trajectory(owner=owner, steps=2)


def give(client, trajectory, step=2, **body):
    return client.post(url(trajectory, step), body, format="json")


def test_anonymous_reads_public_feedback_but_cannot_write(public, client_as, other_user):
    assert (
        give(client_as(other_user), public, rating="bad", comment="look again").status_code == 200
    )
    anonymous = client_as(None)
    read = anonymous.get(url(public))
    assert read.status_code == 200
    body = read.json()
    assert body["ratings"] == {"good": 0, "bad": 1}
    assert [note["text"] for note in body["comments"]] == ["look again"]
    assert body["comments"][0]["author"] == "other" and body["can_give"] is False
    refused = give(anonymous, public, rating="good")
    assert refused.status_code == 401
    assert "sign in" in refused.json()["error"]["message"]
    assert StepRating.objects.count() == 1


def test_each_caller(public, client_as, owner, other_user, moderator, staff):
    for user, value in ((owner, "good"), (other_user, "bad"), (moderator, "bad"), (staff, "good")):
        answer = give(client_as(user), public, rating=value)
        assert answer.status_code == 200, answer.json()
        assert answer.json()["mine"]["rating"] == value
    assert client_as(None).get(url(public)).json()["ratings"] == {"good": 2, "bad": 2}


@pytest.mark.parametrize(
    ("visibility", "state"),
    [
        ("private", "approved"),
        ("public", "pending"),
        ("public", "held"),
        ("public", "rejected"),
        ("public", "hidden"),
    ],
)
def test_feedback_on_a_trajectory_others_may_not_see_is_a_404_for_them(
    owner, other_user, moderator, client_as, visibility, state
):
    trajectory = make_trajectory(owner=owner, steps=2)
    assert give(client_as(other_user), trajectory, comment="seen while public").status_code == 200
    Trajectory.objects.filter(pk=trajectory.pk).update(visibility=visibility, review_state=state)
    for caller in (None, other_user):
        client = client_as(caller)
        assert client.get(url(trajectory)).status_code == 404
        assert client.get(f"/api/v1/trajectories/{trajectory.share_id}/feedback").status_code == 404
        assert give(client, trajectory, rating="good").status_code == 404
        page = client.get(f"/t/{trajectory.share_id}/steps/2/feedback")
        assert page.status_code in (404, 200) and b"seen while public" not in page.content
    # The owner and moderators still read it.
    for caller in (owner, moderator):
        texts = [n["text"] for n in client_as(caller).get(url(trajectory)).json()["comments"]]
        assert texts == ["seen while public"]


def test_feedback_of_a_deleted_trajectory_is_gone(public, client_as, other_user, owner):
    give(client_as(other_user), public, comment="bye", rating="bad")
    from apps.trajectories.services import trajectory_delete

    trajectory_delete(trajectory=public, reason="owner")
    assert StepNote.objects.count() == 0 and StepRating.objects.count() == 0
    assert client_as(other_user).get(url(public)).status_code == 404


def test_one_person_voting_many_times_counts_once(public, client_as, other_user):
    client = client_as(other_user)
    for _ in range(10):
        give(client, public, rating="bad", first_wrong=True)
    body = client_as(None).get(url(public)).json()
    assert body["ratings"] == {"good": 0, "bad": 1} and body["first_wrong"] == 1


def test_forged_ids(public, client_as, other_user, owner):
    client = client_as(other_user)
    forged = secrets.token_hex(32)
    assert client.get(f"/api/v1/trajectories/{forged}/steps/2/feedback").status_code == 404
    assert client.get("/api/v1/trajectories/not-an-id/steps/2/feedback").status_code == 404
    assert give(client, public, step=99, rating="good").status_code == 404
    assert give(client, public, step=0, rating="good").status_code == 404
    assert client.get(url(public, "two")).status_code == 404
    # A note id of another trajectory, or none at all, reports nothing.
    other = make_trajectory(owner=owner, steps=2, task="another task")
    give(client, other, comment="on the other one")
    note = StepNote.objects.get()
    report = f"/api/v1/trajectories/{public.share_id}/feedback/notes/{note.public_id}/report"
    assert client.post(report, {"reason": "spam"}, format="json").status_code == 404
    fake = f"/api/v1/trajectories/{public.share_id}/feedback/notes/{secrets.token_hex(12)}/report"
    assert client.post(fake, {"reason": "spam"}, format="json").status_code == 404


def test_bad_input_says_what_and_where(public, client_as, other_user):
    client = client_as(other_user)
    cases = [
        ({"rating": "great"}, "rating"),
        ({"first_wrong": "perhaps"}, "first_wrong"),
        ({"score": 5}, "score"),
        ({}, "body"),
        ({"correction": "x" * 20_001}, "correction"),
    ]
    for body, where in cases:
        answer = give(client, public, **body)
        assert answer.status_code == 400, body
        assert answer.json()["error"]["where"] == where
    wrong_step = give(client, public, step=3, correction="do better")
    assert wrong_step.status_code == 400 and wrong_step.json()["error"]["where"] == "correction"
    assert StepNote.objects.count() == 0 and StepRating.objects.count() == 0


def test_spam_is_rate_limited_per_account_and_per_address(public, client_as, other_user, settings):
    settings.TRAJHUB_FEEDBACK_PER_HOUR = 3
    client = client_as(other_user)
    for _ in range(3):
        assert give(client, public, rating="bad").status_code == 200
    refused = give(client, public, rating="good")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert StepRating.objects.get().value == "bad"


def test_per_address_limit_counts_every_account_behind_it(
    public, client_as, django_user_model, settings
):
    settings.TRAJHUB_FEEDBACK_PER_HOUR_PER_ADDRESS = 2
    answers = [
        give(client_as(django_user_model.objects.create_user(f"sock{i}")), public, rating="bad")
        for i in range(3)
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 429]


def test_delete_takes_back_ones_own(public, client_as, other_user, owner):
    give(client_as(other_user), public, rating="bad", comment="mine", first_wrong=True)
    give(client_as(owner), public, rating="good")
    assert client_as(other_user).delete(url(public)).status_code == 204
    assert list(StepRating.objects.values_list("value", flat=True)) == ["good"]
    assert StepNote.objects.count() == 0
    assert client_as(None).delete(url(public)).status_code == 401


def test_password_holder_gives_feedback_as_owner(client_as):
    from tests.ingest_helpers import ingest

    result = ingest(
        __import__("tests.ingest_helpers", fromlist=["v0_events"]).v0_events(2),
        email="a@example.org",
    )
    (stored,) = result.stored
    trajectory = stored.trajectory
    client = client_as(None)
    headers = {"HTTP_X_DELETION_PASSWORD": stored.password}
    answer = client.post(url(trajectory), {"rating": "bad"}, format="json", **headers)
    assert answer.status_code == 200, answer.json()
    assert StepRating.objects.get().author_key == "holder"
    wrong = client.post(
        url(trajectory), {"rating": "bad"}, format="json", HTTP_X_DELETION_PASSWORD="nope"
    )
    assert wrong.status_code == 404


def test_summary_lists_steps_with_feedback(public, client_as, other_user):
    give(client_as(other_user), public, step=2, rating="bad", first_wrong=True)
    give(client_as(other_user), public, step=5, comment="fine")
    body = client_as(None).get(f"/api/v1/trajectories/{public.share_id}/feedback").json()
    assert body["steps"] == {"2": {"bad": 1, "first_wrong": 1}, "5": {"comments": 1}}


def test_schema_has_the_endpoints(client):
    schema = client.get("/api/schema", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/v1/trajectories/{share_id}/steps/{step}/feedback" in schema
    assert "step_feedback_give" in schema


def test_held_note_shows_only_to_its_author_and_moderators(
    public, client_as, other_user, owner, moderator
):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    answer = give(client_as(other_user), public, correction=f"export GITHUB_TOKEN={token}")
    (mine,) = answer.json()["corrections"]
    assert mine["state"] == NoteState.HELD and token in mine["text"]
    for caller in (None, owner):
        body = client_as(caller).get(url(public)).json()
        assert body["corrections"] == []
        assert token not in str(body)
    (seen,) = client_as(moderator).get(url(public)).json()["corrections"]
    assert seen["state"] == "held"


def test_the_licence_question_is_answered_once(public, client_as, other_user, client):
    api = client_as(other_user)
    assert api.get(url(public)).json()["mine"]["license"] is None
    answer = give(api, public, comment="clear step", license_agreed=True)
    assert answer.status_code == 200 and answer.json()["mine"]["license"] == "MIT"
    assert give(api, public, license_agreed=False).json()["mine"]["license"] == ""
    # The page asks only until it is answered.
    client.force_login(other_user)
    page = client.get(f"/t/{public.share_id}/steps/2/feedback").content.decode()
    assert 'name="license_asked"' not in page


def test_the_page_asks_the_licence_question_with_the_first_text(public, client, django_user_model):
    from apps.feedback.models import FeedbackLicence

    reader = django_user_model.objects.create_user("newcomer")
    client.force_login(reader)
    page = f"/t/{public.share_id}/steps/2/feedback"
    assert 'name="license_asked"' in client.get(page).content.decode()
    sent = client.post(
        page, {"what": "comment", "text": "nice", "license_asked": "1", "license_agreed": "on"}
    )
    assert sent.status_code == 302
    assert FeedbackLicence.objects.get(author=reader).license == "MIT"
