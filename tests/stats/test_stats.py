"""/stats/ and GET /api/v1/stats (issue 11): only public() counts, every caller sees the same
numbers, a fixed number of queries whatever the size, cached and dropped the moment a
trajectory enters or leaves public(), charts as SVG with the numbers in a table too."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.stats.selectors import collection_stats_forget
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_update
from tests.trajectories.site_factories import NOT_PUBLIC_STATES, make_trajectory

pytestmark = pytest.mark.django_db

SECRET_AGENT = "agent-sk-live-0123456789abcdef"


def world(owner):
    now = timezone.now()
    make_trajectory(
        agent="CodeActAgent",
        model_name="gpt-4o",
        num_events=5,
        owner=owner,
        total_tokens=1000,
        total_cost=0.5,
        started_at=now - timedelta(minutes=3),
        ended_at=now,
    )
    make_trajectory(
        agent="CodeActAgent",
        model_name="claude-3",
        num_events=60,
        polarity="positive",
        source_format="sweagent",
        total_cost=0.25,
    )
    make_trajectory(
        agent="SWE-agent",
        model_name="claude-3",
        num_events=3000,
        polarity="negative",
        started_at=now - timedelta(hours=2),
        ended_at=now,
    )
    # A name holding a value the scan redacted is listed as shown (its placeholder).
    make_trajectory(agent=SECRET_AGENT, redactions={"sk-live-0123456789abcdef": "<API_KEY_1>"})
    for state, fields in NOT_PUBLIC_STATES.items():
        make_trajectory(
            agent=f"Hidden{state}", model_name=f"hidden-{state}", num_events=7, **fields
        )


def test_only_public_trajectories_count(owner, client_as, moderator, staff):
    world(owner)
    for user in (None, owner, moderator, staff):
        data = client_as(user).get("/api/v1/stats").json()
        assert data["trajectories"] == 4
        assert data["events"] == 5 + 60 + 3000 + 3
        agents = dict(data["by_agent"])
        # The agent holding a redacted value is listed as shown, never as sent.
        assert agents == {"CodeActAgent": 2, "SWE-agent": 1, "agent-<API_KEY_1>": 1}
        assert not any("Hidden" in name for name in agents) and SECRET_AGENT not in agents
        assert dict(data["by_model"])["claude-3"] == 2
        assert dict(data["by_format"]) == {"openhands_v0": 3, "sweagent": 1}
        assert dict(data["by_polarity"]) == {
            "Not rated": 2,
            "Rated positive": 1,
            "Rated negative": 1,
        }
        assert dict(data["length"]) == {
            "1–10": 2,
            "11–50": 0,
            "51–100": 1,
            "101–500": 0,
            "501–2,000": 0,
            "2,001+": 1,
        }
        assert dict(data["duration"])["1–5 min"] == 1 and dict(data["duration"])["1–4 h"] == 1
        assert data["tokens"] == {"total": 1000, "trajectories": 1}
        assert data["cost"] == {"total": 0.75, "trajectories": 2}
        assert sum(count for _, count in data["per_week"]) == 4
    html = Client().get("/stats/").content.decode()
    assert "Hidden" not in html and "sk-live" not in html
    assert html.count("<svg") >= 7 and "<table" in html and "CodeActAgent" in html


def test_a_fixed_number_of_queries_and_a_warm_cache(django_assert_num_queries):
    for _ in range(3):
        make_trajectory()
    # The seven aggregates, the success rates' two (tests/stats/test_success_rates.py) and the
    # first-wrong histogram's two (tests/stats/test_first_wrong.py).
    with django_assert_num_queries(11):
        Client().get("/api/v1/stats")
    for n in range(30):
        make_trajectory(agent=f"Agent {n}", model_name=f"model {n}", source_format="sharegpt")
    # Still cached: no query at all, for the page or the API.
    with django_assert_num_queries(0):
        assert Client().get("/stats/").status_code == 200
        assert Client().get("/api/v1/stats").json()["trajectories"] == 3
    collection_stats_forget()
    with django_assert_num_queries(11):
        assert Client().get("/stats/").status_code == 200
    assert Client().get("/api/v1/stats").json()["trajectories"] == 33


def test_the_cache_is_dropped_when_a_trajectory_leaves_public(
    owner, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, license="MIT")
    make_trajectory()
    assert Client().get("/api/v1/stats").json()["trajectories"] == 2
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=Trajectory.objects.get(pk=trajectory.pk), visibility="private")
    assert Client().get("/api/v1/stats").json()["trajectories"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=Trajectory.objects.get(pk=trajectory.pk), visibility="public")
    assert Client().get("/api/v1/stats").json()["trajectories"] == 2


def test_the_stats_page_escapes_names():
    make_trajectory(agent="<script>alert(1)</script>", model_name="<img src=x onerror=alert(2)>")
    html = Client().get("/stats/").content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_releases_chart(owner):
    from apps.datasets.models import Release

    make_trajectory()
    Release.objects.create(
        version=1, status="published", num_rows=10, published_at=timezone.now() - timedelta(days=9)
    )
    Release.objects.create(version=2, status="published", num_rows=25, published_at=timezone.now())
    Release.objects.create(version=3, status="failed", num_rows=99)
    data = Client().get("/api/v1/stats").json()
    assert [row[0] for row in data["releases"]] == [1, 2] and [
        row[2] for row in data["releases"]
    ] == [10, 25]
    assert "v2 · " in Client().get("/stats/").content.decode()


def test_the_rendered_charts_are_kept_with_the_numbers(monkeypatch):
    from apps.stats import views

    make_trajectory(agent="First agent")
    drawn = []
    real = views._collection_html
    monkeypatch.setattr(views, "_collection_html", lambda stats: drawn.append(1) or real(stats))
    first = Client().get("/stats/").content.decode()
    again = Client().get("/stats/").content.decode()
    assert len(drawn) == 1 and first == again and "First agent" in again
    # New numbers are drawn anew: never old charts next to new numbers.
    make_trajectory(agent="Second agent")
    collection_stats_forget()
    html = Client().get("/stats/").content.decode()
    assert len(drawn) == 2 and "Second agent" in html
    assert "2 public trajectories" in html


@pytest.mark.django_db(transaction=True)
def test_after_a_cache_drop_two_concurrent_requests_compute_once(monkeypatch):
    """The stampede guard: the second request waits for the first one's numbers."""
    import threading
    import time

    from django.db import connection

    from apps.stats import selectors

    for _ in range(3):
        make_trajectory()
    computed = []
    real = selectors._compute

    def slow_compute():
        computed.append(threading.get_ident())
        time.sleep(0.5)  # as at 100,000 trajectories: long enough for the other to arrive
        return real()

    monkeypatch.setattr(selectors, "_compute", slow_compute)
    collection_stats_forget()
    start = threading.Barrier(2)
    answers: dict[str, object] = {}

    def read(path: str) -> None:
        try:
            start.wait()
            response = Client().get(path)
            answers[path] = (
                response.status_code,
                response.json()["trajectories"] if path.startswith("/api") else None,
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(p,)) for p in ("/stats/", "/api/v1/stats")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(computed) == 1, computed
    assert answers == {"/stats/": (200, None), "/api/v1/stats": (200, 3)}


def test_a_waiter_computes_when_the_computing_request_is_gone(monkeypatch):
    from django.core.cache import cache

    from apps.stats import selectors

    make_trajectory()
    collection_stats_forget()
    # A request took the lock and died without a result (a killed worker).
    cache.add(f"{selectors._key()}:computing", 1, 60)
    monkeypatch.setattr(selectors, "STATS_WAIT_SECONDS", 0.3)
    started = timezone.now()
    assert Client().get("/api/v1/stats").json()["trajectories"] == 1
    assert timezone.now() - started < timedelta(seconds=5)
    # Its lock expires on its own; when it has, the next reader takes it and computes at once.
    cache.delete(f"{selectors._key()}:computing")
    collection_stats_forget()
    assert Client().get("/api/v1/stats").json()["trajectories"] == 1
    assert cache.get(f"{selectors._key()}:computing") is None
