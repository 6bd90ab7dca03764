"""Release build throughput and peak memory, for 1,000 and 10,000 generated trajectories, next to
the floor measured in the same run.

Targets (DESIGN.md): build throughput >= 50 % of the floor's; peak memory flat from 1k to 10k.

The build is the real service (`release_run`: eligibility, gate, redaction, the exporters,
every config, card, manifest, upload to local storage). The floor is the same rows streamed out
of PostgreSQL with one `COPY ... TO STDOUT` and written straight with pyarrow into the same
configs (the same writer options and row groups), with no redaction, no exporter and no gate:
what reading and writing the data costs at the least. Each run is a fresh child process, whose
peak RSS (VmHWM) is its peak memory.

It uses its own PostgreSQL database (trajhub_bench_release by default; created if missing,
migrated) and loads demo sessions (apps.demo.generator, about 20 events each) with COPY.

    .venv/bin/python bench/bench_release.py [--sizes 1000,10000] [--events 20] [--feedback]

`--feedback` also gives every trajectory step feedback (issue 23): two ratings on every agent
step, a first-wrong mark and a correction, from readers who agreed to the licence, so that the
build also writes `step_feedback`, `preferences` and `stepwise` in its one pass. The floor
writes none of them: the ratio is then the build with three more configs against the same
floor, and the peak memory must still be flat.

Environment: BENCH_RELEASE_DATABASE_URL (default
postgres://postgres@127.0.0.1:5432/trajhub_bench_release).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get(
    "BENCH_RELEASE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench_release"
)
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-bench-release-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["TRAJHUB_RELEASE_OPT_OUT_DAYS"] = "0"
os.environ.pop("REDIS_URL", None)  # the build needs no broker
(Path(os.environ["TRAJHUB_VAR_DIR"]) / "static").mkdir(parents=True, exist_ok=True)

import psycopg  # noqa: E402

TARGET_RATIO = 0.5
FLAT = 1.25  # peak memory at 10x the rows within 25 % of the smaller run's: "flat"


def _ensure_database() -> None:
    parts = urlsplit(DATABASE_URL)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))
    name = parts.path.lstrip("/")
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _django():
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _load(count: int, events: int) -> None:
    """`count` public, approved demo trajectories with their events, loaded with COPY."""
    import orjson

    from apps.datasets.selectors import scanner_version
    from apps.demo import generator as demo
    from apps.trajectories.importers import parse_document

    # Scanned by today's rules: the gate leaves out what an older scanner cleaned.
    scanned_with = scanner_version()

    with psycopg.connect(DATABASE_URL) as conn:
        conn.execute("TRUNCATE trajectories_trajectory, datasets_release RESTART IDENTITY CASCADE")
        now = datetime(2026, 1, 1, tzinfo=UTC)
        rng = random.Random(7)
        trajectory_rows = []
        event_rows = []
        for number in range(1, count + 1):
            session = demo.generate_session(rng, events=events, screenshots=0)
            (item,) = parse_document(orjson.loads(demo.v0_array(session))).items
            parsed = item.trajectory
            assert parsed is not None
            created = now + timedelta(seconds=number)
            trajectory_rows.append(
                (
                    f"{number:064x}",
                    f"run {number}",
                    parsed.source_format,
                    parsed.agent,
                    parsed.model,
                    parsed.agent_version,
                    orjson.dumps(parsed.metadata).decode(),
                    session["polarity"],
                    "public",
                    "approved",
                    "MIT",
                    len(parsed.events),
                    created,
                )
            )
            for position, event in enumerate(parsed.events):
                event_rows.append(
                    (
                        number,
                        position,
                        event.original_id,
                        event.timestamp,
                        event.source,
                        event.kind,
                        event.type,
                        event.cause,
                        event.text.replace("\x00", "\u2400"),
                        orjson.dumps(event.data).decode().replace("\\u0000", "\u2400"),
                    )
                )
        with conn.cursor() as cursor:
            with cursor.copy(
                "COPY trajectories_trajectory (share_id, title, source_format, agent, model_name,"
                " agent_version, metadata, polarity, visibility, review_state, license,"
                " num_events, created_at, updated_at, published_at, contact_email,"
                " client_session_id, feedback_text, deletion_password_hashes, redactions,"
                " num_bytes, head_fingerprint, chain_fingerprint, raw_path, raw_sha256,"
                " raw_filename, raw_content_type, search_text, chain_key, scan_version,"
                " scanned_at, dropped_images, shown_agent, shown_model, shown_agent_version,"
                " star_count, unchecked_images) FROM STDIN"
            ) as copy:
                for row in trajectory_rows:
                    created = row[-1]
                    copy.write_row(
                        (
                            *row,
                            created,
                            created,
                            *[""] * 3,
                            "[]",
                            "{}",
                            0,
                            "",
                            "",
                            "bench",
                            *[""] * 5,
                            scanned_with,
                            created,
                            "[]",
                            # The redacted view (no redactions here: the values as sent).
                            row[3],
                            row[4],
                            row[5],
                            0,
                            "[]",
                        )
                    )
            with cursor.copy(
                "COPY trajectories_event (trajectory_id, position, original_id, timestamp,"
                " source, kind, type, cause, text, data) FROM STDIN"
            ) as copy:
                for row in event_rows:
                    copy.write_row(row)
        conn.commit()
        # Planner statistics, as autovacuum keeps them on a live site: right after a bulk COPY
        # the tables look empty, and PostgreSQL sorts whole batches of events (to disk) where
        # the index on (trajectory, position) streams them in order.
        conn.execute("ANALYZE trajectories_trajectory, trajectories_event, datasets_releaseentry")


def _load_feedback() -> int:
    """Two readers' ratings on every agent step of every trajectory (good, but the second
    agent step bad), a first-wrong mark and a shown correction on that step; both readers
    agreed to the licence. Returns how many rows."""
    from apps.accounts.models import User
    from apps.feedback.anchors import is_agent_step
    from apps.feedback.models import FeedbackLicence, FirstWrongMark, StepNote, StepRating
    from apps.trajectories.models import Event

    readers = [User.objects.get_or_create(username=f"bench-reader-{n}")[0] for n in range(2)]
    for reader in readers:
        FeedbackLicence.objects.update_or_create(
            author_key=f"user:{reader.pk}", defaults={"author": reader, "license": "MIT"}
        )
    ratings: list = []
    marks: list = []
    notes: list = []
    total = 0

    def flush() -> None:
        nonlocal total
        for model, rows in ((StepRating, ratings), (FirstWrongMark, marks), (StepNote, notes)):
            model.objects.bulk_create(rows, batch_size=5000)
            total += len(rows)
            rows.clear()

    events = (
        Event.objects.filter(source="agent", kind__in=("action", "message"))
        .order_by("trajectory_id", "position")
        .values_list("trajectory_id", "position", "source", "kind")
    )
    seen: dict[int, int] = {}
    for trajectory_id, position, source, kind in events.iterator(chunk_size=5000):
        if not is_agent_step(Event(source=source, kind=kind)):
            continue
        number = seen.get(trajectory_id, 0)
        seen[trajectory_id] = number + 1
        anchor = {"trajectory_id": trajectory_id, "position": position, "fingerprint": "bench"}
        for reader in readers:
            value = "bad" if number == 1 else "good"
            ratings.append(
                StepRating(**anchor, author=reader, author_key=f"user:{reader.pk}", value=value)
            )
        if number == 1:
            first = readers[0]
            key = f"user:{first.pk}"
            marks.append(FirstWrongMark(**anchor, author=first, author_key=key))
            text = "Run the tests before changing the code."
            notes.append(
                StepNote(
                    **anchor,
                    author=first,
                    author_key=key,
                    kind="correction",
                    mode="message",
                    text=text,
                    state="shown",
                    shown_text=text,
                )
            )
        if len(ratings) >= 20_000:
            flush()
    flush()
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("ANALYZE feedback_steprating, feedback_firstwrongmark, feedback_stepnote")
    return total


# --- the two children ----------------------------------------------------------------------


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_seconds() -> float:
    """CPU time of this process, all its threads (the build compresses in one), user + system:
    less moved by the other work on the machine than wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_build(profile_to: str | None = None) -> dict:
    import django

    django.setup()
    from apps.datasets import services
    from apps.datasets.models import Release

    profiler = None
    if profile_to:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    result = services.release_run(force=True)
    seconds = time.perf_counter() - started
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile_to)
    assert result.action == "published", result.message
    release = Release.objects.get(pk=result.release.pk)
    return {
        "seconds": seconds,
        "rows": release.num_rows,
        "bytes": release.download_size,
        "peak_mb": _peak_rss_mb(),
        "cpu": _cpu_seconds(),
    }


