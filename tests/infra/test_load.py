"""bench/bench_load.py's load, short, in the suite: a few seconds of page views, list and search
calls and shares against the real gunicorn and Celery worker. Counts only, never timing: every
share stored exactly once, no 5xx, and the worker scans them all."""

from __future__ import annotations

import pytest

from bench.bench_load import check_stored_once, run_load
from tests.infra.test_processes import running_stack

pytestmark = pytest.mark.services


def pending(stack) -> int:
    return stack.query(
        "SELECT count(*) FROM trajectories_trajectory WHERE review_state = 'pending'"
    )[0][0]


def test_a_bounded_load_stores_every_share_once_and_answers_no_5xx(tmp_path):
    with running_stack(
        tmp_path,
        names=("web", "worker"),
        database_suffix="load",
        env={"TRAJHUB_ANON_SHARES_PER_HOUR": "100000"},
    ) as stack:
        seeded = run_load(stack.port, rate=10, seconds=1, mix={"share": 1})
        assert len(seeded.share_ids) == seeded.shares_sent == 10
        # Public once scanned: then their pages answer 200.
        stack.wait_for("the worker to scan the seed", lambda: pending(stack) == 0, timeout=120)
        pages = ["/", "/browse/", *(f"/t/{share_id}/" for share_id in seeded.share_ids[:3])]
        (before,) = stack.query("SELECT count(*) FROM trajectories_trajectory")[0]

        result = run_load(stack.port, rate=15, seconds=4, concurrency=6, pages=pages)

        assert result.server_errors == [], result.server_errors[:3]
        kinds = result.by_kind()
        assert {"page", "list", "search", "share", "drop_in"} <= set(kinds)
        reads = [(s.kind, s.status) for k in ("page", "list", "search") for s in kinds[k]]
        assert all(status == 200 for _, status in reads), reads
        assert check_stored_once(result, stack.query) == []
        (after,) = stack.query("SELECT count(*) FROM trajectories_trajectory")[0]
        assert after - before == result.shares_sent > 0
        stack.wait_for("the worker to scan every share", lambda: pending(stack) == 0, timeout=120)
