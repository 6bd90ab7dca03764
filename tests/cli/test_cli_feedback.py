"""`trajhub feedback` against a live server: read a trajectory's and a step's feedback, give it
with a token, and the API's errors as one sentence (issue 23)."""

from __future__ import annotations

import io

import pytest

from apps.accounts.services import api_token_create
from apps.feedback.models import StepNote, StepRating
from cli import trajhub
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.usefixtures("transactional_db", "private_storage")


def run(live_server, *argv: str, token: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["--url", live_server.url, *(["--token", token] if token else []), *argv]
    code = trajhub.main(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_give_and_read_feedback(live_server, owner, other_user):
    trajectory = make_trajectory(owner=owner, steps=2)
    token = api_token_create(user=other_user, name="cli")[1]
    code, out, err = run(
        live_server,
        "feedback",
        trajectory.share_id,
        "2",
        "--rating",
        "bad",
        "--first-wrong",
        "--correction",
        "pytest -x",
        "--action",
        token=token,
    )
    assert code == 0, err
    assert "step 2: good 0, bad 1, first wrong 1" in out
    assert "-ls 0" in out and "+pytest -x" in out
    assert StepRating.objects.get().value == "bad"
    assert StepNote.objects.get().mode == "action"

    code, out, err = run(live_server, "feedback", trajectory.share_id)
    assert code == 0 and "step     2: bad 1, first_wrong 1, corrections 1" in out

    code, out, err = run(live_server, "feedback", trajectory.share_id, "2", "--delete", token=token)
    assert code == 0 and StepRating.objects.count() == 0


def test_errors_are_one_sentence(live_server, owner):
    trajectory = make_trajectory(owner=owner, steps=2)
    code, out, err = run(live_server, "feedback", trajectory.share_id, "2", "--rating", "good")
    assert code == 2 and "sign in" in err
    token = api_token_create(user=owner, name="cli")[1]
    code, out, err = run(
        live_server, "feedback", trajectory.share_id, "3", "--first-wrong", token=token
    )
    assert code == 2 and "first_wrong" in err
    code, out, err = run(live_server, "feedback", trajectory.share_id, "0", token=token)
    assert code == 2 and "from 1" in err