FLOOR_SQL = """
COPY (
  SELECT t.id, t.share_id, t.agent, t.model_name, t.source_format, t.polarity, t.license,
         t.num_events, e.original_id, e.timestamp, e.source, e.type, e.kind, e.text, e.data
  FROM trajectories_trajectory t JOIN trajectories_event e ON e.trajectory_id = t.id
  WHERE t.visibility = 'public' AND t.review_state = 'approved'
  ORDER BY t.id, e.position
) TO STDOUT
"""


def child_floor(folder: str) -> dict:
    """The same rows out of PostgreSQL with one COPY, written straight with pyarrow into the
    same four configs, same writer options and row-group limits."""
    import django

    django.setup()
    import pyarrow as pa
    import pyarrow.parquet as pq
    from django.conf import settings

    from apps.datasets import row_schema
    from apps.datasets.parquet import writer_options

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    writers = {
        config: pq.ParquetWriter(
            str(out / f"{config}.parquet"),
            row_schema.arrow_schema(config),
            **writer_options(config),
        )
        for config in row_schema.CONFIGS
    }
    buffers: dict[str, list[dict]] = {config: [] for config in row_schema.CONFIGS}
    sizes = dict.fromkeys(row_schema.CONFIGS, 0)
    limit_bytes = settings.TRAJHUB_RELEASE_ROW_GROUP_BYTES
    limit_rows = settings.TRAJHUB_RELEASE_ROW_GROUP_ROWS

    def flush(config: str) -> None:
        if buffers[config]:
            table = pa.Table.from_pylist(buffers[config], schema=writers[config].schema)
            writers[config].write_table(table, row_group_size=len(table))
            buffers[config] = []
            sizes[config] = 0

    def emit(head: tuple, steps: list[dict]) -> None:
        _pk, share_id, agent, model, fmt, polarity, license_, num_events = head
        base = {
            "id": share_id,
            "version": "",
            "feedback": polarity,
            "permissions": "public",
            "timestamp": "",
            "trajectory": steps,
            "polarity": polarity,
            "feedback_text": "",
            "agent": agent,
            "model": model,
            "source_format": fmt,
            "num_events": int(num_events),
            "license": license_,
        }
        size = sum(len(s["message"] or "") + len(s["args"] or "") for s in steps)
        rows = {
            "default": {**base, "images": []},
            "no_images": base,
            "openai": {
                "id": share_id,
                "messages": [{"role": s["source"], "content": s["message"]} for s in steps],
                "tools": None,
                "license": license_,
            },
            "sharegpt": {
                "id": share_id,
                "conversations": [{"from": s["source"], "value": s["message"]} for s in steps],
                "system": None,
                "tools": None,
                "license": license_,
            },
        }
        for config, row in rows.items():
            buffers[config].append(row)
            sizes[config] += size
            if sizes[config] >= limit_bytes or len(buffers[config]) >= limit_rows:
                flush(config)

    started = time.perf_counter()
    rows = 0
    with psycopg.connect(DATABASE_URL) as conn, conn.cursor() as cursor:
        with cursor.copy(FLOOR_SQL) as copy:
            current = None
            steps: list[dict] = []
            for record in copy.rows():
                head = record[:8]
                if current is not None and head[0] != current[0]:
                    emit(current, steps)
                    rows += 1
                    steps = []
                current = head
                original_id, timestamp, source, type_, kind, text, data = record[8:]
                steps.append(
                    {
                        "id": int(original_id) if original_id.isdigit() else None,
                        "timestamp": str(timestamp) if timestamp else None,
                        "source": source,
                        "message": text,
                        "action": type_ if kind != "observation" else None,
                        "observation": type_ if kind == "observation" else None,
                        "content": text if kind == "observation" else None,
                        "args": data if kind != "observation" else None,
                        "extras": data if kind == "observation" else None,
                    }
                )
            if current is not None:
                emit(current, steps)
                rows += 1
    for config in row_schema.CONFIGS:
        flush(config)
        writers[config].close()
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in out.glob("*.parquet"))
    return {
        "seconds": seconds,
        "rows": rows,
        "bytes": size,
        "peak_mb": _peak_rss_mb(),
        "cpu": _cpu_seconds(),
    }


