"""Success rates on /stats/ and GET /api/v1/stats (issue 23): by model and by agent, over public
runs whose outcome is known, from the redacted view's values, with a 95 % Wilson interval that
says 3 of 4 is not 750 of 1,000; each row links to the browse page it counts."""

from __future__ import annotations

import math

import pytest
from django.test import Client

from apps.stats.rates import wilson_interval
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def hand_wilson(k: int, n: int) -> tuple[float, float]:
    # Wilson (1927): (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.96.
    z = 1.96
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n), (centre + spread) / (1 + z * z / n)


def test_the_interval_against_a_hand_computation():
    # 3 of 4: 0.3006 to 0.9544 (worked by hand: centre 1.2302 / 1.9604, half 0.6408 / 1.9604).
    low, high = wilson_interval(3, 4)
    assert (round(low, 4), round(high, 4)) == (0.3006, 0.9544)
    low, high = wilson_interval(750, 1000)
    assert (round(low, 4), round(high, 4)) == (0.7222, 0.7758)
    for k, n in ((0, 5), (5, 5), (1, 2), (17, 40)):
        assert wilson_interval(k, n) == pytest.approx(hand_wilson(k, n), abs=1e-4)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def make(model: str, agent: str, outcome: str, **fields):
    return make_trajectory(
        model_name=model,
        agent=agent,
        outcome=outcome,
        outcome_source="owner" if outcome != "unknown" else "",
        **fields,
    )


@pytest.fixture
def runs():
    for outcome in ("resolved", "resolved", "resolved", "unresolved", "unknown"):
        make("gpt-4o", "CodeActAgent", outcome)
    make("claude", "SWE-agent", "unresolved")
    # Never counted: not public, not approved.
    for fields in (
        {"visibility": "private"},
        {"review_state": "held"},
        {"review_state": "pending"},
    ):
        make("secret-model", "SecretAgent", "resolved", **fields)
        make("gpt-4o", "CodeActAgent", "unresolved", **fields)


def by_label(rows):
    return {row["label"]: row for row in rows}


def test_rates_count_public_runs_of_known_outcome_only(client, runs):
    stats = client.get("/api/v1/stats").json()
    models = by_label(stats["success_by_model"])
    assert set(models) == {"gpt-4o", "claude"}
    gpt = models["gpt-4o"]
    assert (gpt["runs"], gpt["resolved"], gpt["rate"]) == (4, 3, 0.75)
    assert (round(gpt["low"], 4), round(gpt["high"], 4)) == (0.3006, 0.9544)
    assert (models["claude"]["runs"], models["claude"]["resolved"]) == (1, 0)
    agents = by_label(stats["success_by_agent"])
    assert set(agents) == {"CodeActAgent", "SWE-agent"}
    assert agents["CodeActAgent"]["runs"] == 4


def test_the_page_shows_rates_with_their_interval_and_links(client, runs):
    html = Client().get("/stats/").content.decode()
    assert "Success rate by model" in html and "Success rate by agent" in html
    assert "95% interval (Wilson)" in html
    assert "75% (30%–95%)" in html
    assert 'href="/browse/?model=gpt-4o&amp;outcome=resolved"' in html
    assert 'href="/browse/?model=gpt-4o&amp;outcome=unresolved"' in html
    assert 'href="/browse/?agent=CodeActAgent&amp;outcome=resolved"' in html
    assert "secret-model" not in html and "SecretAgent" not in html
    # The link lists what it counts: the three public resolved gpt-4o runs.
    browse = client.get("/browse/?model=gpt-4o&outcome=resolved").content.decode()
    assert browse.count('class="traj-title"') == 3


def test_names_are_the_redacted_views(client):
    make_trajectory(
        model_name="model-of-alice@example.com",
        outcome="resolved",
        outcome_source="owner",
        redactions={"alice@example.com": "<EMAIL_1>"},
    )
    html = client.get("/stats/").content.decode()
    assert "alice@example.com" not in html
    assert "model-of-&lt;EMAIL_1&gt;" in html


def test_no_rates_without_known_outcomes(client):
    make_trajectory()
    html = client.get("/stats/").content.decode()
    assert "No public run has a known outcome yet." in html
