"""Who gets what, for every surface that shows one trajectory and every surface that lists them.

A trajectory that is private, pending, held, rejected, hidden or deleted reaches nobody but its
owner, moderators and staff (and, for an anonymous share, the holder of its password): everyone
else gets exactly the 404 an unknown id gets, on every page, fragment, API call, image and
download. Only the trajectory page of a share its submitter made public says why it is not shown
(issue 6): being checked (202, reloads itself), waiting for a moderator (200), deleted (410,
with the date), and none of these reveals its title, events or owner. Lists (home, browse, search, feed, sitemap, API list) show public trajectories only,
whoever asks.
"""

from __future__ import annotations

import re

import pytest

from tests.security.world import (
    CALLERS,
    MANAGERS,
    NOT_PUBLIC,
    SECRET_EMAIL,
    STATES,
    World,
    marker,
    world_fixture,
)

pytestmark = pytest.mark.django_db

UNKNOWN_ID = "0" * 64


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_fixture(django_db_blocker) as built:
        yield built


def detail_urls(share_id: str, image: str, public_id: str) -> dict[str, str]:
    """Every URL that shows (part of) one trajectory (on /compare/, beside a public one)."""
    page = f"/t/{share_id}/"
    api = f"/api/v1/trajectories/{share_id}"
    return {
        "page": page,
        "page ?after": f"{page}?after=2",
        "events fragment": f"{page}events?after=0",
        "event JSON": f"{page}events/2/json",
        "block": f"{page}events/3/blocks/0",
        "find": f"{page}find?q=mail",
        "timeline": f"{page}timeline",
        "image": f"{page}images/{image}",
        "API detail": api,
        "API events": f"{api}/events",
        "API download openhands": f"{api}/download?format=openhands",
        "API download openai": f"{api}/download?format=openai",
        "API download sharegpt": f"{api}/download?format=sharegpt",
        "API download atif": f"{api}/download?format=atif",
        "API download default": f"{api}/download",
        "API image": f"{api}/images/{image}",
        "compare chooser": f"/compare/?a={share_id}",
        "compare as A": f"/compare/?a={share_id}&b={public_id}",
        "compare as B": f"/compare/?a={public_id}&b={share_id}",
        "compare rows": f"/compare/rows?a={public_id}&b={share_id}&from=0",
    }


CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _without_csrf(html: str) -> str:
    # The 404 page offers the password form; its CSRF token differs on every render.
    return CSRF_INPUT.sub("", html)


def _same_as_unknown(response, unknown, share_id: str) -> bool:
    """A 404 for a hidden id must read exactly like one for an id that does not exist."""
    body = _without_csrf(response.content.decode().replace(share_id, UNKNOWN_ID))
    return (
        body == _without_csrf(unknown.content.decode())
        and response["Content-Type"] == unknown["Content-Type"]
    )


# The trajectory page of a share made public that others cannot see (yet, or any more).
STATUS_PAGES = {"pending": (202, "Being checked"), "held": (200, "Waiting for a moderator")}
STATUS_PAGES["deleted"] = (410, "This trajectory was deleted on")
PAGE_URLS = ("page", "page ?after")


def _reveals_nothing(response, world: World, state: str) -> list[str]:
    body = response.content.decode()
    owner = world.users["owner"]
    assert owner is not None
    leaks = [marker(state), "Title", SECRET_EMAIL, "<EMAIL_1>", owner.get_username(), "traj-head"]
    return [leak for leak in leaks if leak in body]


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("state", [*STATES, "deleted"])
def test_each_surface_answers_each_caller_in_each_state(world: World, state, caller):
    if state == "deleted":
        share_id, image, sees = world.deleted_id, world.images["deleted"], False
    else:
        trajectory = world.trajectories[state]
        share_id, image = trajectory.share_id, world.images[state]
        sees = state == "public" or caller in MANAGERS
    client = world.client(caller)
    wrong = []
    public_id = world.trajectories["public"].share_id
    for name, url in detail_urls(share_id, image, public_id).items():
        for method in ("get", "head"):
            response = getattr(client, method)(url)
            expected = 200 if sees else 404
            if not sees and name in PAGE_URLS and state in STATUS_PAGES:
                expected, words = STATUS_PAGES[state]
                if response.status_code != expected:
                    wrong.append(f"{method.upper()} {name}: {response.status_code}, not {expected}")
                elif method == "get" and words not in response.content.decode():
                    wrong.append(f"{name}: no {words!r}")
                elif method == "get" and _reveals_nothing(response, world, state):
                    wrong.append(f"{name} reveals {_reveals_nothing(response, world, state)}")
                continue
            if response.status_code != expected:
                wrong.append(
                    f"{method.upper()} {name}: {response.status_code}, expected {expected}"
                )
                continue
            if not sees and method == "get":
                unknown = client.get(url.replace(share_id, UNKNOWN_ID))
                if not _same_as_unknown(response, unknown, share_id):
                    wrong.append(f"{name}: the 404 differs from an unknown id's")
    assert wrong == [], (state, caller)


