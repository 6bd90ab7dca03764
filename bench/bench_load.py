"""Bounded load on loopback against the real gunicorn (docker/gunicorn.conf.py, two sync workers)
and a real Celery worker on PostgreSQL and Redis: a mix of page views, list and search calls and
shares (API and OpenHands drop-in) at a stated rate for a stated time.

Checked: every share is stored exactly once (each answer's id is a row, no id twice, the table
grew by exactly the number of shares), no answer is a 5xx, and the worker scanned every share.
Reported: p50 / p95 per kind of request, next to the floor measured in the same run: GET
/healthz at the same rate, the cheapest request through the same server (HTTP, Django's
middleware, one SELECT 1).

    .venv/bin/python bench/bench_load.py [--rate 20] [--seconds 30] [--concurrency 8]

Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/trajhub_bench_load,
created and dropped), REDIS_URL (default redis://127.0.0.1:6379/0; the run uses the database 8
above it, as tests/infra/test_processes.py does, and flushes it).

tests/infra/test_load.py runs `run_load` for a few seconds in the suite and checks the counts
only, never the timing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The mix, by weight: what a public site mostly serves, with shares among them.
MIX = {"page": 30, "list": 25, "search": 20, "share": 15, "drop_in": 10}
SEARCH_WORDS = ["pytest", "django", "migration", "flaky", "README", "docker", "fix"]


@dataclass
class Sample:
    kind: str
    status: int
    seconds: float
    share_id: str = ""
    error: str = ""


@dataclass
class LoadResult:
    samples: list[Sample] = field(default_factory=list)
    late: int = 0  # requests that started more than a second after their slot (overloaded)

    def by_kind(self) -> dict[str, list[Sample]]:
        out: dict[str, list[Sample]] = defaultdict(list)
        for sample in self.samples:
            out[sample.kind].append(sample)
        return out

    @property
    def server_errors(self) -> list[Sample]:
        return [s for s in self.samples if s.status >= 500 or s.status == 0]

    @property
    def share_ids(self) -> list[str]:
        return [s.share_id for s in self.samples if s.share_id]

    @property
    def shares_sent(self) -> int:
        return sum(1 for s in self.samples if s.kind in ("share", "drop_in"))


def _events(marker: str, steps: int) -> list[dict]:
    events: list[dict] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": f"task {marker}"}}
    ]
    for step in range(steps):
        events.append(
            {
                "id": 2 * step + 1,
                "source": "agent",
                "action": "run",
                "message": f"Running pytest -k {marker}",
                "args": {"command": f"pytest -k {marker} tests/{step}"},
            }
        )
        events.append(
            {
                "id": 2 * step + 2,
                "source": "agent",
                "cause": 2 * step + 1,
                "observation": "run",
                "content": f"collected {step + 3} items\n{'.' * (step + 3)} passed",
                "extras": {"command": f"pytest -k {marker}"},
            }
        )
    return events


def _request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _one(port: int, kind: str, number: int, pages: list[str]) -> Sample:
    rng = random.Random(number)
    marker = f"load{number:06d}"
    started = time.perf_counter()
    share_id = ""
    try:
        if kind == "page":
            status, _ = _request(port, "GET", rng.choice(pages))
        elif kind == "list":
            status, _ = _request(port, "GET", "/api/v1/trajectories?limit=20")
        elif kind == "search":
            status, _ = _request(port, "GET", f"/api/v1/trajectories?q={rng.choice(SEARCH_WORDS)}")
        elif kind == "share":
            body = json.dumps(_events(marker, rng.randint(2, 8))).encode()
            path = f"/api/v1/trajectories?visibility=public&license_agreed=true&title={marker}"
            status, answer = _request(port, "POST", path, body)
            if status == 201:
                share_id = json.loads(answer)["trajectories"][0]["id"]
        elif kind == "drop_in":
            payload = {
                "version": "1.0",
                "email": "",
                "polarity": "positive",
                "feedback": "positive",
                "permissions": "public",
                "trajectory": _events(marker, rng.randint(2, 8)),
            }
            status, answer = _request(
                port, "POST", "/share_od_trajectory", json.dumps(payload).encode()
            )
            if status == 200:
                share_id = json.loads(answer)["body"]["feedback_id"]
        else:  # the floor
            status, _ = _request(port, "GET", "/healthz")
    except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
        return Sample(kind, 0, time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}")
    return Sample(kind, status, time.perf_counter() - started, share_id=share_id)


def run_load(
    port: int,
    *,
    rate: float,
    seconds: float,
    concurrency: int = 8,
    mix: dict[str, int] | None = None,
    pages: list[str] | None = None,
    seed: int = 8,
) -> LoadResult:
    """Send `rate` requests a second for `seconds` (open loop: each at its slot, whatever the
    answers take, up to `concurrency` in flight), drawn from `mix` by weight."""
    mix = mix or MIX
    pages = pages or ["/", "/browse/", "/browse/?q=pytest"]
    rng = random.Random(seed)
    kinds = rng.choices(list(mix), weights=list(mix.values()), k=max(1, int(rate * seconds)))
    result = LoadResult()
    lock = threading.Lock()
    start = time.perf_counter()

    def slot(number: int, kind: str) -> None:
        due = start + number / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        elif delay < -1:
            with lock:
                result.late += 1
        sample = _one(port, kind, number, pages)
        with lock:
            result.samples.append(sample)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for number, kind in enumerate(kinds):
            pool.submit(slot, number, kind)
    return result


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def report(result: LoadResult, floor: LoadResult, *, rate: float, seconds: float) -> str:
    floor_p95 = percentile([s.seconds for s in floor.samples], 0.95) * 1000
    floor_p50 = statistics.median(s.seconds for s in floor.samples) * 1000
    lines = [
        f"load: {rate:g} requests/s for {seconds:g} s, {len(result.samples)} requests "
        f"({result.late} started over 1 s late); floor GET /healthz at the same rate: "
        f"p50 {floor_p50:.1f} ms, p95 {floor_p95:.1f} ms",
        f"{'kind':<8} {'n':>5} {'statuses':<22} {'p50 ms':>8} {'p95 ms':>8} {'p95/floor':>9}",
    ]
    for kind, samples in sorted(result.by_kind().items()):
        times = [s.seconds * 1000 for s in samples]
        statuses = ",".join(
            f"{k}:{v}" for k, v in sorted(Counter(s.status for s in samples).items())
        )
        p95 = percentile(times, 0.95)
        lines.append(
            f"{kind:<8} {len(samples):>5} {statuses:<22} {statistics.median(times):>8.1f} "
            f"{p95:>8.1f} {p95 / floor_p95:>8.1f}x"
        )
    every = [s.seconds * 1000 for s in result.samples]
    lines.append(
        f"{'all':<8} {len(every):>5} {'':<22} {statistics.median(every):>8.1f} "
        f"{percentile(every, 0.95):>8.1f} {percentile(every, 0.95) / floor_p95:>8.1f}x"
    )
    return "\n".join(lines)


def check_stored_once(result: LoadResult, query) -> list[str]:
    """Problems with the shares: `query(sql, *params)` runs SQL on the server's database."""
    problems = []
    ids = result.share_ids
    if len(ids) != result.shares_sent:
        problems.append(f"{result.shares_sent - len(ids)} shares got no id back")
    if len(set(ids)) != len(ids):
        problems.append("an id was given to two shares")
    (stored,) = query(
        "SELECT count(*) FROM trajectories_trajectory WHERE share_id = ANY(%s)", list(set(ids))
    )[0]
    if stored != len(set(ids)):
        problems.append(f"{len(set(ids)) - stored} shares answered but not stored")
    return problems


