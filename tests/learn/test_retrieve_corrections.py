"""/api/v1/retrieve serves readers' accepted corrections next to the step each corrects, in the
answer and in the prompt block; nothing else of the feedback (held, owner-rejected, outdated,
switched off, comments), redacted as the public pages show it, whoever asks."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.feedback.models import StepNote
from apps.feedback.services import Author, feedback_switch, note_owner_reject, step_feedback_give
from apps.learn.retrieval import index
from tests.learn.factories import make_example, make_session

pytestmark = pytest.mark.django_db
URL = "/api/v1/retrieve"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ASK = {"instruction": "fix the failing login test", "k": 5}


def give(trajectory, user, step, **feedback):
    step_feedback_give(
        trajectory=trajectory, step=step, author=Author(user=user, client_ip="10.0.0.1"), **feedback
    )


@pytest.fixture
def login(owner, other_user, django_user_model):
    trajectory = make_session(
        "Fix the login bug",
        [("pytest tests/test_login.py", "FAILED test_login"), ("cat login.py", "def login")],
        owner=owner,
        redactions={"db.acme-corp.internal": "<HOST_1>"},
    )
    # Positions: 0 the task, 1 pytest, 2 its output, 3 cat, 4 its output.
    example = make_example(
        trajectory,
        "Fix the failing login test",
        start=0,
        end=2,
        steps=[
            {"role": "observation", "text": "Fix the login bug", "first": 0, "last": 0},
            {"role": "action", "text": "pytest tests/test_login.py", "first": 1, "last": 1},
            {"role": "observation", "text": "FAILED test_login", "first": 2, "last": 2},
            {"role": "action", "text": "cat login.py", "first": 3, "last": 3},
            {"role": "observation", "text": "def login", "first": 4, "last": 4},
        ],
    )
    readers = [django_user_model.objects.create_user(f"reader{n}") for n in range(4)]
    give(trajectory, other_user, 2, correction="start db.acme-corp.internal, then run pytest")
    give(trajectory, readers[0], 4, correction="grep -n def login login.py", mode="action")
    give(trajectory, readers[1], 2, correction=f"export GITHUB_TOKEN={TOKEN}")  # held: the scan
    give(trajectory, readers[2], 4, correction="the owner rejects this one")
    give(trajectory, readers[3], 2, comment="a comment, not a correction")
    note_owner_reject(
        note=StepNote.objects.get(text="the owner rejects this one"), author=Author(user=owner)
    )
    index.index_build()
    return {"trajectory": trajectory, "example": example, "held_author": readers[1]}


@pytest.mark.parametrize("caller", ["anonymous", "owner", "author", "other", "moderator", "staff"])
def test_accepted_corrections_next_to_their_steps_whoever_asks(
    login, caller, owner, other_user, moderator, staff, client_as
):
    user = {
        "anonymous": None,
        "owner": owner,
        "author": login["held_author"],  # their own held correction is not served to them
        "other": other_user,
        "moderator": moderator,
        "staff": staff,
    }[caller]
    body = client_as(user).post(URL, ASK, format="json").json()
    (example,) = body["examples"]
    ids = dict(StepNote.objects.values_list("text", "public_id"))
    assert example["corrections"] == [
        {
            "id": ids["start db.acme-corp.internal, then run pytest"],
            "at": 1,
            "step": 2,
            "mode": "message",
            "text": "start <HOST_1>, then run pytest",
        },
        {
            "id": ids["grep -n def login login.py"],
            "at": 3,
            "step": 4,
            "mode": "action",
            "text": "grep -n def login login.py",
        },
    ]
    assert example["steps"][1]["text"] == "pytest tests/test_login.py"
    prompt = body["prompt"]
    assert (
        "[Action 0]\npytest tests/test_login.py\n\n[A reader's correction of Action 0: what the "
        "agent should have done instead]\nstart <HOST_1>, then run pytest\n\n[Observation 1]"
    ) in prompt
    assert (
        "[Action 1]\ncat login.py\n\n[A reader's correction of Action 1: the action as it should "
        "have been]\ngrep -n def login login.py\n\n[Observation 2]"
    ) in prompt
    text = str(body)
    for never in ("db.acme-corp.internal", TOKEN, "GITHUB_TOKEN", "owner rejects", "a comment"):
        assert never not in text


def test_two_queries_with_corrections_one_without(login, django_assert_num_queries):
    # The candidates' query says which windows may have corrections; one more reads them.
    with django_assert_num_queries(2):
        (example,) = APIClient().post(URL, ASK, format="json").json()["examples"]
    assert len(example["corrections"]) == 2
    with django_assert_num_queries(1):
        APIClient().post(URL, {**ASK, "corrections": False}, format="json")


def test_in_the_chat_formats_at_points_past_the_instruction(login):
    for fmt, role in (("openai", ("role", "assistant")), ("sharegpt", ("from", "gpt"))):
        (example,) = APIClient().post(URL, {**ASK, "format": fmt}, format="json").json()["examples"]
        key, value = role
        assert [c["at"] for c in example["corrections"]] == [2, 4]
        assert all(example["steps"][c["at"]][key] == value for c in example["corrections"])
        assert example["steps"][2].get("content", example["steps"][2].get("value")) == (
            "pytest tests/test_login.py"
        )


def test_asked_without_corrections(login):
    body = APIClient().post(URL, {**ASK, "corrections": False}, format="json").json()
    assert body["examples"][0]["corrections"] == []
    assert "correction" not in body["prompt"]


def test_outdated_or_switched_off_corrections_are_not_served(login, owner):
    StepNote.objects.filter(mode="action").update(outdated=True)
    (example,) = APIClient().post(URL, ASK, format="json").json()["examples"]
    assert [c["step"] for c in example["corrections"]] == [2]
    feedback_switch(trajectory=login["trajectory"], author=Author(user=owner), on=False)
    (example,) = APIClient().post(URL, ASK, format="json").json()["examples"]
    assert example["corrections"] == []
    assert "correction" not in APIClient().post(URL, ASK, format="json").json()["prompt"]


def test_a_correction_of_a_step_the_window_does_not_show_is_left_out(login, owner):
    short = make_example(
        login["trajectory"],
        "Run the login tests once more",
        start=0,
        end=1,
        steps=[
            {"role": "observation", "text": "Fix the login bug", "first": 0, "last": 0},
            {"role": "action", "text": "pytest tests/test_login.py", "first": 1, "last": 1},
            {"role": "observation", "text": "FAILED test_login", "first": 2, "last": 2},
        ],
    )
    index.index_build()
    body = {"instruction": "Run the login tests once more", "k": 1}
    (example,) = APIClient().post(URL, body, format="json").json()["examples"]
    assert example["id"] == short.pk
    assert [c["step"] for c in example["corrections"]] == [2]  # not step 4's