@pytest.mark.parametrize("caller", CALLERS)
def test_the_original_upload_only_for_owner_moderators_and_staff(world: World, caller):
    public = world.trajectories["public"].share_id
    held = world.trajectories["held"].share_id
    client = world.client(caller)
    for share_id, visible in ((public, True), (held, caller in MANAGERS)):
        response = client.get(f"/api/v1/trajectories/{share_id}/download?format=original")
        if caller in MANAGERS:
            assert response.status_code == 200
            assert response["Content-Disposition"].startswith("attachment")
        elif visible:
            # Visible, so saying "not for you" reveals nothing.
            assert response.status_code == 403
        else:
            assert response.status_code == 404


@pytest.mark.parametrize("caller", CALLERS)
def test_an_anonymous_share_is_seen_by_moderators_staff_and_its_holder_only(world: World, caller):
    anon = world.trajectories["anon"]
    urls = detail_urls(anon.share_id, world.images["anon"], world.trajectories["public"].share_id)
    client = world.client(caller)
    expected = 200 if caller in ("moderator", "staff") else 404
    got = {name: client.get(url).status_code for name, url in urls.items()}
    assert got == dict.fromkeys(urls, expected)


def test_the_holder_of_the_password_sees_the_anonymous_share_and_nothing_else(world: World):
    anon = world.trajectories["anon"]
    holder = world.holder(anon.share_id)
    # The pages and the fragments the page loads (and downloads, which honour the unlock).
    public_id = world.trajectories["public"].share_id
    for name, url in detail_urls(anon.share_id, world.images["anon"], public_id).items():
        if name in ("API detail", "API events", "API image"):
            continue  # the JSON API goes by account; the page does not use it
        assert holder.get(url).status_code == 200, name
    # The unlock opens that share only: not another private one, not a held one.
    for state in NOT_PUBLIC:
        trajectory = world.trajectories[state]
        page = holder.get(trajectory.get_absolute_url())
        assert page.status_code == STATUS_PAGES.get(state, (404,))[0], state
        assert not _reveals_nothing(page, world, state), state
    # A forged unlock of an owned trajectory opens nothing: passwords belong to anonymous shares.
    forged = world.holder(world.trajectories["private"].share_id)
    assert forged.get(world.trajectories["private"].get_absolute_url()).status_code == 404


def test_images_of_one_trajectory_are_not_served_through_another(world: World):
    public = world.trajectories["public"]
    held_image = world.images["held"]
    for url in (
        f"/t/{public.share_id}/images/{held_image}",
        f"/api/v1/trajectories/{public.share_id}/images/{held_image}",
    ):
        for caller in CALLERS:
            assert world.client(caller).get(url).status_code == 404, (url, caller)


MALFORMED = [
    "0" * 63,
    "0" * 65,
    "G" * 64,
    "preview2",
    "%2e%2e",
    "..%2F..%2Fetc%2Fpasswd",
    " " + "0" * 63,
    "1 OR 1=1",
]


def test_malformed_ids_are_404_everywhere(world: World):
    public_id = world.trajectories["public"].share_id
    upper = public_id.upper()
    client = world.client("staff")  # staff see everything: still nothing for a bad id
    for bad in [*MALFORMED, upper, public_id + "/"]:
        for template in (
            "/api/v1/trajectories/{}",
            "/api/v1/trajectories/{}/events",
            "/api/v1/trajectories/{}/download",
            "/api/v1/trajectories/{}/images/" + "a" * 64,
            "/t/{}/",
            "/t/{}/events",
            "/t/{}/find?q=a",
            "/t/{}/events/1/json",
        ):
            url = template.format(bad)
            response = client.get(url)
            assert response.status_code == 404, url
            if url.startswith("/api/"):
                assert "error" in response.json(), url
    # A malformed image id is no image.
    assert client.get(f"/t/{public_id}/images/{'A' * 64}").status_code == 404
    assert client.get(f"/api/v1/trajectories/{public_id}/images/../x").status_code == 404
    # The OpenHands share link leads to the page (which decides), or is a 404 itself.
    assert client.get("/share?share_id=nothex").status_code == 404


