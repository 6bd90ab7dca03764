"""The stored outcome on its surfaces (issue 23): the owner says "it worked" / "it did not" on
the Result card or with PATCH (a format's own outcome wins, and the card says so); everyone
sees it on the card; browse and the API filter by it, never listing what is not public."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.views.site import UNLOCKED_SESSION_KEY
from tests.trajectories.site_factories import make_trajectory
from tests.trajectories.test_outcome import eval_row
from tests.trajectories.viewer_factories import ingest

pytestmark = pytest.mark.django_db


def api(share_id: str) -> str:
    return f"/api/v1/trajectories/{share_id}"


def form(share_id: str) -> str:
    return f"/t/{share_id}/outcome"


@pytest.fixture
def plain(owner, sample):
    """A public trajectory whose format records no outcome."""
    return ingest(sample("openhands_v0_events.json"), owner=owner, visibility="public")


def stored(trajectory: Trajectory) -> tuple[str, str, str]:
    trajectory.refresh_from_db()
    return trajectory.outcome, trajectory.outcome_source, trajectory.owner_outcome


# --- The API --------------------------------------------------------------------------------


def test_the_owner_sets_and_clears_the_outcome_with_patch(client_as, owner, plain):
    response = client_as(owner).patch(api(plain.share_id), {"outcome": "resolved"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["outcome"], body["outcome_source"], body["outcome_score"]) == (
        "resolved",
        "owner",
        None,
    )
    assert stored(plain) == ("resolved", "owner", "resolved")
    # Everyone reads it, and the detail's `result` keeps its shape (null: the file has none).
    detail = client_as(None).get(api(plain.share_id)).json()
    assert detail["outcome"] == "resolved" and detail["result"] is None

    client_as(owner).patch(api(plain.share_id), {"outcome": "unresolved"}, format="json")
    assert stored(plain) == ("unresolved", "owner", "unresolved")
    client_as(owner).patch(api(plain.share_id), {"outcome": None}, format="json")
    assert stored(plain) == ("unknown", "", "")


@pytest.mark.parametrize("who", ["anonymous", "other_user", "moderator", "staff"])
def test_only_the_owner_may_patch_it(request, client_as, plain, who):
    user = None if who == "anonymous" else request.getfixturevalue(who)
    response = client_as(user).patch(api(plain.share_id), {"outcome": "resolved"}, format="json")
    assert response.status_code in (401, 403), (who, response.status_code)
    assert stored(plain) == ("unknown", "", "")


def test_a_private_trajectory_is_a_404_to_another_user(client_as, owner, other_user, sample):
    private = ingest(sample("openhands_v0_events.json"), owner=owner)
    response = client_as(other_user).patch(
        api(private.share_id), {"outcome": "resolved"}, format="json"
    )
    assert response.status_code == 404
    assert stored(private) == ("unknown", "", "")


def test_the_formats_outcome_wins_and_bad_values_are_refused(client_as, owner, plain):
    evaluated = ingest(eval_row(resolved=False), owner=owner, visibility="public")
    response = client_as(owner).patch(
        api(evaluated.share_id), {"outcome": "resolved", "title": "New"}, format="json"
    )
    assert response.status_code == 400
    assert "OpenHands evaluation report" in response.content.decode()
    evaluated.refresh_from_db()
    # Nothing of the change is stored: neither the outcome nor the title.
    assert (evaluated.outcome, evaluated.owner_outcome) == ("unresolved", "")
    assert evaluated.title != "New"

    response = client_as(owner).patch(api(plain.share_id), {"outcome": "maybe"}, format="json")
    assert response.status_code == 400 and "outcome" in response.json()["error"]["where"]
    assert stored(plain) == ("unknown", "", "")


# --- The Result card and its form -----------------------------------------------------------


def test_the_card_shows_the_owner_a_form_and_others_the_outcome(client, owner, other_user, plain):
    owner_client = Client()
    owner_client.force_login(owner)
    html = owner_client.get(plain.get_absolute_url()).content.decode()
    assert 'id="result"' in html and f'action="/t/{plain.share_id}/outcome"' in html
    # No outcome and no result: visitors get no card at all, as before.
    assert 'id="result"' not in client.get(plain.get_absolute_url()).content.decode()

    response = owner_client.post(form(plain.share_id), {"outcome": "resolved"})
    assert response.status_code == 302 and response["Location"].endswith("#result")
    assert stored(plain) == ("resolved", "owner", "resolved")
    html = owner_client.get(plain.get_absolute_url()).content.decode()
    assert "Saved: resolved, as you said." in html
    assert 'value="resolved" class="secondary small" aria-pressed="true"' in html

    for visitor in (client, _signed_in(other_user)):
        html = visitor.get(plain.get_absolute_url()).content.decode()
        assert "Resolved, said by the owner" in html
        assert "/outcome" not in html  # no form for them

    owner_client.post(form(plain.share_id), {"outcome": ""})
    assert stored(plain) == ("unknown", "", "")


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("who", ["anonymous", "other_user", "moderator", "staff"])
def test_only_the_sharer_may_post_the_form(request, plain, who):
    client = Client() if who == "anonymous" else _signed_in(request.getfixturevalue(who))
    response = client.post(form(plain.share_id), {"outcome": "resolved"})
    assert response.status_code == 403
    assert stored(plain) == ("unknown", "", "")


def test_a_private_trajectory_is_a_404_to_others_but_not_to_moderators(
    owner, other_user, moderator, sample
):
    private = ingest(sample("openhands_v0_events.json"), owner=owner)
    assert (
        _signed_in(other_user).post(form(private.share_id), {"outcome": "resolved"}).status_code
        == 404
    )
    assert Client().post(form(private.share_id), {"outcome": "resolved"}).status_code == 404
    # A moderator sees it, and still may not say how the run went.
    assert (
        _signed_in(moderator).post(form(private.share_id), {"outcome": "resolved"}).status_code
        == 403
    )
    assert stored(private) == ("unknown", "", "")


def test_the_form_needs_the_csrf_token(owner, plain):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(form(plain.share_id), {"outcome": "resolved"}).status_code == 403
    assert stored(plain) == ("unknown", "", "")


def test_the_anonymous_sharer_with_the_password(sample):
    result = trajectory_ingest(
        data=sample("openhands_v0_events.json"), user=None, options=ShareOptions()
    )
    trajectory, password = result.stored[0].trajectory, result.stored[0].password
    client = Client()
    assert client.post(form(trajectory.share_id), {"outcome": "resolved"}).status_code == 404
    client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert client.session[UNLOCKED_SESSION_KEY] == [trajectory.share_id]
    html = client.get(trajectory.get_absolute_url()).content.decode()
    assert f'action="/t/{trajectory.share_id}/outcome"' in html
    assert client.post(form(trajectory.share_id), {"outcome": "unresolved"}).status_code == 302
    assert stored(trajectory) == ("unresolved", "owner", "unresolved")


def test_where_the_format_has_one_the_card_says_so(owner, client):
    evaluated = ingest(eval_row(resolved=True), owner=owner, visibility="public")
    html = _signed_in(owner).get(evaluated.get_absolute_url()).content.decode()
    assert (
        "The outcome comes from the OpenHands evaluation report: it cannot be set by hand." in html
    )
    assert f'action="/t/{evaluated.share_id}/outcome"' not in html
    response = _signed_in(owner).post(form(evaluated.share_id), {"outcome": "unresolved"})
    assert response.status_code == 400
    assert "OpenHands evaluation report" in response.content.decode()
    assert stored(evaluated) == ("resolved", "openhands_eval", "")
    public = client.get(evaluated.get_absolute_url()).content.decode()
    assert "Resolved, from the OpenHands evaluation report, score 1.00" in public


# --- The filter -----------------------------------------------------------------------------


def titles(response) -> list[str]:
    import re

    return re.findall(r'class="traj-title" href="[^"]+">([^<]+)</a>', response.content.decode())


@pytest.fixture
def mixed():
    make_trajectory(title="Solved", outcome="resolved", outcome_source="openhands_eval")
    make_trajectory(title="Failed", outcome="unresolved", outcome_source="owner")
    make_trajectory(title="Unsure")
    make_trajectory(
        title="Private solved", outcome="resolved", outcome_source="owner", visibility="private"
    )
    make_trajectory(
        title="Held solved", outcome="resolved", outcome_source="owner", review_state="held"
    )


def test_browse_filters_by_outcome(client, mixed):
    assert titles(client.get("/browse/?outcome=resolved")) == ["Solved"]
    assert titles(client.get("/browse/?outcome=unresolved")) == ["Failed"]
    assert titles(client.get("/browse/?outcome=unknown")) == ["Unsure"]
    page = client.get("/browse/?outcome=resolved").content.decode()
    assert '<option value="resolved" selected>Resolved</option>' in page
    assert 'title="Outcome from OpenHands evaluation report">resolved</span>' in page
    bad = client.get("/browse/?outcome=maybe")
    assert bad.status_code == 400 and titles(bad) == []


def test_the_api_filters_by_outcome(client_as, owner, mixed):
    def ids(query: str, user=None) -> list[str]:
        body = client_as(user).get("/api/v1/trajectories" + query).json()
        return [item["title"] for item in body["results"]]

    assert ids("?outcome=resolved") == ["Solved"]
    assert ids("?outcome=unresolved") == ["Failed"]
    assert ids("?outcome=unknown") == ["Unsure"]
    response = client_as(None).get("/api/v1/trajectories?outcome=maybe")
    assert response.status_code == 400 and "outcome" in response.content.decode()


def test_query_counts_with_the_filter(client, client_as, django_assert_num_queries):
    for index in range(30):
        make_trajectory(
            title=f"Run {index}",
            outcome=("resolved", "unresolved", "unknown")[index % 3],
            outcome_source="owner" if index % 3 != 2 else "",
        )
    client.get("/browse/")  # the facets, cached
    with django_assert_num_queries(2):
        assert len(titles(client.get("/browse/?outcome=resolved"))) == 10
    with django_assert_num_queries(1):
        body = client_as(None).get("/api/v1/trajectories?outcome=unresolved&limit=50").json()
    assert len(body["results"]) == 10
