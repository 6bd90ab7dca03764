"""Retrieval for in-context learning (the paper's Algorithm 2): an index of the kept examples
(BM25 over instructions and over observations, dense embeddings when the `dense` extra is
installed), built by a task, stored as memory-mapped files and swapped atomically; and the
query side that every web process shares."""


def warm() -> None:
    """Open the current index and, when it has dense embeddings, load the encoder, so that a
    new web process's first request costs what the others do (docker/gunicorn.conf.py calls it as each worker starts).
    Never stops a worker from starting: a failure is logged and the first request pays."""
    import logging

    from apps.learn.retrieval import dense, index

    try:
        loaded = index.current()
        # No dense index, no dense query: the encoder (and, before its first export, torch)
        # would only cost the worker seconds and memory.
        if loaded is not None and loaded.dense is not None:
            dense.warm()
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        logging.getLogger(__name__).warning("retrieval: warming up failed", exc_info=True)
