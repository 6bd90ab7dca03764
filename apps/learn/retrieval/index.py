"""The retrieval index on disk: built from the kept examples of public trajectories, published by
renaming a pointer file, read memory-mapped by every process.

Layout under TRAJHUB_RETRIEVE_DIR:
  builds/<name>/ids.npy            example ids, one per document (int64)
  builds/<name>/instruction/       bm25s index over the instructions
  builds/<name>/observation/       bm25s index over the windows' observations
  builds/<name>/dense.faiss        the instructions' normalized embeddings, a faiss index (dense
                                   extra only): an exact scan, or from
                                   TRAJHUB_RETRIEVE_DENSE_CELLS_FROM examples on an inverted file
                                   of k-means cells (dense.write_index)
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
            dense.write_index(np.asarray(embeddings, dtype=np.float32), folder / "dense.faiss")
    (folder / "meta.json").write_text(json.dumps({"documents": len(ids)}))
    pointer = base / f"CURRENT.{uuid.uuid4().hex}"
    pointer.write_text(name)
    os.replace(pointer, base / "CURRENT")
    _prune(base, keep=name)
    return name


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
    # The faiss index of the embeddings (dense.read_index), None without the dense extra.
    dense: Any | None

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

    return Loaded(
        name, ids, bm25("instruction"), bm25("observation"), _dense_index(folder / "dense.faiss")
    )


def _dense_index(path: Path) -> Any | None:
    if not path.exists():
        return None
    try:
        found = dense.read_index(path)
    except ImportError:  # built where the dense extra was, read where it is not: BM25 only
        logger.warning("retrieval: %s needs faiss (the dense extra), not used", path)
        return None
    dense.one_blas_thread()
    return found


def bm25_search(
    retriever: bm25s.BM25 | None, ids: np.ndarray, text: str, k: int
) -> list[tuple[int, float]]:
    """(example id, score) of the k best documents with a positive score, best first (ties by
    document order). bm25s scores the query; the top k are picked here (`top_k`): bm25s' own
    selection (`argpartition(scores, -k)`) takes 2-3 ms at 100,000 documents when most scores
    tie at 0, as they do for a short instruction."""
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
    """Positions of the k highest positive scores, highest first, ties by position: also at
    the cut, where the first documents of a tie are the ones kept (generated and repeated
    instructions tie by the hundred, and a partition keeps an arbitrary few of them). Only the
    positive scores are partitioned: most of an instruction query's 100,000 are 0."""
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.flatnonzero(scores > 0)
    if len(top) > k:
        values = scores[top]
        kth = np.partition(values, len(values) - k)[len(values) - k]  # the k-th highest
        above = top[values > kth]
        top = np.concatenate([above, top[values == kth][: k - len(above)]])
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
    rows, scores = dense.search(loaded.dense, query, k + len(exclude or ()))
    found: list[tuple[int, float]] = []
    for row, score in zip(rows, scores, strict=True):
        example_id = int(loaded.ids[row])
        if exclude and example_id in exclude:
            continue
        found.append((example_id, float(score)))
        if len(found) >= k:
            break
    return found


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