def main() -> int:
    import os

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    os.environ.setdefault(
        "DATABASE_URL",
        os.environ.get(
            "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench_load"
        ),
    )
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    import tempfile

    import django

    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()  # the stack helpers live beside the tests, which import Django models
    from tests.infra.test_processes import running_stack

    with running_stack(
        Path(tempfile.mkdtemp(prefix="trajhub-bench-load-")),
        names=("web", "worker"),
        database_suffix="bench_load",
        env={"TRAJHUB_ANON_SHARES_PER_HOUR": "1000000", "GUNICORN_LOGLEVEL": "warning"},
    ) as stack:
        # Something public to view and search before the clock starts.
        seeded = run_load(stack.port, rate=20, seconds=2, mix={"share": 1})
        stack.wait_for(
            "the worker to scan the seed shares",
            lambda: (
                stack.query(
                    "SELECT count(*) FROM trajectories_trajectory WHERE review_state = 'pending'"
                )[0][0]
                == 0
            ),
            timeout=120,
        )
        pages = ["/", "/browse/", "/browse/?q=pytest"] + [
            f"/t/{share_id}/" for share_id in seeded.share_ids[:10]
        ]
        (before,) = stack.query("SELECT count(*) FROM trajectories_trajectory")[0]
        floor = run_load(
            stack.port, rate=args.rate, seconds=min(args.seconds, 10), mix={"floor": 1}
        )
        result = run_load(
            stack.port,
            rate=args.rate,
            seconds=args.seconds,
            concurrency=args.concurrency,
            pages=pages,
        )
        (after,) = stack.query("SELECT count(*) FROM trajectories_trajectory")[0]
        print(report(result, floor, rate=args.rate, seconds=args.seconds))
        problems = check_stored_once(result, stack.query)
        if after - before != result.shares_sent:
            problems.append(f"the table grew by {after - before} for {result.shares_sent} shares")
        problems += [f"{s.kind}: {s.status} {s.error}" for s in result.server_errors[:5]]
        stack.wait_for(
            "the worker to scan every share",
            lambda: (
                stack.query(
                    "SELECT count(*) FROM trajectories_trajectory WHERE review_state = 'pending'"
                )[0][0]
                == 0
            ),
            timeout=300,
        )
        print(
            f"shares: {result.shares_sent} sent, {len(set(result.share_ids))} stored once each, "
            f"all scanned by the worker; 5xx or failed: {len(result.server_errors)}"
        )
        print("PASS" if not problems else "FAIL: " + "; ".join(problems))
        return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
