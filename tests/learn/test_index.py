"""The retrieval index's BM25 search (apps/learn/retrieval/index.py): the top k picked by our
own partition must be what bm25s' retrieve() ranks, ties included."""

from __future__ import annotations

import random

import numpy as np
import pytest

from apps.learn.retrieval import index


@pytest.fixture
def corpus(settings, tmp_path):
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path
    rng = random.Random(5)
    verbs = ["fix", "add", "test", "remove", "document"]
    things = ["login form", "search endpoint", "CSV importer", "rate limiter", "sitemap"]
    # Generated instructions repeat, so most scores tie (and most documents score 0).
    instructions = [f"{rng.choice(verbs)} the {rng.choice(things)}" for _ in range(3000)]
    observations = [f"pytest {rng.choice(['passed', 'failed'])} {n}" for n in range(3000)]
    ids = list(range(50_000, 53_000))
    index.build_from(ids, instructions, observations, with_dense=False)
    return index.current()


@pytest.mark.parametrize(
    "text", ["fix the login form", "sitemap", "document CSV importer tests", "failed 17"]
)
@pytest.mark.parametrize("k", [1, 5, 15])
def test_bm25_search_ranks_what_bm25s_ranks(corpus, text, k):
    for retriever in (corpus.instruction, corpus.observation):
        hits = index.bm25_search(retriever, corpus.ids, text, k)
        docs, scores = retriever.retrieve(index.tokenize([text]), k=k, show_progress=False)
        expected = [float(s) for s in scores[0] if s > 0]
        assert [score for _, score in hits] == pytest.approx(expected, rel=1e-6)
        # Ties come in document order, so the same query always gets the same examples.
        assert hits == sorted(hits, key=lambda hit: (-hit[1], hit[0]))
        every = retriever.get_scores(index.tokenize([text])[0])
        for example_id, score in hits:
            assert every[example_id - 50_000] == pytest.approx(score)


def test_bm25_search_without_a_known_word_or_asking_for_more_than_there_is(corpus):
    assert index.bm25_search(corpus.instruction, corpus.ids, "zzz qqq", 5) == []
    assert index.bm25_search(corpus.instruction, corpus.ids, "the", 5) == []  # a stopword only
    few = index.bm25_search(corpus.observation, corpus.ids, "failed 17", 10_000)
    assert 0 < len(few) <= 3000 and all(score > 0 for _, score in few)


def test_top_k_is_the_highest_positive_scores_first():
    scores = np.asarray([0.0, 2.0, 1.0, 2.0, 0.0, 3.0], dtype=np.float32)
    assert index.top_k(scores, 3).tolist() == [5, 1, 3]
    assert index.top_k(scores, 10).tolist() == [5, 1, 3, 2]
    assert index.top_k(np.zeros(4, dtype=np.float32), 2).tolist() == []


def test_top_k_keeps_the_first_documents_of_a_tie_at_the_cut():
    """The same query always gets the same examples, the first in document order where more
    tie for the last places than there are places (a partition kept an arbitrary few: 1,930
    of 2,000 random cases below differed from the rule before)."""
    rng = np.random.default_rng(1)
    levels = np.asarray([0, 0, 0, 1.5, 2.0, 2.0, 3.25], dtype=np.float32)
    for _ in range(300):
        scores = rng.choice(levels, size=int(rng.integers(20, 3000)))
        k = int(rng.integers(1, 20))
        positive = [n for n in range(len(scores)) if scores[n] > 0]
        expected = sorted(positive, key=lambda n: (-scores[n], n))[:k]
        assert index.top_k(scores, k).tolist() == expected
    assert index.top_k(np.full(5, 2.0, dtype=np.float32), 2).tolist() == [0, 1]
    assert index.top_k(np.full(5, 2.0, dtype=np.float32), 0).tolist() == []
