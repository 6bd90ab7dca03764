"""/compare/ of two large trajectories whose maps hold a long one-line secret: warm and cold
server time, against floors measured in the same run.

Target (DESIGN.md): /compare/ of two 2,000-event trajectories, server time p95 <= 300 ms, first
HTML <= 400 KB. Issue 20 reads each step's summary as far as the longest original of the map
(a Base64 PEM key of ~2,300 characters here), so the cold path (steps read from the events,
aligned afresh) is where that shows; the warm path reads cached steps.

Two generated OpenHands sessions (the demo generator, long command output) are stored through
the real ingest service into their own PostgreSQL database (trajhub_bench_compare by default).
Then a Base64-encoded PEM key is written at the start of every 10th long output and a GitHub
token in front of every 20th event's text, both put in each trajectory's map as the scan would,
and the redaction index is rebuilt. Each request goes through Django's test client as an
anonymous visitor.

Floors, same run, same trajectories:
  warm sql   the warm page's SQL statements (captured through Django) run with psycopg on a
             warm connection;
  cold sql   the same for a cold page (its steps read from the events).

It also counts 12-character fragments of the planted secrets in the first page and in the rows
fragment (0 is the only right answer).

    .venv/bin/python bench/bench_compare.py [--events 2000] [--mb 12] [--runs 30] [--cold-runs 8]

Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/trajhub_bench_compare).
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import statistics
import string
import sys

os.environ.setdefault(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench_compare"
)

import bench_page as bp  # noqa: E402  (sets the database and settings up for this process)
import psycopg  # noqa: E402

TITLE = "bench_compare: 2,000-event trajectory"
TARGET_MS = bp.COMPARE_TARGET_MS
TARGET_BYTES = bp.COMPARE_TARGET_BYTES


def _body(rng: random.Random, length: int, alphabet: str) -> str:
    return "".join(rng.choices(alphabet, k=length))


def pem_base64(rng: random.Random) -> str:
    """A 2048-bit-sized RSA key's PEM, Base64-encoded on one line (`base64 -w0 key.pem`)."""
    lines = [_body(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(25)]
    label = "RSA " + "PRIVATE KEY"
    pem = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"
    return base64.b64encode(pem.encode()).decode()


def plant(trajectory, seed: str) -> list[str]:
    """Secrets written into the events' text and the trajectory's map; the index rebuilt."""
    from apps.trajectories.models import Event, Trajectory
    from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh

    rng = random.Random(seed)
    key = pem_base64(rng)
    redactions = {key: "<PRIVATE_KEY_1>"}
    changed = []
    events = Event.objects.filter(trajectory=trajectory).order_by("position").only("id", "text")
    long_outputs = 0
    for number, event in enumerate(events):
        text = event.text or ""
        if len(text) > 300:
            long_outputs += 1
            if long_outputs % 10 == 0:
                event.text = f"{key}\n{text}"
                changed.append(event)
                continue
        if number % 20 == 0:
            token = "ghp_" + _body(rng, 36, string.ascii_letters + string.digits)
            redactions[token] = f"<GITHUB_TOKEN_{len(redactions)}>"
            event.text = f"export GH_TOKEN={token} && {text}"
            changed.append(event)
    Event.objects.bulk_update(changed, ["text"], batch_size=500)
    Trajectory.objects.filter(pk=trajectory.pk).update(redactions=redactions)
    trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
    trajectory.refresh_from_db()
    print(
        f"planted in {trajectory.share_id[:12]}: a {len(key):,}-character key in "
        f"{long_outputs // 10} outputs, {len(redactions) - 1} tokens"
    )
    return list(redactions)


def fragments(secrets: list[str], html: str) -> int:
    return sum(
        1 for secret in secrets for i in range(len(secret) - 11) if secret[i : i + 12] in html
    )


def replay(statements: list[str], runs: int) -> list[float]:
    with psycopg.connect(bp.DATABASE_URL) as conn:

        def run_sql():
            for statement in statements:
                conn.execute(statement).fetchall()

        run_sql()
        samples, _ = bp.timed(run_sql, runs)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--mb", type=float, default=12.0, help="payload of each trajectory")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cold-runs", type=int, default=8)
    args = parser.parse_args()
    bp.ensure_database()
    bp.setup_django()
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.trajectories.selectors.compare import align_key, compare_steps_forget

    a, _ = bp.make_trajectory(args.events, 0, 0, args.mb, title=TITLE, seed="bench-compare-a")
    b, _ = bp.make_trajectory(
        args.events, 0, 0, args.mb, title=TITLE + " (B)", seed="bench-compare-b"
    )
    secrets = plant(a, "a") + plant(b, "b")
    url = f"/compare/?a={a.share_id}&b={b.share_id}"
    rows_url = f"/compare/rows?a={a.share_id}&b={b.share_id}&from=200"
    visitor = Client()

    def forget():
        compare_steps_forget(a.share_id)
        compare_steps_forget(b.share_id)
        cache.delete(align_key(a, b))

    def cold():
        # As after either side was stored again: steps read from the events, aligned afresh.
        forget()
        return visitor.get(url)

    forget()
    with CaptureQueriesContext(connection) as captured_cold:
        response = visitor.get(url)
    assert response.status_code == 200, response.status_code
    cold_sql = [query["sql"] for query in captured_cold.captured_queries]
    html = response.content.decode()
    with CaptureQueriesContext(connection) as captured_warm:
        visitor.get(url)
    warm_sql = [query["sql"] for query in captured_warm.captured_queries]
    warm, _ = bp.timed(lambda: visitor.get(url), args.runs)
    rows, fragment = bp.timed(lambda: visitor.get(rows_url), args.runs)
    cold_samples, _ = bp.timed(cold, args.cold_runs)
    warm_floor = replay(warm_sql, args.runs)
    cold_floor = replay(cold_sql, args.cold_runs)
    shown = fragments(secrets, html) + fragments(secrets, fragment.content.decode())

    print()
    print(
        f"compare: {a.num_events:,} and {b.num_events:,} events; first HTML "
        f"{len(response.content) / 1000:.1f} KB, {response.content.count(b'<tr class=')} rows shown"
    )
    bp.line("compare page, warm", warm, f"  {len(warm_sql)} queries")
    bp.line("compare rows fragment from=200", rows, f"  {len(fragment.content) / 1000:.1f} KB")
    bp.line("floor: the warm page's SQL (psycopg)", warm_floor)
    bp.line("compare page, cold (steps, alignment)", cold_samples, f"  {len(cold_sql)} queries")
    bp.line("floor: the cold page's SQL (psycopg)", cold_floor)
    median = statistics.median
    print(
        f"warm / warm SQL floor: {median(warm) / median(warm_floor):.1f}x   "
        f"cold / cold SQL floor: {median(cold_samples) / median(cold_floor):.1f}x"
    )
    print(f"12-character fragments of planted secrets shown: {shown}")
    ok_time = bp.p95(warm) <= TARGET_MS
    ok_size = len(response.content) <= TARGET_BYTES
    print()
    print(f"compare server time p95 <= {TARGET_MS:.0f} ms: {'PASS' if ok_time else 'FAIL'}")
    print(f"compare first HTML <= {TARGET_BYTES // 1000} KB: {'PASS' if ok_size else 'FAIL'}")
    print(f"no fragment of a secret shown: {'PASS' if shown == 0 else 'FAIL'}")
    return 0 if ok_time and ok_size and shown == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
