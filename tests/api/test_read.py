"""Reading through the API as anonymous, owner, other user, moderator and staff."""

from __future__ import annotations

import orjson
import pytest

from apps.accounts.services import api_token_create
from apps.trajectories.models import Event, Image, Trajectory
from tests.ingest_helpers import data_url, make_trajectory, png_bytes, reindex, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]
HIDDEN_STATES = [
    ("private", "approved"),
    ("private", "pending"),
    ("public", "pending"),
    ("public", "held"),
    ("public", "rejected"),
    ("public", "hidden"),
]


@pytest.fixture
def callers(owner, other_user, moderator, staff):
    return {
        "anonymous": None,
        "owner": owner,
        "other_user": other_user,
        "moderator": moderator,
        "staff": staff,
    }


def sees_everything(caller: str) -> bool:
    return caller in ("owner", "moderator", "staff")


SECRET = "alice@corp.example"


def redacted_trajectory(owner, **state):
    trajectory = make_trajectory(
        owner=owner, task=f"mail {SECRET} the report", redactions={SECRET: "<EMAIL_1>"}, **state
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(title=f"mail {SECRET}")
    trajectory.refresh_from_db()
    return trajectory


# --- detail ---------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_public_trajectory_detail_for_everyone(client_as, callers, owner, caller):
    trajectory = redacted_trajectory(owner)
    response = client_as(callers[caller]).get(f"{URL}/{trajectory.share_id}")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == trajectory.share_id and body["num_events"] == 5
    assert body["owner"] == "owner"
    if caller in ("owner", "moderator", "staff"):
        assert body["title"] == f"mail {SECRET}"
    else:
        assert body["title"] == "mail <EMAIL_1>"
    assert "contact_email" not in body and "deletion_password_hashes" not in body


@pytest.mark.parametrize("visibility,state", HIDDEN_STATES)
@pytest.mark.parametrize("caller", CALLERS)
def test_not_public_trajectories_are_404_to_those_who_may_not_see_them(
    client_as, callers, owner, caller, visibility, state
):
    trajectory = make_trajectory(owner=owner, visibility=visibility, review_state=state)
    client = client_as(callers[caller])
    paths = [
        f"{URL}/{trajectory.share_id}",
        f"{URL}/{trajectory.share_id}/events",
        f"{URL}/{trajectory.share_id}/download?format=openhands",
    ]
    for path in paths:
        response = client.get(path)
        if sees_everything(caller):
            assert response.status_code == 200, path
        else:
            assert response.status_code == 404, path
            assert response.json() == {"error": {"message": "no such trajectory"}}
    listed = {item["id"] for item in client.get(URL).json()["results"]}
    assert trajectory.share_id not in listed


# --- list -----------------------------------------------------------------------------------


def test_list_shows_only_public_approved(client_as, owner, other_user):
    public = make_trajectory(owner=owner, task="public one")
    for visibility, state in HIDDEN_STATES:
        make_trajectory(owner=owner, visibility=visibility, review_state=state, task=state)
    for user in (None, owner, other_user):
        body = client_as(user).get(URL).json()
        assert [item["id"] for item in body["results"]] == [public.share_id]


def test_owner_me_lists_every_state_of_ones_own(client_as, owner, other_user):
    mine = [make_trajectory(owner=owner, visibility=v, review_state=s) for v, s in HIDDEN_STATES]
    make_trajectory(owner=other_user)
    body = client_as(owner).get(URL + "?owner=me").json()
    assert {item["id"] for item in body["results"]} == {t.share_id for t in mine}
    response = client_as(None).get(URL + "?owner=me")
    assert response.status_code == 401 and response.json()["error"]["where"] == "owner"
    assert client_as(owner).get(URL + "?owner=someone").status_code == 400


def test_filters_and_ordering(client_as, owner):
    small = make_trajectory(owner=owner, task="alpha task", steps=1)
    big = make_trajectory(owner=owner, task="beta task", steps=4)
    Trajectory.objects.filter(pk=small.pk).update(
        polarity="positive", agent="CodeActAgent", model_name="claude-sonnet-4"
    )
    reindex(small)
    client = client_as(None)

    def ids(query: str) -> list[str]:
        response = client.get(f"{URL}?{query}")
        assert response.status_code == 200, response.json()
        return [item["id"] for item in response.json()["results"]]

    assert ids("polarity=positive") == [small.share_id]
    assert ids("agent=codeactagent") == [small.share_id]
    assert ids("model=claude-sonnet-4") == [small.share_id]
    assert ids("source_format=openhands_v0") == [big.share_id, small.share_id]
    assert ids("source_format=sharegpt") == []
    assert ids("ordering=-events") == [big.share_id, small.share_id]
    assert ids("ordering=events") == [small.share_id, big.share_id]
    assert ids("ordering=created") == [small.share_id, big.share_id]
    assert ids("q=beta") == [big.share_id]
    assert ids("created_after=2000-01-01T00:00:00Z") == [big.share_id, small.share_id]
    assert ids("created_before=2000-01-01T00:00:00Z") == []
    bad = client.get(f"{URL}?ordering=sideways")
    assert bad.status_code == 400 and bad.json()["error"]["where"] == "ordering"
    assert client.get(f"{URL}?created_after=yesterday").status_code == 400


def test_cursor_pagination_walks_every_item_once(client_as, owner):
    made = {make_trajectory(owner=owner, task=f"t{i}", steps=1).share_id for i in range(5)}
    client = client_as(None)
    seen, url = [], f"{URL}?limit=2"
    while url:
        body = client.get(url).json()
        seen += [item["id"] for item in body["results"]]
        url = body["next"]
    assert len(seen) == 5 and set(seen) == made


def test_list_query_count_does_not_grow_with_the_page(client_as, owner, django_assert_num_queries):
    for i in range(3):
        make_trajectory(owner=owner, task=f"t{i}", steps=1)
    client = client_as(None)
    with django_assert_num_queries(1):
        assert len(client.get(URL).json()["results"]) == 3
    for i in range(3, 12):
        make_trajectory(owner=owner, task=f"t{i}", steps=1)
    with django_assert_num_queries(1):
        assert len(client.get(URL).json()["results"]) == 12
    with django_assert_num_queries(1):
        client_as(owner).get(URL + "?owner=me&q=t1")


def test_query_counts_with_a_real_token(client, owner, django_assert_num_queries):
    trajectory = make_trajectory(owner=owner, steps=3)
    _, secret = api_token_create(user=owner)
    headers = {"HTTP_AUTHORIZATION": f"Token {secret}"}
    client.get(URL, **headers)  # the first use records last_used_at
    # token lookup + the page
    with django_assert_num_queries(2):
        assert client.get(URL, **headers).status_code == 200
    # token lookup + moderator group check (visible_to) + the trajectory
    with django_assert_num_queries(3):
        assert client.get(f"{URL}/{trajectory.share_id}", **headers).status_code == 200
    # ... + the page of events
    with django_assert_num_queries(4):
        assert client.get(f"{URL}/{trajectory.share_id}/events", **headers).status_code == 200


def test_detail_and_events_query_counts(client_as, owner, moderator, django_assert_num_queries):
    trajectory = make_trajectory(owner=owner, steps=20)
    with django_assert_num_queries(1):
        client_as(None).get(f"{URL}/{trajectory.share_id}")
    with django_assert_num_queries(2):
        client_as(None).get(f"{URL}/{trajectory.share_id}/events")
    # A moderator costs one more query: the group membership.
    with django_assert_num_queries(3):
        client_as(moderator).get(f"{URL}/{trajectory.share_id}/events")


# --- events ---------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_events_are_redacted_except_for_owner_and_moderators(client_as, callers, owner, caller):
    trajectory = redacted_trajectory(owner)
    response = client_as(callers[caller]).get(f"{URL}/{trajectory.share_id}/events")
    assert response.status_code == 200
    first = response.json()["results"][0]
    assert first["position"] == 0 and first["kind"] == "message" and first["source"] == "user"
    everything = orjson.dumps(response.json()).decode()
    if sees_everything(caller):
        assert SECRET in first["text"] and SECRET in first["data"]["args"]["content"]
    else:
        assert SECRET not in everything
        assert "<EMAIL_1>" in first["text"] and "<EMAIL_1>" in first["data"]["args"]["content"]


def test_events_are_paginated_in_order(client_as, owner):
    trajectory = make_trajectory(owner=owner, steps=10)  # 21 events
    client = client_as(None)
    positions, url = [], f"{URL}/{trajectory.share_id}/events?limit=8"
    while url:
        body = client.get(url).json()
        positions += [event["position"] for event in body["results"]]
        url = body["next"]
    assert positions == list(range(21))


# --- downloads ------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_original_download_only_for_owner_and_moderators(client_as, callers, owner, caller):
    trajectory = make_trajectory(owner=owner, steps=1)
    response = client_as(callers[caller]).get(
        f"{URL}/{trajectory.share_id}/download?format=original"
    )
    if sees_everything(caller):
        assert response.status_code == 200
        assert orjson.loads(response.content) == v0_events(1)
        assert response["Content-Disposition"].startswith("attachment")
    else:
        assert response.status_code == 403
        assert response.json()["error"]["where"] == "format"


@pytest.mark.parametrize("fmt", ["openhands", "openai", "sharegpt", "atif"])
@pytest.mark.parametrize("caller", CALLERS)
def test_exports_are_redacted_for_the_public(client_as, callers, owner, caller, fmt):
    trajectory = redacted_trajectory(owner)
    response = client_as(callers[caller]).get(f"{URL}/{trajectory.share_id}/download?format={fmt}")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    text = response.content.decode()
    orjson.loads(response.content)
    if sees_everything(caller):
        assert SECRET in text
    else:
        assert SECRET not in text and "<EMAIL_1>" in text


def test_unknown_export_format_is_400(client_as, owner):
    trajectory = make_trajectory(owner=owner)
    response = client_as(None).get(f"{URL}/{trajectory.share_id}/download?format=csv")
    assert response.status_code == 400 and response.json()["error"]["where"] == "format"


# --- images ---------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_images_are_served_only_to_those_who_see_the_trajectory(
    client_as, callers, owner, other_user, caller
):
    blob = png_bytes((3, 4, 5))
    events = v0_events(1)
    events[0]["args"]["image_urls"] = [data_url(blob)]
    from tests.ingest_helpers import ingest_one

    private = ingest_one(events, user=owner)
    sha = Image.objects.get().sha256
    reference = Event.objects.get(trajectory=private, position=0).data["args"]["image_urls"][0]
    assert reference == f"trajhub-image:{sha}"
    unrelated = make_trajectory(owner=other_user)
    client = client_as(callers[caller])
    response = client.get(f"{URL}/{private.share_id}/images/{sha}")
    if sees_everything(caller):
        assert response.status_code == 200
        assert response.content == blob and response["Content-Type"] == "image/png"
    else:
        assert response.status_code == 404
    # An image is reachable only through a trajectory that refers to it.
    assert client.get(f"{URL}/{unrelated.share_id}/images/{sha}").status_code == 404
    assert client.get(f"{URL}/{unrelated.share_id}/images/nothex").status_code == 404


