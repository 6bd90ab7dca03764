"""Ingest over HTTP into PostgreSQL vs the floor: parse the same JSON + COPY the same rows.

Generated OpenHands share payloads (apps.demo.generator) of about 10 KB, 1 MB (~340 events) and
20 MB (50 screenshots with set-of-marks, ~100 KB each), and a 20 MB Claude Code session (JSON
Lines: the real 2.1.41 fixture's records repeated with fresh uuids, as bench_archive.py makes
it; needs ../shared) are POSTed to /api/v1/trajectories of a
real gunicorn process (docker/gunicorn.conf.py, one sync worker) on a PostgreSQL database of its
own, created and migrated here. For each request: wall-clock latency, and the worker's peak RSS
growth while handling it (/proc/<worker>/clear_refs resets VmHWM before, VmHWM - VmRSS after).

The floor, measured in the same run on the same payloads: orjson.loads of the body, then the same
event rows (read back from trajectories_event) written with one COPY into a scratch table of the
same shape (LIKE trajectories_event INCLUDING ALL), data serialised with orjson, committed.

Targets (DESIGN.md): 1 MB median <= 3x the floor's median; the 1 MB and the 20 MB upload
accepted while the server grows by <= 2x its size (a share payload is read as a stream:
importers/stream.py); the 20 MB Claude Code session within the ingest targets, the 2x included
(JSON Lines are read one record at a time).

    .venv/bin/python bench/bench_ingest.py                      # all three sizes
    .venv/bin/python bench/bench_ingest.py --sizes 1mb --repeat 30
    .venv/bin/python bench/bench_ingest.py --sizes 20mb-claude --repeat 3
    .venv/bin/python bench/bench_ingest.py --profile            # + cProfile of ingest in-process

DATABASE_URL (if PostgreSQL) names the server; the bench uses "<that database>_bench_ingest"
(default trajhub_bench_ingest), dropped and created afresh. REDIS_URL, if set, is the broker and
cache as in production; otherwise the embedded filesystem broker. Either way the scan tasks are
queued, as in production, and not run here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
import psycopg  # noqa: E402
import requests  # noqa: E402

from apps.demo import generator as demo  # noqa: E402

SIZES = {
    "10kb": {"label": "10 KB", "target_bytes": 10_000, "repeat": 40},
    "1mb": {"label": "1 MB", "target_bytes": 1_000_000, "events": 340, "repeat": 40},
    "20mb": {
        "label": "20 MB",
        "target_bytes": 20_000_000,
        "events": 1200,
        "screenshots": 50,
        "screenshot_bytes": 100_000,
        "repeat": 3,
        # Each in a fresh worker (warmed by one small request): memory that an earlier large
        # request left in the allocator would otherwise hide this one's growth.
        "fresh_worker": True,
    },
}
EVENT_COLUMNS = "position, original_id, timestamp, source, kind, type, cause, text, data"
SIZES["20mb-claude"] = {
    "label": "20 MB CC",
    "target_bytes": 20_000_000,
    "repeat": 3,
    "fresh_worker": True,
    "claude_code": True,
}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation: with 3 samples, p95 is the slowest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def bench_database_url() -> str:
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        base = "postgres://postgres@127.0.0.1:5432/trajhub"
    parts = urlsplit(base)
    # Its own database: bench_list.py keeps 100,000 trajectories in trajhub_bench.
    name = f"{parts.path.lstrip('/') or 'trajhub'}_bench_ingest"
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def recreate_database(url: str) -> None:
    parts = urlsplit(url)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))
    name = parts.path.lstrip("/")
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_status(pid: int) -> dict[str, int]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) * 1024
    return values


def reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class Server:
    """gunicorn config.wsgi with docker/gunicorn.conf.py and one sync worker."""

    def __init__(self, env: dict[str, str], log: Path):
        self.port = free_port()
        env = {
            **env,
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": "1",
            "GUNICORN_MAX_REQUESTS": "0",
            "GUNICORN_TIMEOUT": "600",
            "GUNICORN_LOGLEVEL": "warning",
        }
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "gunicorn"),
                    "--config",
                    "docker/gunicorn.conf.py",
                    "config.wsgi",
                ],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(self.url("/healthz"), timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"gunicorn did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        (self.worker_pid,) = [int(pid) for pid in children.split()]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def claude_session(target: int, index: int) -> bytes:
    """A Claude Code session of about `target` bytes (bench_archive.session's records), the
    uuids of its first round made unique per `index` so that no upload continues another."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_archive import session

    return session(target).replace(b'-0"', f'-0-{index}"'.encode())


def payloads(size: str, count: int, seed: int) -> list[bytes]:
    if SIZES[size].get("claude_code"):
        return [claude_session(SIZES[size]["target_bytes"], seed * 1000 + i) for i in range(count)]
    spec = {k: v for k, v in SIZES[size].items() if k not in ("label", "repeat", "fresh_worker")}
    return [
        demo.share_payload(
            demo.generate_session(random.Random(f"bench:{seed}:{size}:{i}"), **spec),
            permissions="public",
        )
        for i in range(count)
    ]


def post(server: Server, token: str, body: bytes) -> tuple[float, int, str, int]:
    """(seconds, HTTP status, share id, worker peak RSS growth in bytes) for one POST."""
    exact = reset_peak(server.worker_pid)
    before = proc_status(server.worker_pid)
    started = time.perf_counter()
    lines = body[:1] == b"{" and b"\n{" in body[:200_000]
    response = requests.post(
        server.url("/api/v1/trajectories?visibility=public&license_agreed=true"),
        data=body,
        headers={
            "Content-Type": "application/x-ndjson" if lines else "application/json",
            "Authorization": f"Token {token}",
        },
        timeout=600,
    )
    seconds = time.perf_counter() - started
    after = proc_status(server.worker_pid)
    peak = after["VmHWM"] if exact else max(after["VmHWM"], after["VmRSS"])
    share_id = ""
    if response.status_code == 201:
        share_id = response.json()["trajectories"][0]["id"]
    return seconds, response.status_code, share_id, peak - before["VmRSS"]


def floor(conn: psycopg.Connection, body: bytes, share_id: str) -> tuple[float, int]:
    """(seconds, rows): orjson.loads(body) + one COPY of the stored rows into the scratch table."""
    rows = conn.execute(
        f"SELECT e.trajectory_id, {', '.join('e.' + c for c in EVENT_COLUMNS.split(', '))} "
        "FROM trajectories_event e JOIN trajectories_trajectory t ON t.id = e.trajectory_id "
        "WHERE t.share_id = %s ORDER BY e.position",
        (share_id,),
    ).fetchall()
    conn.commit()
    started = time.perf_counter()
    if body[:1] == b"{" and b"\n{" in body[:200_000]:
        [orjson.loads(line) for line in body.splitlines() if line.strip()]  # JSON Lines
    else:
        orjson.loads(body)
    with conn.cursor() as cursor:
        with cursor.copy(
            f"COPY bench_floor_event (trajectory_id, {EVENT_COLUMNS}) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row((*row[:-1], orjson.dumps(row[-1]).decode()))
    conn.commit()
    seconds = time.perf_counter() - started
    conn.execute("TRUNCATE bench_floor_event")
    conn.commit()
    return seconds, len(rows)


def run(args: argparse.Namespace) -> dict:
    db_url = bench_database_url()
    print(f"database: {urlsplit(db_url).path.lstrip('/')} (dropped and created)", flush=True)
    recreate_database(db_url)
    work = Path(tempfile.mkdtemp(prefix="trajhub-bench-"))
    (work / "var").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "TRAJHUB_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_SECRET_KEY="bench-only",
        DATABASE_URL=db_url,
        TRAJHUB_VAR_DIR=str(work / "var"),
        PYTHONUNBUFFERED="1",
    )
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [
            *manage,
            "shell",
            "-v",
            "0",
            "-c",
            "from apps.accounts.models import User; User.objects.create_user('bench')",
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )
    token = subprocess.run(
        [*manage, "create_api_token", "bench"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()

    conn = psycopg.connect(db_url)
    conn.execute("CREATE TABLE bench_floor_event (LIKE trajectories_event INCLUDING ALL)")
    conn.commit()
    server = Server(env, work / "gunicorn.log")
    broker = "Redis" if env.get("REDIS_URL") else "filesystem"
    print(
        f"server: gunicorn pid {server.process.pid}, worker pid {server.worker_pid}, "
        f"broker {broker}, storage local files",
        flush=True,
    )
    small = payloads("10kb", 1, args.seed + 1)[0]
    results = {}
    try:
        for size in args.sizes:
            repeat = args.repeat or SIZES[size]["repeat"]
            fresh = SIZES[size].get("fresh_worker", False)
            bodies = payloads(size, repeat + (0 if fresh else 1), args.seed)
            if not fresh:
                # The first request warms the worker (imports, connection); it is not counted.
                post(server, token, bodies.pop(0))
            samples = []
            for body in bodies:
                if fresh:
                    server.stop()
                    server = Server(env, work / "gunicorn.log")
                    post(server, token, small)
                seconds, status, share_id, growth = post(server, token, body)
                if status != 201:
                    raise SystemExit(f"{SIZES[size]['label']}: HTTP {status}")
                floor_seconds, rows = floor(conn, body, share_id)
                samples.append(
                    {
                        "bytes": len(body),
                        "seconds": seconds,
                        "growth": growth,
                        "floor": floor_seconds,
                        "rows": rows,
                    }
                )
            results[size] = samples
            report_size(size, samples)
    finally:
        server.stop()
        conn.close()
    return results


def report_size(size: str, samples: list[dict]) -> None:
    label = SIZES[size]["label"]
    seconds = [s["seconds"] for s in samples]
    floors = [s["floor"] for s in samples]
    mb = statistics.mean(s["bytes"] for s in samples) / 1e6
    median, p95 = statistics.median(seconds), percentile(seconds, 95)
    floor_median = statistics.median(floors)
    growth = max(s["growth"] for s in samples)
    print(
        f"{label:>6}: n={len(samples):<3} {mb:6.2f} MB  {samples[0]['rows']:>5} events  "
        f"median {median * 1000:8.1f} ms  p95 {p95 * 1000:8.1f} ms  {mb / median:6.1f} MB/s  "
        f"| floor median {floor_median * 1000:7.1f} ms  ratio {median / floor_median:5.2f}x  "
        f"| peak RSS growth {growth / 1e6:6.1f} MB = {growth / (mb * 1e6):4.2f}x payload "
        f"(median {statistics.median(s['growth'] for s in samples) / 1e6:.1f} MB)",
        flush=True,
    )


def verdict(results: dict) -> bool:
    ok = True
    if "1mb" in results:
        samples = results["1mb"]
        ratio = statistics.median(s["seconds"] for s in samples) / statistics.median(
            s["floor"] for s in samples
        )
        passed = ratio <= 3.0
        ok &= passed
        print(f"target 1 MB median <= 3x floor: {ratio:.2f}x  {'PASS' if passed else 'FAIL'}")
    if "20mb-claude" in results:
        samples = results["20mb-claude"]
        ratio = statistics.median(s["seconds"] for s in samples) / statistics.median(
            s["floor"] for s in samples
        )
        worst = max(s["growth"] / s["bytes"] for s in samples)
        passed = ratio <= 3.0 and worst <= 2.0
        ok &= passed
        print(
            f"target 20 MB Claude Code session: median {ratio:.2f}x floor (<= 3x), server growth "
            f"{worst:.2f}x payload (<= 2x, DESIGN.md)  {'PASS' if passed else 'FAIL'}"
        )
    for size in ("1mb", "20mb"):
        if size not in results:
            continue
        worst = max(s["growth"] / s["bytes"] for s in results[size])
        passed = worst <= 2.0
        ok &= passed
        print(
            f"target {SIZES[size]['label']} accepted, server growth <= 2x payload (DESIGN.md): "
            f"all 201, worst {worst:.2f}x  {'PASS' if passed else 'FAIL'}"
        )
    return ok


def profile(seed: int) -> None:
    """cProfile trajectory_ingest of one 1 MB payload in-process, on the bench database."""
    import cProfile
    import pstats

    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_SECRET_KEY="bench-only",
        DATABASE_URL=bench_database_url(),
        CELERY_TASK_ALWAYS_EAGER="0",
    )
    os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-bench-prof-"))
    import django

    django.setup()
    from apps.accounts.models import User
    from apps.trajectories.services import ShareOptions, trajectory_ingest

    user = User.objects.get(username="bench")
    bodies = payloads("1mb", 3, seed + 1)
    options = ShareOptions(visibility="public", license_agreed=True)
    trajectory_ingest(data=bodies[0], user=user, options=options)  # warm
    profiler = cProfile.Profile()
    for body in bodies[1:]:
        profiler.enable()
        trajectory_ingest(data=body, user=user, options=options)
        profiler.disable()
    print("\ncProfile of trajectory_ingest, 2 x 1 MB (cumulative, top 30):")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=["10kb", "1mb", "20mb"])
    parser.add_argument("--repeat", type=int, help="requests per size (default: 40 / 40 / 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="also cProfile ingest in-process")
    parser.add_argument("--json", type=Path, help="write the raw samples here")
    args = parser.parse_args()
    results = run(args)
    ok = verdict(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    if args.profile:
        profile(args.seed)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
