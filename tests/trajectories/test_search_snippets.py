"""Search results show why they matched (issue 11): a passage of the trajectory's redacted text
around the words, hits highlighted, escaped, never a redacted original; one more query."""

from __future__ import annotations

import re

import pytest

from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db

SECRET = "sk-proj-" + "Zq9" * 12


def snippets(html: str) -> list[str]:
    return re.findall(r'<p class="traj-snippet">(.*?)</p>', html, re.S)


def test_a_highlighted_passage_around_the_words(client):
    make_trajectory(
        title="Fix the build",
        events=[
            "Ran the linter first.",
            "The flaky pagination test fails on page two of the invoice list.",
        ],
    )
    html = client.get("/browse/?q=pagination").content.decode()
    found = snippets(html)
    assert len(found) == 1
    assert '<mark class="hit">pagination</mark>' in found[0]
    assert "invoice" in found[0]
    assert snippets(client.get("/browse/").content.decode()) == []  # no search, no snippet


def test_snippets_come_from_redacted_text_only(client):
    # As the scan stores it: search_text has the placeholder, the events the original.
    make_trajectory(
        title="Deploy",
        events=[f"export OPENAI_API_KEY={SECRET} then deploy the invoices"],
        search_text="Deploy\nexport OPENAI_API_KEY=<OPENAI_API_KEY_1> then deploy the invoices",
        redactions={SECRET: "<OPENAI_API_KEY_1>"},
    )
    html = client.get("/browse/?q=invoices").content.decode()
    assert SECRET not in html and "Zq9Zq9" not in html
    assert "&lt;OPENAI_API_KEY_1&gt;" in snippets(html)[0]
    # A search text that still held an original (it never should) is shown redacted.
    make_trajectory(
        title="Leaky",
        events=["x"],
        search_text=f"Leaky\nthe zebra token {SECRET}",
        redactions={SECRET: "<OPENAI_API_KEY_1>"},
    )
    html = client.get("/browse/?q=zebra").content.decode()
    assert SECRET not in html and "&lt;OPENAI_API_KEY_1&gt;" in html


def test_snippets_are_escaped(client):
    make_trajectory(
        title="Hostile",
        events=["<img src=x onerror=alert(1)> the walrus <script>alert(2)</script>"],
    )
    html = client.get("/browse/?q=walrus").content.decode()
    passage = snippets(html)[0]
    assert "<img" not in passage and "<script" not in passage and "&lt;img" in passage
    assert '<mark class="hit">walrus</mark>' in passage


def test_one_more_query_whatever_the_page_size(client, django_assert_num_queries):
    for n in range(3):
        make_trajectory(title=f"Run {n}", events=["the otter swims"])
    client.get("/browse/?q=otter")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        client.get("/browse/?q=otter")
    for n in range(3, 30):
        make_trajectory(title=f"Run {n}", events=["the otter swims"])
    with CaptureQueriesContext(connection) as many:
        html = client.get("/browse/?q=otter").content.decode()
    assert len(few.captured_queries) == len(many.captured_queries)
    assert len(snippets(html)) == 20 or len(snippets(html)) >= 20
    with CaptureQueriesContext(connection) as plain:
        client.get("/browse/")
    assert len(many.captured_queries) <= len(plain.captured_queries) + 2


# --- The best passage of the step that matched (issue 23) ---------------------------------------

PYTEST_BANNER = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.12.1, pytest-8.3.2, pluggy-1.5.0\n"
    "rootdir: /workspace/app\ncollected 12 items"
)


def plain(snippet: str) -> str:
    return re.sub(r"</?mark[^>]*>", "", snippet)


def test_the_passage_with_the_most_words_of_the_query(client):
    filler = " ".join(f"word{n}" for n in range(80))
    make_trajectory(
        title="Build",
        events=[
            f"{filler} the invoice total is wrong {filler}",
            f"{filler} pagination breaks {filler}",
            f"{filler} the invoice list pagination skips page two {filler}",
        ],
    )
    passage = snippets(client.get("/browse/?q=invoice+pagination").content.decode())[0]
    assert '<mark class="hit">invoice</mark> list <mark class="hit">pagination</mark>' in passage
    assert "skips page two" in passage
    assert passage.startswith("… ") and passage.endswith(" …")
    # Cut on word boundaries: every word shown is a whole word of the step.
    words = plain(passage).strip("… ").split()
    assert all(
        re.fullmatch(r"word\d+|the|invoice|list|pagination|skips|page|two", w) for w in words
    )


