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
