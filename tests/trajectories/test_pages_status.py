"""The trajectory page of a share made public that is not shown (yet, or any more) says why
(issue 6): being checked (reloads itself, without script), waiting for a moderator (with the
password form), deleted (410, with the date). Private shares keep the one 404 of an unknown id.
And every trajectory page offers visitors "Manage this share (password)"."""

from __future__ import annotations

import re

import orjson
import pytest
from django.test import Client

from apps.trajectories.models import Tombstone, Trajectory
from apps.trajectories.services import trajectory_delete
from tests.ingest_helpers import make_trajectory, share_payload, v0_events
from tests.security.html_check import check

pytestmark = pytest.mark.django_db

REFRESH = re.compile(r'<meta http-equiv="refresh" content="\d+">')


def share_publicly(task: str) -> str:
    response = Client().post(
        "/share_od_trajectory",
        orjson.dumps(share_payload(v0_events(2, task=task), permissions="public")),
        content_type="application/json",
    )
    return response.json()["body"]["feedback_id"]


def test_a_public_share_before_its_scan_says_it_is_being_checked_then_shows_it(
    django_capture_on_commit_callbacks,
):
    """The report: opened through its link before the scan ran, it answered 404 ("may have been
    deleted, or it may be private") though it appeared a second later."""
    share_id = share_publicly("Tidy the quuxwaiting logs")
    page = Client().get(f"/t/{share_id}/")
    assert page.status_code == 202
    html = page.content.decode()
    assert "being checked for secrets and personal data" in html
    assert "reloads" in html and REFRESH.search(html)
    # The reload is our own meta refresh (the CSP allows it); no script, and the strict CSP.
    assert check(page, "checking", status=202) == ["checking: <meta http-equiv=refresh>"]
    assert "quuxwaiting" not in html and page["Cache-Control"] == "no-cache"
    Trajectory.objects.filter(share_id=share_id).update(review_state="approved")
    shown = Client().get(f"/t/{share_id}/")
    assert shown.status_code == 200 and "quuxwaiting" in shown.content.decode()


def test_a_held_share_says_it_waits_for_a_moderator_and_offers_the_password_form():
    trajectory = make_trajectory(visibility="public", review_state="held", task="quuxheld work")
    page = Client().get(f"/t/{trajectory.share_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Waiting for a moderator" in html and not REFRESH.search(html)
    assert f'action="/t/{trajectory.share_id}/unlock"' in html and 'name="password"' in html
    assert "quuxheld" not in html


def test_a_deleted_public_share_answers_410_with_its_date_and_a_private_one_404():
    public = make_trajectory(visibility="public", task="quuxpublicgone")
    private = make_trajectory(visibility="private", task="quuxprivategone")
    for trajectory in (public, private):
        trajectory_delete(trajectory=trajectory, reason="owner")
    assert Tombstone.objects.get(share_id=public.share_id).was_public
    assert not Tombstone.objects.get(share_id=private.share_id).was_public
    gone = Client().get(f"/t/{public.share_id}/")
    assert gone.status_code == 410
    deleted_on = Tombstone.objects.get(share_id=public.share_id).deleted_at
    assert f'deleted on <time datetime="{deleted_on.isoformat()}"' in gone.content.decode()
    assert "quuxpublicgone" not in gone.content.decode()
    hidden = Client().get(f"/t/{private.share_id}/")
    unknown = Client().get(f"/t/{'0' * 64}/")
    assert hidden.status_code == unknown.status_code == 404
    # Fragments and the API never say more than the 404.
    assert Client().get(f"/t/{public.share_id}/events").status_code == 404
    assert Client().get(f"/api/v1/trajectories/{public.share_id}").status_code == 404


def test_visitors_get_manage_this_share_on_anonymous_shares_only(owner, other_user):
    """An anonymous share is managed with its password; one owned by an account has none, so
    the link would lead nowhere (issue 20)."""
    anonymous_share = make_trajectory(visibility="public", task="anon")
    owned = make_trajectory(owner=owner, visibility="public", task="owned")
    signed_in = Client()
    signed_in.force_login(other_user)
    for visitor in (Client(), signed_in):
        html = visitor.get(f"/t/{anonymous_share.share_id}/").content.decode()
        assert f'href="/t/{anonymous_share.share_id}/unlock">Manage this share (password)' in html
        assert "Manage this share" not in visitor.get(f"/t/{owned.share_id}/").content.decode()
    mine = Client()
    mine.force_login(owner)
    assert "Manage this share" not in mine.get(f"/t/{owned.share_id}/").content.decode()
