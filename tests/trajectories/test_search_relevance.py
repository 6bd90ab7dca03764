"""Search ranks by relevance when there are words (issue 23): a title match above a task match
above a match in the steps, on SQLite (the stated rule) and PostgreSQL (weighted ts_rank: run
with DATABASE_URL); newest and the other orderings a click or a parameter away; query counts
pinned; nothing outside public() in the results or their snippets."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.trajectories.models import Trajectory
from apps.trajectories.services.search import trajectory_search_refresh
from tests.conftest import skip_or_fail
from tests.trajectories.site_factories import NOT_PUBLIC_STATES, make_trajectory

pytestmark = pytest.mark.django_db
API = "/api/v1/trajectories"


def titles(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    html = response.content.decode()
    return re.findall(r'<a class="traj-title" href="/t/[0-9a-f]{64}/">([^<]*)</a>', html)


def api_titles(client, query: str) -> list[str]:
    response = client.get(f"{API}?{query}")
    assert response.status_code == 200, response.content[:500]
    return [item["title"] for item in response.json()["results"]]


@pytest.fixture
def three_walruses():
    """Newest first: the step match, the task match, the title match (made in that order from
    the oldest), so that relevance and newest disagree everywhere."""
    make_trajectory(title="Walrus migration", events=["done"], age_minutes=30)
    make_trajectory(title="Refactor the zoo", task="Teach the walrus to swim", events=["ok"])
    # The word in many steps, and more often than anywhere else: still below the others.
    make_trajectory(
        title="Tidy the build",
        events=["the walrus appears in the logs", "walrus again", "walrus walrus walrus"],
    )
    return ["Walrus migration", "Refactor the zoo", "Tidy the build"]


def test_a_title_match_ranks_above_a_task_match_above_step_text(client, three_walruses):
    newest = list(reversed(three_walruses))
    assert titles(client.get("/browse/?q=walrus")) == three_walruses
    assert titles(client.get("/browse/?q=walrus&ordering=relevance")) == three_walruses
    assert titles(client.get("/browse/?q=walrus&ordering=-created")) == newest
    assert api_titles(client, "q=walrus") == three_walruses
    assert api_titles(client, "q=walrus&ordering=relevance") == three_walruses
    assert api_titles(client, "q=walrus&ordering=-created") == newest
    # Without words there is nothing to rank by: relevance reads as newest, no error.
    assert titles(client.get("/browse/?ordering=relevance"))[:3] == newest
    assert api_titles(client, "ordering=relevance")[:3] == newest


def test_a_task_match_without_any_other_step_still_counts_as_the_task(client):
    # The task is the trajectory's only step text: its search text is a title and a task, no
    # steps section (SQLite scored such a task as step text, tied it and put the newer first).
    make_trajectory(title="Zoo one", task="Feed the walrus", events=[], age_minutes=30)
    make_trajectory(title="Zoo two", events=["the walrus ate"])
    assert titles(client.get("/browse/?q=walrus")) == ["Zoo one", "Zoo two"]
    assert api_titles(client, "q=walrus") == ["Zoo one", "Zoo two"]


def test_every_word_counts_and_ties_go_to_the_newest(client):
    make_trajectory(title="Otter", events=["river"], age_minutes=20)
    make_trajectory(title="Otter river", events=["x"], age_minutes=10)
    make_trajectory(title="Otter", events=["river"])
    # Both words in the title first; then the two with one in the title, newest first.
    assert titles(client.get("/browse/?q=otter+river")) == ["Otter river", "Otter", "Otter"]
    found = Trajectory.objects.filter(title="Otter").order_by("-created_at")
    ids = [item["id"] for item in client.get(f"{API}?q=otter+river").json()["results"]]
    assert ids[1:] == [t.share_id for t in found]


def test_the_api_pages_through_every_match_by_relevance(client):
    made = set()
    for n in range(7):
        title = "Heron" if n % 3 == 0 else f"Run {n}"
        events = ["a heron " * (n % 2 + 1)] if n % 3 else ["nothing here"]
        made.add(make_trajectory(title=title, events=events, age_minutes=n).share_id)
    make_trajectory(title="Unrelated", events=["nothing"])
    seen, relevance, url = [], [], f"{API}?q=heron&limit=2"
    while url:
        body = client.get(url).json()
        seen += [item["id"] for item in body["results"]]
        url = body["next"]
        assert url is None or "cursor=" in url
    assert sorted(seen) == sorted(made) and len(seen) == len(made)
    by_id = {t.share_id: t.title for t in Trajectory.objects.all()}
    # The three title matches come before any step match, across pages.
    assert {by_id[i] for i in seen[:3]} == {"Heron"}
    assert all(by_id[i] != "Heron" for i in seen[3:]), relevance


def test_browse_offers_the_other_orderings_a_click_away(client, three_walruses):
    html = client.get("/browse/?q=walrus&agent=CodeActAgent&page=1").content.decode()
    assert '<option value="relevance" selected>Best match</option>' in html
    links = dict(
        (label, href.replace("&amp;", "&"))
        for href, label in re.findall(r'<p class="sort-links[^"]*">(.*?)</p>', html, re.S)
        and re.findall(r'<a href="(/browse/\?[^"]+)">([^<]+)</a>', html)
        if "ordering=" in href
    )
    assert '<strong aria-current="true">Best match</strong>' in html
    newest = parse_qs(urlsplit(links["Newest"]).query)
    assert newest == {"q": ["walrus"], "agent": ["CodeActAgent"], "ordering": ["-created"]}
    assert titles(client.get(links["Newest"])) == list(reversed(three_walruses))
    assert parse_qs(urlsplit(links["Most starred"]).query)["ordering"] == ["-stars"]
    # Without words: no "Best match", newest selected, no sort links.
    plain = client.get("/browse/").content.decode()
    assert 'value="relevance"' not in plain and "sort-links" not in plain
    assert '<option value="-created" selected>Newest first</option>' in plain


def test_unknown_orderings_are_refused(client):
    assert client.get(f"{API}?q=x&ordering=best").status_code == 400
    assert client.get("/browse/?q=x&ordering=best").status_code == 400


def _queries(client, url: str) -> int:
    client.get(url)  # warm: caches of facets and the site's settings
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


SEARCH_PAGE_QUERIES = 3  # the capped count, the rows, the snippets' rows (facets: cached)
SEARCH_API_QUERIES = 1  # the page of rows, ranked


def test_query_counts_are_pinned_whatever_the_number_of_results(client, django_assert_num_queries):
    for n in range(3):
        make_trajectory(title=f"Kestrel {n}", events=["a kestrel hovers"])
    _queries(client, "/browse/?q=kestrel")
    _queries(client, f"{API}?q=kestrel")
    for n in range(3, 40):
        make_trajectory(title=f"Bird {n}", events=["the kestrel hovers"])
    for url, expected in (
        ("/browse/?q=kestrel", SEARCH_PAGE_QUERIES),
        ("/browse/?q=kestrel&per_page=100", SEARCH_PAGE_QUERIES),
        ("/browse/?q=kestrel&ordering=-created", SEARCH_PAGE_QUERIES),
        (f"{API}?q=kestrel", SEARCH_API_QUERIES),
        (f"{API}?q=kestrel&limit=200", SEARCH_API_QUERIES),
        (f"{API}?q=kestrel&ordering=-stars", SEARCH_API_QUERIES),
    ):
        client.get(url)
        with django_assert_num_queries(expected):
            response = client.get(url)
        assert response.status_code == 200


@pytest.mark.parametrize("state", [*NOT_PUBLIC_STATES, "deleted"])
def test_nothing_outside_public_is_found_or_shown(
    state, client_as, owner, other_user, moderator, staff
):
    shown = make_trajectory(title="Public pelican", events=["a pelican dives"], owner=owner)
    fields = NOT_PUBLIC_STATES.get(state, {})
    hidden = make_trajectory(
        title="Hidden pelican",
        events=["pelican secretword-7731 in the step"],
        owner=owner,
        **fields,
    )
    if state == "deleted":
        from apps.trajectories.services import trajectory_delete

        trajectory_delete(trajectory=hidden, actor=owner)
    for user in (None, owner, other_user, moderator, staff):
        client = client_as(user)
        for url in ("/browse/?q=pelican", "/browse/?q=pelican&ordering=-created"):
            html = client.get(url).content.decode()
            assert "Hidden pelican" not in html and "secretword" not in html, (state, user)
            assert shown.title in html
        for query in ("q=pelican", "q=pelican&ordering=relevance", "q=secretword"):
            body = client.get(f"{API}?{query}").content.decode()
            assert "Hidden pelican" not in body and "secretword" not in body, (state, user)
        assert "Hidden" not in client.get("/browse/?q=secretword").content.decode()


def test_postgresql_ranks_title_and_task_matches_and_the_newest(client, monkeypatch):
    """Candidates (selectors/search.py): every title or task match however old, then the newest
    matches; the count still counts every match."""
    if connection.vendor != "postgresql":
        skip_or_fail("candidates are PostgreSQL's (set DATABASE_URL)")
    from apps.trajectories.selectors import search
    from apps.trajectories.views import site

    monkeypatch.setattr(search, "CANDIDATES", 2)
    monkeypatch.setattr(site, "SEARCH_COUNT_CAP", 3)
    make_trajectory(title="Ibis census", events=["x"], age_minutes=100)
    for n in range(5):
        make_trajectory(title=f"Step {n}", events=["an ibis flew by"], age_minutes=n)
    html = client.get("/browse/?q=ibis").content.decode()
    assert "More than 3 trajectories" in html
    assert titles(client.get("/browse/?q=ibis")) == ["Ibis census", "Step 0", "Step 1"]
    assert api_titles(client, "q=ibis&limit=10") == ["Ibis census", "Step 0", "Step 1"]
    newest = api_titles(client, "q=ibis&ordering=-created&limit=10")
    assert newest == [f"Step {n}" for n in range(5)] + ["Ibis census"]


def test_the_search_text_is_in_sections_with_the_task_apart(owner):
    from tests.ingest_helpers import make_trajectory as ingested

    trajectory = ingested(owner=owner, task="Fix the heron counter", steps=2)
    trajectory_search_refresh(trajectory=trajectory)
    title, task, *steps = trajectory.search_text.split("\x1e")
    assert task == "Fix the heron counter"
    assert "Fix the heron counter" not in steps and steps and all(steps)
    assert title == trajectory.title
