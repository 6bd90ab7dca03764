"""The retrieval index on disk: built from the kept examples of public trajectories, published by
renaming a pointer file, read memory-mapped by every process.

Layout under TRAJHUB_RETRIEVE_DIR:
  builds/<name>/ids.npy            example ids, one per document (int64)
  builds/<name>/instruction/       bm25s index over the instructions
  builds/<name>/observation/       bm25s index over the windows' observations
  builds/<name>/dense.npy          normalized embeddings of the instructions (dense extra only);
                                   from TRAJHUB_RETRIEVE_DENSE_CELLS_FROM examples on, in the
                                   order of their k-means cell, with
  builds/<name>/dense_docs.npy     the document number of each row of dense.npy,
  builds/<name>/dense_cells.npy    the cells' unit centroids, and
  builds/<name>/dense_offsets.npy  where each cell's rows start in dense.npy (one more at the end)
  CURRENT                          the name of the build in use (replaced atomically)

A process keeps the build it loaded and re-reads CURRENT (one small file) before each query:
a new build is picked up at once, and the memory-mapped pages are shared by every process on
the host, so more web processes do not multiply the memory or the work.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from django.conf import settings

from apps.learn.retrieval import dense

logger = logging.getLogger(__name__)
# bm25s sets its own logger to DEBUG when imported, after Django's LOGGING made it WARNING:
# `synthesize` then printed its "Building index from tokens" lines.
logging.getLogger("bm25s").setLevel(logging.WARNING)
STOPWORDS = "en"
KEEP_BUILDS = 2  # the one in use and the one before (a process may still be loading it)


def root() -> Path:
    return Path(settings.TRAJHUB_RETRIEVE_DIR)


def tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords=STOPWORDS, return_ids=False, show_progress=False)


def observation_text(steps: list[dict]) -> str:
    return "\n".join(s.get("text", "") for s in steps if s.get("role") == "observation")


def _bm25(texts: list[str]) -> bm25s.BM25:
    retriever = bm25s.BM25()
    corpus = bm25s.tokenize(texts, stopwords=STOPWORDS, show_progress=False)
    retriever.index(corpus, show_progress=False)
    return retriever


def build_from(
    ids: list[int],
    instructions: list[str],
    observations: list[str],
    *,
    embeddings: np.ndarray | None = None,
    with_dense: bool | None = None,
) -> str:
    """Write a build from documents and make it current. Returns its name."""
    base = root()
    name = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    folder = base / "builds" / name
    folder.mkdir(parents=True)
    np.save(folder / "ids.npy", np.asarray(ids, dtype=np.int64))
    if ids:
        _bm25(instructions).save(str(folder / "instruction"), show_progress=False)
        # bm25s cannot index an empty document list, nor score an empty document: a window
        # without observation text is indexed as a single space-free placeholder token.
        _bm25([text or "_" for text in observations]).save(
            str(folder / "observation"), show_progress=False
        )
        if embeddings is None and (with_dense if with_dense is not None else dense.available()):
            embeddings = dense.encode(instructions)
        if embeddings is not None:
            vectors = np.asarray(embeddings, dtype=np.float32)
            if len(vectors) >= settings.TRAJHUB_RETRIEVE_DENSE_CELLS_FROM:
                order, centroids, offsets = partition(vectors)
                np.save(folder / "dense_docs.npy", order)
                np.save(folder / "dense_cells.npy", centroids)
                np.save(folder / "dense_offsets.npy", offsets)
                vectors = vectors[order]
            np.save(folder / "dense.npy", vectors)
    (folder / "meta.json").write_text(json.dumps({"documents": len(ids)}))
    pointer = base / f"CURRENT.{uuid.uuid4().hex}"
    pointer.write_text(name)
    os.replace(pointer, base / "CURRENT")
    _prune(base, keep=name)
    return name


def partition(
    vectors: np.ndarray, *, iterations: int = 10, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spherical k-means into about 2 * sqrt(n) cells (trained on a sample of 64 vectors a
    cell), then every vector to its nearest cell. Returns the row order that groups the cells,
    the unit centroids and each cell's start in that order (n + 1 offsets, the last is n)."""
    rng = np.random.default_rng(seed)
    count = len(vectors)
    cells = max(16, int(2 * np.sqrt(count)))
    sample = vectors[rng.choice(count, size=min(count, 64 * cells), replace=False)]
    centroids = sample[rng.choice(len(sample), size=cells, replace=False)].copy()
    for _ in range(iterations):
        labels = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, sample)
        sizes = np.bincount(labels, minlength=cells)
        empty = sizes == 0
        # An empty cell restarts at a random sample vector rather than staying dead.
        sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    labels = np.concatenate(
        [
            np.argmax(vectors[start : start + 8192] @ centroids.T, axis=1)
            for start in range(0, count, 8192)
        ]
    )
    order = np.argsort(labels, kind="stable").astype(np.int64)
    offsets = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(np.bincount(labels, minlength=cells), out=offsets[1:])
    return order, centroids.astype(np.float32), offsets


def _prune(base: Path, keep: str) -> None:
    builds = sorted((p for p in (base / "builds").iterdir() if p.is_dir()), key=lambda p: p.name)
    for old in builds[:-KEEP_BUILDS]:
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)