def _run_child(kind: str, *extra: str) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=os.environ,
    )
    if done.returncode != 0:
        raise SystemExit(f"{kind} child failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _profile(size: int) -> None:
    """The build once more under cProfile (slower than the timed run; where the time goes)."""
    import pstats

    stats_file = os.path.join(os.environ["TRAJHUB_VAR_DIR"], f"build-{size}.prof")
    with psycopg.connect(DATABASE_URL) as conn:
        conn.execute("TRUNCATE datasets_release RESTART IDENTITY CASCADE")
    _run_child("build", stats_file)
    print(f"--- cProfile of the build of {size} ({stats_file}) ---")
    stats = pstats.Stats(stats_file)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument(
        "--feedback",
        action="store_true",
        help="also give every trajectory step feedback (ratings, a mark, a correction)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile the build of the largest size (printed, by own and cumulative time)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="floor and build this many times each, alternating (the best of each is compared)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "build":
        print(json.dumps(child_build(args.rest[0] if args.rest else None)))
        return 0
    if args.child == "floor":
        print(json.dumps(child_floor(args.rest[0])))
        return 0

    _ensure_database()
    _django()
    results = []
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        print(f"loading {size} trajectories of ~{args.events} events ...", flush=True)
        _load(size, args.events)
        if args.feedback:
            print(f"  + {_load_feedback()} rows of step feedback", flush=True)
        floors, builds = [], []
        # Floor and build alternate: each pair ran at about the same load (printed with it).
        for attempt in range(1, args.repeat + 1):
            floor = _run_child(
                "floor", tempfile.mkdtemp(prefix="floor-", dir=os.environ["TRAJHUB_VAR_DIR"])
            )
            with psycopg.connect(DATABASE_URL) as conn:
                conn.execute("TRUNCATE datasets_release RESTART IDENTITY CASCADE")
            build = _run_child("build")
            assert build["rows"] == floor["rows"] == size, (build, floor)
            floors.append(floor)
            builds.append(build)
            load = "/".join(f"{x:.1f}" for x in os.getloadavg())
            print(
                f"{size:>6} #{attempt}: build {build['seconds']:.2f} s "
                f"(cpu {build['cpu']:.1f} s, peak {build['peak_mb']:.0f} MB) | floor "
                f"{floor['seconds']:.2f} s (cpu {floor['cpu']:.1f} s, peak "
                f"{floor['peak_mb']:.0f} MB) | {floor['seconds'] / build['seconds']:.0%} "
                f"| load {load}",
                flush=True,
            )
        if args.profile and size == max(sizes):
            _profile(size)
        # The best of each: what the other work on the machine took least from.
        build = min(builds, key=lambda run: run["seconds"])
        floor = min(floors, key=lambda run: run["seconds"])
        build["peak_mb"] = max(run["peak_mb"] for run in builds)
        ratio = (size / build["seconds"]) / (size / floor["seconds"])
        cpu_ratio = min(run["cpu"] for run in floors) / min(run["cpu"] for run in builds)
        results.append((size, build, floor, ratio))
        print(
            f"{size:>6} trajectories: build {build['seconds']:.2f} s "
            f"({size / build['seconds']:.0f}/s, {build['bytes'] / 1e6:.1f} MB, "
            f"peak {build['peak_mb']:.0f} MB) | floor {floor['seconds']:.2f} s "
            f"({size / floor['seconds']:.0f}/s, {floor['bytes'] / 1e6:.1f} MB, "
            f"peak {floor['peak_mb']:.0f} MB) | throughput {ratio:.0%} of the floor "
            f"(target >= {TARGET_RATIO:.0%}: {'PASS' if ratio >= TARGET_RATIO else 'FAIL'}; "
            f"best of {args.repeat}) | CPU seconds, floor / build: {cpu_ratio:.0%}",
            flush=True,
        )
    ok = all(ratio >= TARGET_RATIO for *_, ratio in results)
    if len(results) >= 2:
        small, large = results[0][1]["peak_mb"], results[-1][1]["peak_mb"]
        flat = large <= small * FLAT
        ok = ok and flat
        print(
            f"peak memory: {small:.0f} MB at {results[0][0]}, {large:.0f} MB at "
            f"{results[-1][0]} (target: flat, within {FLAT - 1:.0%}: {'PASS' if flat else 'FAIL'})"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
