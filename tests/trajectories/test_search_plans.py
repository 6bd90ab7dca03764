"""Search within budget (issue 23): a search with an agent or model filter, and the relevance
candidates (selectors/search.py), give the results the ranking rule says, on SQLite and on
PostgreSQL (run with DATABASE_URL); and PostgreSQL knows how many rows an agent or model filter
keeps (migration 0021), which is what lets it plan a filtered search as a short walk of the
agent's index instead of reading every row of the agent (bench/bench_list.py)."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.utils import timezone

from apps.trajectories.models import Trajectory
from tests.conftest import skip_or_fail
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db
API = "/api/v1/trajectories"


def api_titles(client, query: str) -> list[str]:
    response = client.get(f"{API}?{query}")
    assert response.status_code == 200, response.content[:500]
    return [item["title"] for item in response.json()["results"]]


@pytest.fixture
def two_agents():
    """Each agent's runs mentioning a walrus in the title, the task or one step (once each,
    so that step matches tie and go newest first), the other agent's matches interleaved in
    time, and the title match the newest of its agent's: it is a title match and one of the
    newest matches at once. The names are what the rule ranks for LocAgent."""
    for agent in ("CodeActAgent", "LocAgent"):
        make_trajectory(
            title=f"{agent} on the zoo", task="Feed the walrus", events=["ok"], agent=agent
        )
        for n in range(3):
            make_trajectory(title=f"{agent} run {n}", events=[f"a walrus, round {n}"], agent=agent)
    for agent in ("CodeActAgent", "LocAgent"):
        make_trajectory(title=f"{agent} counts walrus", events=["done"], agent=agent)
    make_trajectory(title="LocAgent without the word", events=["a seal"], agent="LocAgent")
    ranked = ["LocAgent counts walrus", "LocAgent on the zoo"]
    ranked += [f"LocAgent run {n}" for n in (2, 1, 0)]
    return ranked


def test_a_search_with_an_agent_filter_ranks_that_agents_matches_by_the_rule(client, two_agents):
    assert api_titles(client, "q=walrus&agent=LocAgent") == two_agents
    assert api_titles(client, "q=walrus&agent=locagent&ordering=relevance") == two_agents
    newest = [two_agents[0], *two_agents[2:], two_agents[1]]
    assert api_titles(client, "q=walrus&agent=LocAgent&ordering=-created") == newest
    html = client.get("/browse/?q=walrus&agent=LocAgent").content.decode()
    assert [title for title in two_agents if title in html] == two_agents
    assert "CodeActAgent" not in api_titles(client, "q=walrus&agent=LocAgent")


def test_the_model_filter_keeps_the_same_rule(client):
    make_trajectory(title="Step match", events=["the heron"], model_name="deepseek-chat")
    make_trajectory(title="Heron in the title", events=["x"], model_name="gpt-4o")
    make_trajectory(title="Heron for deepseek", events=["x"], model_name="deepseek-chat")
    titles = api_titles(client, "q=heron&model=deepseek-chat")
    assert titles == ["Heron for deepseek", "Step match"]


def test_postgresql_candidates_that_are_both_a_title_match_and_among_the_newest(
    client, two_agents, monkeypatch
):
    """Two candidates of each kind (title or task matches, newest matches), which overlap in
    the newest title match: it is ranked once, the task match below it, then the newest step
    match; the older step matches are not candidates."""
    if connection.vendor != "postgresql":
        skip_or_fail("candidates are PostgreSQL's (set DATABASE_URL)")
    from apps.trajectories.selectors import search

    monkeypatch.setattr(search, "CANDIDATES", 2)
    assert api_titles(client, "q=walrus&agent=LocAgent") == two_agents[:3]
    assert api_titles(client, "q=walrus&agent=LocAgent&ordering=-created")[:3] == [
        two_agents[0],
        *two_agents[2:4],
    ]


@pytest.mark.parametrize("field", ["shown_agent", "shown_model"])
def test_postgresql_estimates_how_many_rows_an_agent_or_model_filter_keeps(field):
    """The filters compare UPPER(shown_agent) / UPPER(shown_model), an expression without
    statistics of its own unless migration 0021 made them: PostgreSQL then guessed 0.5 % of the
    rows for any value (here 2 of 400 for a value 300 rows hold) and planned a filtered search
    as if it kept a handful."""
    if connection.vendor != "postgresql":
        skip_or_fail("planner estimates are PostgreSQL's (set DATABASE_URL)")
    now = timezone.now()
    Trajectory.objects.bulk_create(
        Trajectory(
            share_id=f"{n:064x}",
            title=f"run {n}",
            source_format="openhands_v0",
            visibility="public",
            review_state="approved",
            indexed_at=now,
            **{field: "LocAgent" if n % 4 else "CodeActAgent"},
        )
        for n in range(400)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE trajectories_trajectory")
    # The lookup the FilterSet's filter_shown makes (iexact: UPPER(...) = UPPER(...)).
    plan = Trajectory.objects.filter(**{f"{field}__iexact": "locagent"}).explain(format="json")
    estimated = json.loads(plan)[0]["Plan"]["Plan Rows"]
    assert 200 <= estimated <= 400, plan
