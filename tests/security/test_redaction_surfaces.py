"""Redaction placeholders on every surface: visitors never see a redacted value, wherever they look
(page header and cards, JSON view, find, API detail, list, events and downloads, feed, link
previews, browse rows, search results and the search index itself); the owner, moderators, staff
and the holder of an anonymous share's password see the original."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from apps.trajectories.models import Trajectory
from tests.security.world import (
    SECRET_EMAIL,
    SECRET_KEY,
    World,
    world_fixture,
)

pytestmark = pytest.mark.django_db

# Pieces of the secrets that no redacted surface may contain, whatever the escaping around them.
LEAKS = (SECRET_EMAIL, "alice.leak", SECRET_KEY, "9f8e7d6c5b4a3928")
VISITORS = ["anonymous", "other"]
INSIDERS = ["owner", "moderator", "staff"]


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_fixture(django_db_blocker) as built:
        yield built


@pytest.fixture
def public(world: World) -> Trajectory:
    """The public trajectory, with the secrets also in its agent, model and version strings
    (they come from the events, where a value can be anything)."""
    trajectory = world.trajectories["public"]
    Trajectory.objects.filter(pk=trajectory.pk).update(
        agent=f"Agent {SECRET_EMAIL}",
        model_name=f"proxy/{SECRET_KEY}/gpt-4o",
        agent_version=f"1.0+{SECRET_EMAIL}",
    )
    return trajectory


def surfaces(trajectory: Trajectory) -> dict[str, tuple[str, dict]]:
    page = trajectory.get_absolute_url()
    api = f"/api/v1/trajectories/{trajectory.share_id}"
    fetch = {"HTTP_X_REQUESTED_WITH": "fetch"}
    found = {
        "page": (page, {}),
        "page ?after": (f"{page}?after=1", {}),
        "events fragment": (f"{page}events?after=0", fetch),
        "block": (f"{page}events/3/blocks/0", fetch),
        "block page": (f"{page}events/3/blocks/0", {}),
        "API detail": (api, {}),
        "API events": (f"{api}/events", {}),
        "API download": (f"{api}/download", {}),
        "API download openai": (f"{api}/download?format=openai", {}),
        "API download sharegpt": (f"{api}/download?format=sharegpt", {}),
        "API download atif": (f"{api}/download?format=atif", {}),
    }
    for step in range(1, trajectory.num_events + 1):
        found[f"JSON of step {step}"] = (f"{page}events/{step}/json", fetch)
    found["JSON page of step 1"] = (f"{page}events/1/json", {})
    return found


LISTS = [
    "/",
    "/browse/",
    "/browse/?q=mail",
    "/feed.atom",
    "/api/v1/trajectories",
    "/api/v1/trajectories?q=mail",
]


@pytest.mark.parametrize("caller", VISITORS)
def test_visitors_never_see_a_redacted_value(world: World, public, caller):
    client = world.client(caller)
    leaked = []
    for name, (url, headers) in [
        *surfaces(public).items(),
        *((url, (url, {})) for url in LISTS),
    ]:
        response = client.get(url, **headers)
        assert response.status_code == 200, name
        body = response.content.decode()
        leaked += [f"{name}: {leak}" for leak in LEAKS if leak in body]
    assert leaked == [], "\n".join(leaked)


def test_visitors_see_the_placeholders_in_their_place(world: World, public):
    client = world.client("anonymous")
    page = client.get(public.get_absolute_url()).content.decode()
    assert "<title>Title quuxpublic for &lt;EMAIL_1&gt;" in page
    assert 'property="og:title" content="Title quuxpublic for &lt;EMAIL_1&gt;"' in page
    assert "Feedback quuxpublic: ask &lt;EMAIL_1&gt;" in page
    assert "&lt;OPENAI_API_KEY_1&gt;" in page
    detail = client.get(f"/api/v1/trajectories/{public.share_id}").json()
    assert detail["title"] == "Title quuxpublic for <EMAIL_1>"
    assert detail["feedback_text"] == "Feedback quuxpublic: ask <EMAIL_1>"
    assert detail["agent"] == "Agent <EMAIL_1>"
    assert detail["model"] == "proxy/<OPENAI_API_KEY_1>/gpt-4o"
    events = client.get(f"/api/v1/trajectories/{public.share_id}/events").json()["results"]
    assert "<OPENAI_API_KEY_1>" in events[2]["text"]
    feed = client.get("/feed.atom").content.decode()
    assert "Title quuxpublic for &lt;EMAIL_1&gt;" in feed


def test_find_never_matches_a_redacted_value_for_visitors(world: World, public):
    find = f"{public.get_absolute_url()}find"
    visitor = world.client("anonymous")
    for query in (SECRET_EMAIL, "alice.leak", "corp-mail", SECRET_KEY, "9f8e7d6c"):
        assert visitor.get(find, {"q": query}).json()["total"] == 0, query
    assert visitor.get(find, {"q": "EMAIL_1"}).json()["total"] > 0
    owner = world.client("owner")
    assert owner.get(find, {"q": "alice.leak"}).json()["total"] > 0


def test_search_never_finds_a_trajectory_by_a_redacted_value(world: World, public):
    for caller in ("anonymous", "owner"):
        client = world.client(caller)
        for query in ("alice.leak", "corp-mail.test", SECRET_KEY):
            browse = client.get("/browse/", {"q": query}).content.decode()
            assert 'class="traj-row"' not in browse, (caller, query)
            assert client.get("/api/v1/trajectories", {"q": query}).json()["results"] == []
    # The index itself holds placeholders only.
    stored = Trajectory.objects.get(pk=public.pk)
    assert not any(leak in stored.search_text for leak in LEAKS)
    assert "<EMAIL_1>" in stored.search_text
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT search_vector::text FROM trajectories_trajectory WHERE id = %s",
                [public.pk],
            )
            (vector,) = cursor.fetchone()
        assert "quuxpubl" in vector  # stemmed
        assert "alice" not in vector and "corp-mail" not in vector and "9f8e7d6c" not in vector


@pytest.mark.parametrize("caller", INSIDERS)
def test_owner_moderators_and_staff_see_the_originals(world: World, public, caller):
    client = world.client(caller)
    page = client.get(public.get_absolute_url()).content.decode()
    assert f'<mark class="redaction">{SECRET_EMAIL}</mark>' in page
    assert SECRET_KEY in page
    detail = client.get(f"/api/v1/trajectories/{public.share_id}").json()
    assert SECRET_EMAIL in detail["title"]
    events = client.get(f"/api/v1/trajectories/{public.share_id}/events").json()["results"]
    assert SECRET_KEY in events[2]["text"]
    export = client.get(f"/api/v1/trajectories/{public.share_id}/download").content.decode()
    assert SECRET_KEY in export
    # The public lists stay public: the same placeholders for insiders as for anyone.
    feed = client.get("/feed.atom").content.decode()
    assert SECRET_EMAIL not in feed


def test_the_holder_of_an_anonymous_share_sees_its_originals(world: World):
    anon = world.trajectories["anon"]
    holder = world.holder(anon.share_id)
    page = holder.get(anon.get_absolute_url()).content.decode()
    assert f'<mark class="redaction">{SECRET_EMAIL}</mark>' in page
    json_view = holder.get(
        f"{anon.get_absolute_url()}events/3/json", HTTP_X_REQUESTED_WITH="fetch"
    ).content.decode()
    assert SECRET_KEY in json_view
    # Anyone else with the link gets nothing at all (it is private).
    assert Client().get(anon.get_absolute_url()).status_code == 404


def test_a_value_in_a_json_key_is_redacted_too(world: World, public):
    from apps.trajectories.models import Event

    event = Event.objects.get(trajectory=public, position=1)
    Event.objects.filter(pk=event.pk).update(
        data={**event.data, "args": {**event.data["args"], SECRET_EMAIL: "as a key"}}
    )
    visitor = world.client("anonymous")
    page = public.get_absolute_url()
    for url, headers in (
        (f"{page}events/2/json", {"HTTP_X_REQUESTED_WITH": "fetch"}),
        (f"{page}events?after=0", {}),
        (f"/api/v1/trajectories/{public.share_id}/events", {}),
        (f"/api/v1/trajectories/{public.share_id}/download", {}),
    ):
        body = visitor.get(url, **headers).content.decode()
        assert "alice.leak" not in body, url


def test_the_scan_reads_agent_model_and_version_too():
    """They are public text like the title: a value found only there is still redacted (or, for
    a secret, holds the trajectory for a moderator)."""
    from apps.moderation.services.scan import trajectory_scan
    from tests.moderation import samples
    from tests.moderation.conftest import make_trajectory

    email = "jane.roe.agent@gmail.com"
    personal = make_trajectory(
        events=["ls"], agent=f"bot of {email}", agent_version=f"1.0 ({email})"
    )
    assert trajectory_scan(trajectory=personal).review_state == "approved"
    personal.refresh_from_db()
    assert personal.redactions == {email: "<EMAIL_1>"}
    detail = Client().get(f"/api/v1/trajectories/{personal.share_id}").json()
    assert (detail["agent"], detail["agent_version"]) == ("bot of <EMAIL_1>", "1.0 (<EMAIL_1>)")

    key = samples.openai_key()
    secret = make_trajectory(events=["ls"], model_name=f"proxy/{key}/gpt-4o")
    result = trajectory_scan(trajectory=secret)
    assert result.review_state == "held" and result.has_secrets
    assert Client().get(f"/api/v1/trajectories/{secret.share_id}").status_code == 404