# ---- lists --------------------------------------------------------------------------------------


def _listed_markers(text: str) -> set[str]:
    return set(re.findall(r"quux([a-z]+)", text))


LIST_URLS = [
    "/",
    "/browse/",
    "/browse/?q=mail",
    "/browse/?per_page=100&ordering=created",
    "/feed.atom",
    "/sitemap.xml",
    "/sitemap-trajectories.xml",
    "/api/v1/trajectories",
    "/api/v1/trajectories?q=mail",
    "/api/v1/trajectories?ordering=-events&limit=200",
]


@pytest.mark.parametrize("caller", CALLERS)
def test_lists_search_feed_and_sitemap_show_public_trajectories_only(world: World, caller):
    client = world.client(caller)
    public_id = world.trajectories["public"].share_id
    for url in LIST_URLS:
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert _listed_markers(text) <= {"public"}, url
        hidden_ids = [t.share_id for name, t in world.trajectories.items() if name != "public"]
        assert not [sid for sid in [*hidden_ids, world.deleted_id] if sid in text], url
        if url not in ("/sitemap.xml",):
            assert public_id in text or marker("public") in text, url


@pytest.mark.parametrize("state", [*NOT_PUBLIC, "anon", "deleted"])
def test_searching_and_filtering_for_a_hidden_trajectory_finds_nothing(world: World, state):
    client = world.client("owner")  # even its owner: these are the public lists
    word = marker(state)
    for query in (f"q={word}", f"agent=Agent{word}", f"model=model-{word}"):
        page = client.get(f"/browse/?{query}")
        assert page.status_code == 200, query
        assert 'class="traj-row"' not in page.content.decode(), query
        # The facets offered for the filters come from public trajectories only.
        assert f'<option value="Agent{word}">' not in page.content.decode()
        api = client.get(f"/api/v1/trajectories?{query}")
        assert api.status_code == 200 and api.json()["results"] == [], query
    public = marker("public")
    assert 'class="traj-row"' in client.get(f"/browse/?q={public}").content.decode()


def test_the_public_lists_are_the_same_whoever_asks(world: World):
    seen = {}
    for caller in CALLERS:
        client = world.client(caller)
        ids = [item["id"] for item in client.get("/api/v1/trajectories").json()["results"]]
        feed = client.get("/feed.atom").content.decode()
        seen[caller] = (ids, _listed_markers(feed))
    assert len({repr(value) for value in seen.values()}) == 1, seen


# ---- ?owner=me -----------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", CALLERS)
def test_owner_me_lists_the_callers_own_of_every_state_and_nothing_else(world: World, caller):
    response = world.client(caller).get("/api/v1/trajectories?owner=me&limit=200")
    if caller == "anonymous":
        assert response.status_code == 401
        return
    assert response.status_code == 200
    listed = {item["id"] for item in response.json()["results"]}
    if caller == "owner":
        assert listed == {world.trajectories[state].share_id for state in STATES}
    else:
        # Moderators and staff see every trajectory elsewhere; "mine" is still only theirs.
        assert listed == set()


def test_owner_only_accepts_me(world: World):
    for value in ("sec-owner", str(world.users["owner"].pk), "ME", "me "):
        response = world.client("other").get(f"/api/v1/trajectories?owner={value}")
        assert response.status_code == 400, value
        assert response.json()["error"]["where"] == "owner"


@pytest.mark.parametrize("caller", CALLERS)
def test_report_and_takedown_forms_exist_for_public_trajectories_only(world: World, caller):
    """Whoever asks (moderators and owners too): only what is in public() can be reported."""
    client = world.client(caller)
    wrong = []
    for state in [*STATES, "deleted"]:
        share_id = world.deleted_id if state == "deleted" else world.trajectories[state].share_id
        for form in ("report", "takedown"):
            for method in ("get", "post"):
                status = getattr(client, method)(f"/t/{share_id}/{form}").status_code
                expected = (200 if method == "get" else 400) if state == "public" else 404
                if status != expected:
                    wrong.append(f"{method} {form} of {state}: {status}, expected {expected}")
    assert wrong == []


@pytest.mark.parametrize("caller", CALLERS)
def test_stats_count_public_trajectories_only(world: World, caller):
    """/stats/ and its API pool every trajectory's agent and model: only public() ones."""
    from apps.stats.selectors import collection_stats_forget

    collection_stats_forget()
    client = world.client(caller)
    for url in ("/stats/", "/api/v1/stats"):
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert _listed_markers(text) == {"public"}, url
    assert client.get("/api/v1/stats").json()["trajectories"] == 1
