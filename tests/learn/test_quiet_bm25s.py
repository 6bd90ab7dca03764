"""bm25s sets its logger to DEBUG on import; the retrieval index puts it back (issue 20:
`synthesize` printed bm25s' DEBUG lines)."""

import logging


def test_bm25s_logs_warnings_only_once_the_index_is_imported():
    import apps.learn.retrieval.index  # noqa: F401

    assert logging.getLogger("bm25s").getEffectiveLevel() == logging.WARNING
    assert not logging.getLogger("bm25s").isEnabledFor(logging.DEBUG)