def test_a_test_runners_banner_is_not_the_snippet(client):
    make_trajectory(
        title="Fix the login",
        events=[
            PYTEST_BANNER,
            "python -m pytest -q",
            "The session cookie expires before the redirect, so the login loops.",
            PYTEST_BANNER,
        ],
    )
    passage = snippets(client.get("/browse/?q=session").content.decode())[0]
    assert "cookie expires" in passage and "starts" not in passage and "=====" not in passage
    # Only the banner matches: it is shown rather than nothing.
    make_trajectory(title="Other", events=[PYTEST_BANNER.replace("session", "sessionx")])
    found = snippets(client.get("/browse/?q=sessionx").content.decode())
    assert len(found) == 1 and "sessionx" in found[0]


def test_a_line_many_results_share_is_passed_over(client):
    for n in range(3):
        make_trajectory(title=f"Run {n}", events=[PYTEST_BANNER, f"all {n} green"])
    make_trajectory(
        title="Run 3", events=[PYTEST_BANNER, "the pytest fixture scope was module, not function"]
    )
    found = snippets(client.get("/browse/?q=pytest").content.decode())
    assert len(found) == 4
    assert sum("fixture scope" in s for s in found) == 1


def test_the_task_wins_a_tie_with_a_step(client):
    make_trajectory(
        title="Zoo", task="Feed the capybara at noon", events=["the capybara ate", "done"]
    )
    passage = snippets(client.get("/browse/?q=capybara").content.decode())[0]
    assert "Feed the" in passage


def test_a_placeholder_is_never_cut(client):
    # No space anywhere near the cut: it moves out to take the placeholder whole.
    text = "needle" + "-" * 228 + "<GITHUB_PAT_1>" + "-" * 300
    make_trajectory(title="T", events=[text], redactions={"ghp_" + "A1" * 18: "<GITHUB_PAT_1>"})
    passage = snippets(client.get("/browse/?q=needle").content.decode())[0]
    assert "&lt;GITHUB_PAT_1&gt;" in passage
    text = "-" * 300 + "&lt;EMAIL_12&gt;".replace("&lt;", "<").replace("&gt;", ">")
    make_trajectory(title="U", events=[text + "-" * 5 + "haystack" + "-" * 300])
    passage = snippets(client.get("/browse/?q=haystack").content.decode())[0]
    assert "MAIL_12" not in passage or "&lt;EMAIL_12&gt;" in passage


def test_a_secret_never_shows_not_even_when_the_query_is_its_prefix(client, owner):
    """Through the real pipeline: ingest, the scan (which builds the search text), approval."""
    from apps.moderation.services.scan import trajectory_scan
    from tests.ingest_helpers import ingest_one, v0_events

    secret = "ghp_" + "Zq8rT2xLm4Vb7Nc1Kd9Pf3Hs6Jw0Ya5Ue8Io"
    events = v0_events(2, task="Deploy the walrus service")
    events[2]["content"] = f"export GITHUB_TOKEN={secret} && deploy walrus --prod"
    trajectory = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert secret in trajectory.redactions and secret not in trajectory.search_text
    from apps.trajectories.models import Trajectory

    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    html = client.get("/browse/?q=walrus+prod").content.decode()
    assert "Deploy the walrus service" in html
    assert len(snippets(html)) == 1
    for prefix in (secret[:8], secret[:4], secret[4:12], "Zq8r", secret, "GITHUB"):
        # The page repeats the query; what it found is the list of results.
        page = client.get(f"/browse/?q={prefix}").content.decode()
        results = "".join(re.findall(r'<ul class="traj-list">.*?</ul>', page, re.S))
        assert "Zq8r" not in results, prefix
        assert all("Zq8r" not in s and "ghp_" not in s for s in snippets(page)), prefix
        found = client.get(f"/api/v1/trajectories?q={prefix}").json()["results"]
        assert "Zq8r" not in str(found), prefix
    # The placeholder is what is found, and shown.
    page = client.get("/browse/?q=GITHUB").content.decode()
    assert any("&lt;GITHUB_TOKEN_1&gt;" in plain(s) for s in snippets(page))