def index_build() -> str:
    """Build from the kept examples of trajectories in public() right now."""
    from apps.learn.selectors import examples_public

    ids: list[int] = []
    instructions: list[str] = []
    observations: list[str] = []
    rows = examples_public().order_by("pk").values_list("pk", "instruction", "window__steps")
    for pk, instruction, steps in rows.iterator(chunk_size=2000):
        ids.append(pk)
        instructions.append(instruction)
        observations.append(observation_text(steps or []))
    name = build_from(ids, instructions, observations)
    logger.info("retrieval index %s built with %d examples", name, len(ids))
    return name


@dataclass
class Loaded:
    name: str
    ids: np.ndarray
    instruction: bm25s.BM25 | None
    observation: bm25s.BM25 | None
    dense: np.ndarray | None
    # The partitioned dense index (None below TRAJHUB_RETRIEVE_DENSE_CELLS_FROM: a full scan).
    dense_docs: np.ndarray | None = None
    dense_cells: np.ndarray | None = None
    dense_offsets: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)


_lock = threading.Lock()
_current: Loaded | None = None


def current() -> Loaded | None:
    """The build in use (None when none was ever built)."""
    global _current
    try:
        name = (root() / "CURRENT").read_text().strip()
    except FileNotFoundError:
        return None
    loaded = _current
    if loaded is not None and loaded.name == name:
        return loaded
    with _lock:
        if _current is not None and _current.name == name:
            return _current
        _current = _load(name)
        return _current


def _load(name: str) -> Loaded:
    folder = root() / "builds" / name
    ids = np.load(folder / "ids.npy", mmap_mode="r")

    def bm25(sub: str) -> bm25s.BM25 | None:
        if not (folder / sub).is_dir():
            return None
        return bm25s.BM25.load(str(folder / sub), mmap=True, show_progress=False)

    def array(file: str) -> np.ndarray | None:
        path = folder / file
        return np.load(path, mmap_mode="r") if path.exists() else None

    if (folder / "dense.npy").exists():
        dense.one_blas_thread()
    loaded = Loaded(
        name,
        ids,
        bm25("instruction"),
        bm25("observation"),
        array("dense.npy"),
        array("dense_docs.npy"),
        # The centroids are small and read whole by every query: in memory.
        np.load(folder / "dense_cells.npy") if (folder / "dense_cells.npy").exists() else None,
        array("dense_offsets.npy"),
    )
    return loaded


def bm25_search(
    retriever: bm25s.BM25 | None, ids: np.ndarray, text: str, k: int
) -> list[tuple[int, float]]:
    """(example id, score) of the k best documents with a positive score, best first (ties by
    document order). bm25s scores the query; the top k are picked here: bm25s' own selection
    (`argpartition(scores, -k)`) takes 2-3 ms at 100,000 documents when most scores tie at 0, as
    they do for a short instruction, against 0.1 ms for partitioning the negated scores."""
    if retriever is None or not text.strip() or len(ids) == 0:
        return []
    tokens = tokenize([text])
    if not tokens or not tokens[0]:
        return []
    known = retriever.get_tokens_ids(tokens[0])
    if not known:
        return []
    scores = retriever.get_scores_from_ids(known)
    return [(int(ids[doc]), float(scores[doc])) for doc in top_k(scores, k)]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest positive scores, highest first, ties by position."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[scores[top] > 0]
    return top[np.lexsort((top, -scores[top]))]


def dense_search(
    loaded: Loaded,
    text: str,
    k: int,
    *,
    exclude: set[int] | None = None,
    vector: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """(example id, cosine) of the k nearest instructions; `vector`: the text's embedding when
    the caller has it already (a request encodes its instruction once)."""
    if loaded.dense is None or not text.strip() or not dense.available() or len(loaded) == 0:
        return []
    query = dense.encode_query(text) if vector is None else vector
    rows, scores = _dense_scores(loaded, query)
    wanted = min(len(scores), k + len(exclude or ()))
    if wanted == 0:
        return []
    top = np.argpartition(-scores, wanted - 1)[:wanted]
    top = top[np.argsort(-scores[top])]
    found: list[tuple[int, float]] = []
    for position in top:
        doc = rows[position] if rows is not None else position
        example_id = int(loaded.ids[doc])
        if exclude and example_id in exclude:
            continue
        found.append((example_id, float(scores[position])))
        if len(found) >= k:
            break
    return found


def _dense_scores(loaded: Loaded, query: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """Scores of the rows searched, and their document numbers (None: every document, in
    order). Partitioned: only the rows of the nearest cells are read from the mapped file."""
    assert loaded.dense is not None
    if loaded.dense_cells is None or loaded.dense_offsets is None or loaded.dense_docs is None:
        return None, np.asarray(loaded.dense @ query)
    probes = min(settings.TRAJHUB_RETRIEVE_DENSE_PROBES, len(loaded.dense_cells))
    near = np.argpartition(-(loaded.dense_cells @ query), probes - 1)[:probes]
    offsets = loaded.dense_offsets
    spans = [(int(offsets[cell]), int(offsets[cell + 1])) for cell in np.sort(near)]
    scores = np.concatenate([loaded.dense[start:end] @ query for start, end in spans])
    rows = np.concatenate([loaded.dense_docs[start:end] for start, end in spans])
    return rows, scores


def describe() -> dict[str, Any]:
    loaded = current()
    if loaded is None:
        return {"built": False}
    return {
        "built": True,
        "name": loaded.name,
        "documents": len(loaded),
        "dense": loaded.dense is not None,
    }