def test_unknown_query_parameters_are_refused_by_name(client_as, owner):
    """Issue 20: `page_size` or `review_state` on the public list were ignored silently, so the
    answer looked filtered. The API names them; the browse page keeps ignoring them."""
    trajectory = make_trajectory(owner=owner)
    client = client_as(None)
    response = client.get(f"{URL}?page_size=5")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["where"] == "page_size" and "page_size" in error["message"]
    assert "limit" in error["message"]  # says what it takes
    response = client.get(f"{URL}?review_state=held")
    assert response.status_code == 400 and response.json()["error"]["where"] == "review_state"
    response = client.get(f"{URL}/{trajectory.share_id}/events?page=2")
    assert response.status_code == 400 and response.json()["error"]["where"] == "page"
    assert client.get(f"{URL}/{trajectory.share_id}/events?limit=1").status_code == 200
    assert client.get("/browse/?page_size=5&utm_source=x").status_code == 200


def test_owner_me_filters_by_visibility_and_review_state(client_as, owner):
    held = make_trajectory(owner=owner, review_state="held", task="held one")
    private = make_trajectory(owner=owner, visibility="private", task="private one")
    public = make_trajectory(owner=owner, task="public one")
    client = client_as(owner)

    def ids(query: str) -> set[str]:
        response = client.get(f"{URL}?owner=me&{query}")
        assert response.status_code == 200, response.json()
        return {item["id"] for item in response.json()["results"]}

    assert ids("review_state=held") == {held.share_id}
    assert ids("visibility=private") == {private.share_id}
    assert ids("visibility=public&review_state=approved") == {public.share_id}
    wrong = client.get(f"{URL}?owner=me&review_state=maybe")
    assert wrong.status_code == 400 and wrong.json()["error"]["where"] == "review_state"
