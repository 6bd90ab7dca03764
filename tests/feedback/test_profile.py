"""A reader's profile lists their public feedback: shown corrections and comments on public
trajectories with feedback switched on, redacted; nothing held, private or switched off."""

from __future__ import annotations

import pytest

from apps.feedback.services import Author, feedback_switch, step_feedback_give
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_profile_lists_only_public_feedback(client, owner, other_user):
    shown = make_trajectory(owner=owner, steps=2, redactions={"db.acme.internal": "<HOST_1>"})
    private = make_trajectory(owner=owner, steps=2, task="later private")
    switched = make_trajectory(owner=owner, steps=2, task="switched off")
    reader = Author(user=other_user)
    step_feedback_give(trajectory=shown, step=2, author=reader, comment="use db.acme.internal")
    step_feedback_give(trajectory=shown, step=4, author=reader, comment=f"held {TOKEN}")
    step_feedback_give(trajectory=private, step=2, author=reader, comment="on a private one")
    step_feedback_give(trajectory=switched, step=2, author=reader, comment="switched off one")
    Trajectory.objects.filter(pk=private.pk).update(visibility="private")
    feedback_switch(trajectory=switched, author=Author(user=owner), on=False)

    page = client.get("/u/other/feedback").content.decode()
    assert "use &lt;HOST_1&gt;" in page and "db.acme.internal" not in page
    assert TOKEN not in page and "on a private one" not in page and "switched off one" not in page
    assert f"/t/{shown.share_id}/steps/2/feedback" in page
    assert "/u/other/feedback" in client.get("/u/other/").content.decode()
    assert client.get("/u/nobody-here/feedback").status_code == 404
