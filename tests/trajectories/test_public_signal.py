"""`public_set_changed`: every way a trajectory enters or leaves `public()` announces it after the
commit, and the browse facets (cached for minutes) forget what just left."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from apps.trajectories.signals import public_set_changed
from tests.ingest_helpers import ingest_one, make_trajectory, reindex, v0_events
from tests.moderation import samples

pytestmark = pytest.mark.django_db
URL = "/api/v1/trajectories"


@pytest.fixture
def announced():
    """The trajectory_ids of every public_set_changed sent while the test runs."""
    calls: list[list[int]] = []

    def receiver(sender, *, trajectory_ids, **kwargs):
        assert sender is Trajectory
        calls.append(list(trajectory_ids))

    public_set_changed.connect(receiver, dispatch_uid="test-announced")
    yield calls
    public_set_changed.disconnect(dispatch_uid="test-announced")


def ids_in(calls: list[list[int]]) -> set[int]:
    return {pk for call in calls for pk in call}


def test_patch_visibility_announces_after_commit(
    client_as, owner, announced, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, visibility="private")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client_as(owner).patch(
            f"{URL}/{trajectory.share_id}",
            {"visibility": "public", "license_agreed": True},
            format="json",
        )
        assert response.status_code == 200, response.content
    assert announced == []  # nothing before the commit
    for callback in callbacks:
        callback()
    assert announced == [[trajectory.pk]]

    announced.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client_as(owner).patch(
            f"{URL}/{trajectory.share_id}", {"visibility": "private"}, format="json"
        )
    assert announced == [[trajectory.pk]]


def test_patch_that_leaves_the_public_set_alone_says_nothing(
    client_as, owner, announced, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, visibility="private")
    with django_capture_on_commit_callbacks(execute=True):
        client_as(owner).patch(
            f"{URL}/{trajectory.share_id}", {"polarity": "positive"}, format="json"
        )
    assert announced == []


@pytest.mark.parametrize(
    "text, state", [("ls -la", "approved"), (f"key={samples.openai_key()}", "held")]
)
def test_scan_approve_and_hold_announce(announced, django_capture_on_commit_callbacks, text, state):
    trajectory = make_trajectory(visibility="public", review_state="pending", task=text)
    with django_capture_on_commit_callbacks(execute=True):
        assert trajectory_scan(trajectory=trajectory).review_state == state
    assert ids_in(announced) == {trajectory.pk}


def test_scan_that_changes_redactions_announces(announced, django_capture_on_commit_callbacks):
    trajectory = make_trajectory(task="write to jane.roe@gmail.com")
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_scan(trajectory=trajectory)  # approved already: only the redactions move
    trajectory.refresh_from_db()
    assert trajectory.redactions and ids_in(announced) == {trajectory.pk}

    announced.clear()
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_scan(trajectory=trajectory)  # the same redactions again: nothing changed
    assert announced == []


@pytest.mark.parametrize(
    "action, start",
    [(trajectory_approve, "held"), (trajectory_reject, "approved"), (trajectory_hide, "approved")],
)
def test_moderator_actions_announce(
    moderator, announced, django_capture_on_commit_callbacks, action, start
):
    trajectory = make_trajectory(review_state=start)
    with django_capture_on_commit_callbacks(execute=True):
        action(trajectory=trajectory, moderator=moderator)
    assert announced == [[trajectory.pk]]


def test_delete_announces_the_id_of_the_row_that_is_gone(
    client_as, owner, announced, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner)
    with django_capture_on_commit_callbacks(execute=True):
        assert client_as(owner).delete(f"{URL}/{trajectory.share_id}").status_code == 204
    assert announced == [[trajectory.pk]]
    assert not Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_reshare_announces(client_as, owner, announced, django_capture_on_commit_callbacks):
    trajectory = ingest_one(v0_events(2), user=owner, session_id="s-1")
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility="public", review_state="approved", license="MIT"
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(owner).post(f"{URL}?session_id=s-1", v0_events(3), format="json")
        assert response.status_code == 201, response.content
    assert response.json()["trajectories"][0]["id"] == trajectory.share_id
    assert trajectory.pk in ids_in(announced)


def test_a_new_share_is_announced_only_when_its_scan_decides(
    client_as, owner, announced, django_capture_on_commit_callbacks
):
    # A new share is pending (outside public()); the scan the commit queues moves it.
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(owner).post(URL, v0_events(2), format="json")
    (stored,) = Trajectory.objects.filter(share_id=response.json()["trajectories"][0]["id"])
    assert announced == [[stored.pk]] and stored.review_state == "approved"


def test_a_rolled_back_change_announces_nothing(
    owner, announced, django_capture_on_commit_callbacks
):
    from django.db import transaction

    from apps.trajectories.services import trajectory_update

    trajectory = make_trajectory(owner=owner, visibility="private")
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            trajectory_update(trajectory=trajectory, visibility="public", license_agreed=True)
            raise RuntimeError
        trajectory_update(trajectory=trajectory, polarity="positive")
    assert announced == []


def test_browse_facets_forget_a_model_whose_only_trajectory_became_private(
    client_as, owner, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner)
    Trajectory.objects.filter(pk=trajectory.pk).update(model_name="only-model-x")
    reindex(trajectory)
    browser = Client()
    assert '<option value="only-model-x">' in browser.get("/browse/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(owner).patch(
            f"{URL}/{trajectory.share_id}", {"visibility": "private"}, format="json"
        )
        assert response.status_code == 200
    assert "only-model-x" not in browser.get("/browse/").content.decode()


def test_browse_facets_forget_a_deleted_trajectory(
    client_as, owner, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner)
    Trajectory.objects.filter(pk=trajectory.pk).update(agent="GoneAgent")
    reindex(trajectory)
    browser = Client()
    assert "GoneAgent" in browser.get("/browse/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client_as(owner).delete(f"{URL}/{trajectory.share_id}")
    assert "GoneAgent" not in browser.get("/browse/").content.decode()
