"""The trajectory page of a 2,000-event trajectory: server time, first HTML size, SQL queries,
against floors measured in the same run.

Targets (DESIGN.md): server time <= 150 ms, first HTML <= 300 KB, a fixed number of queries;
/compare/ of it and a second 2,000-event trajectory: server time <= 300 ms, first HTML <= 400 KB.

It stores one generated OpenHands session (the demo generator: 2,000 events, browser screenshots
and set-of-marks images, plots, command output grown to long logs) through the real ingest
service into its own PostgreSQL database (trajhub_bench_page by default; created and migrated if
missing), makes it public, and renders /t/<id>/ through Django's test client (the whole stack:
middleware, session, CSP, templates) as an anonymous visitor and as the signed-in owner.

Floors, same run, same trajectory:
  sql     the page's own SQL statements (captured through Django) run with psycopg on a warm
          connection: what the database alone costs;
  bare    the same first-chunk rows fetched and put through a bare Django template (one <li>
          per event with its escaped text): what any server-rendered list of these rows costs.

    .venv/bin/python bench/bench_page.py [--events 2000] [--runs 30] [--screenshots 100]

The same trajectory with feedback on every step (bench/page_feedback.py): the page, the
viewer's feedback summary and the first chunk's notes, against the page without feedback.

Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/trajhub_bench_page).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench_page"
)
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-bench-page-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
# The eager scan would OCR each of the 100+ screenshots (seconds each under load) before the
# page can be measured; the page's figures do not depend on it.
os.environ.setdefault("TRAJHUB_OCR", "false")
(Path(os.environ["TRAJHUB_VAR_DIR"]) / "static").mkdir(parents=True, exist_ok=True)

import psycopg  # noqa: E402

TARGET_MS = 150.0
TARGET_BYTES = 300_000
COMPARE_TARGET_MS = 300.0  # /compare/ of two 2,000-event trajectories (DESIGN.md)
COMPARE_TARGET_BYTES = 400_000
TITLE = "bench_page: 2,000-event trajectory"


def ensure_database() -> None:
    parts = urlsplit(DATABASE_URL)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            print(f"creating database {name}")
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def make_trajectory(
    events: int, screenshots: int, plots: int, target_mb: float, *, title: str = "", seed: str = ""
):
    from django.contrib.auth import get_user_model

    from apps.demo.generator import generate_session, share_payload
    from apps.trajectories.models import Trajectory
    from apps.trajectories.services import ShareOptions, trajectory_delete, trajectory_ingest

    title = title or TITLE
    for old in Trajectory.objects.filter(title=title):
        trajectory_delete(trajectory=old, reason="bench")
    owner, _ = get_user_model().objects.get_or_create(username="bench-page-owner")
    session = generate_session(
        random.Random(seed or "bench-page"),
        events=events,
        screenshots=screenshots,
        plots=plots,
        target_bytes=int(target_mb * 1024 * 1024),
    )
    payload = share_payload(session, permissions="public")
    started = time.perf_counter()
    result = trajectory_ingest(
        data=payload,
        user=owner,
        options=ShareOptions(visibility="public", license_agreed=True, title=title),
    )
    trajectory = result.stored[0].trajectory
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    trajectory.refresh_from_db()
    print(
        f"stored {trajectory.num_events:,} events, {len(payload) / 1e6:.1f} MB payload, "
        f"{trajectory.image_links.count()} images in {time.perf_counter() - started:.1f} s"
    )
    return trajectory, owner


def describe_events(trajectory) -> None:
    from apps.trajectories.models import Event

    long_outputs = 0
    for text in Event.objects.filter(trajectory=trajectory, kind="observation").values_list(
        "text", flat=True
    ):
        if text.count("\n") > 40:
            long_outputs += 1
    print(f"observations longer than 40 lines: {long_outputs:,}")


def timed(function, runs: int) -> tuple[list[float], object]:
    samples = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        samples.append((time.perf_counter() - started) * 1000)
    return samples, result


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def line(name: str, samples: list[float], extra: str = "") -> None:
    print(
        f"{name:<34} median {statistics.median(samples):7.1f} ms   p95 {p95(samples):7.1f} ms"
        f"   min {min(samples):6.1f} ms {extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--screenshots", type=int, default=100)
    parser.add_argument("--plots", type=int, default=20)
    parser.add_argument(
        "--mb", type=float, default=12.0, help="grow command output to this payload size"
    )
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--many-findings",
        type=int,
        default=20_000,
        metavar="OUTPUTS",
        help="also time issue 7's case: OUTPUTS outputs of 15 distinct emails each (0: skip)",
    )
    parser.add_argument("--many-runs", type=int, default=5, help="runs of each many-findings URL")
    parser.add_argument(
        "--only-many-findings", action="store_true", help="skip the 2,000-event page"
    )
    parser.add_argument(
        "--no-feedback", action="store_true", help="skip the page with feedback on every step"
    )
    parser.add_argument(
        "--lengths",
        default="",
        metavar="N,N,...",
        help="instead: the page, fragment, timeline and find at each length (issue 24), e.g. "
        "200,2000,20000,50000; trajectories are kept between runs and reused",
    )
    parser.add_argument(
        "--compare-length",
        type=int,
        default=0,
        help="with --lengths: also /compare/ of two trajectories of this length, cold",
    )
    args = parser.parse_args()
    if args.lengths:
        ensure_database()
        setup_django()
        return bench_lengths(args)
    if args.only_many_findings:
        ensure_database()
        setup_django()
        from django.test import Client

        bench_many_findings(args, Client, None)
        return 0

    ensure_database()
    setup_django()
    from django.db import connection
    from django.template import engines
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.trajectories.models import Event

    trajectory, owner = make_trajectory(args.events, args.screenshots, args.plots, args.mb)
    describe_events(trajectory)
    url = trajectory.get_absolute_url()
    visitor = Client()
    signed_in = Client()
    signed_in.force_login(owner)

    first_started = time.perf_counter()
    response = visitor.get(url)
    first_ms = (time.perf_counter() - first_started) * 1000
    assert response.status_code == 200, response.status_code
    html_bytes = len(response.content)
    cards = response.content.count(b'<li class="ev ')

    with CaptureQueriesContext(connection) as captured:
        visitor.get(url)
    page_sql = [query["sql"] for query in captured.captured_queries]

    samples_visitor, _ = timed(lambda: visitor.get(url), args.runs)
    samples_owner, _ = timed(lambda: signed_in.get(url), args.runs)
    samples_fragment, fragment = timed(lambda: visitor.get(f"{url}events?after=1000"), args.runs)
    samples_find, _ = timed(lambda: visitor.get(f"{url}find?q=contacts"), args.runs)
    with CaptureQueriesContext(connection) as captured_owner:
        signed_in.get(url)

    # Floor 1: the page's SQL alone, straight through psycopg on a warm connection.
    with psycopg.connect(DATABASE_URL) as conn:

        def run_sql():
            for sql in page_sql:
                conn.execute(sql).fetchall()

        run_sql()
        samples_sql, _ = timed(run_sql, args.runs)

    # Floor 2: the same first-chunk rows through a bare template, one escaped <li> per event.
    bare = engines["django"].from_string(
        '<ol>{% for e in events %}<li id="step-{{ e.position }}">{{ e.type }} {{ e.text|truncatechars:2000 }}</li>{% endfor %}</ol>'
    )

    def bare_page():
        rows = list(
            Event.objects.filter(trajectory=trajectory, position__gte=0).order_by("position")[
                :cards
            ]
        )
        return bare.render({"events": rows})

    bare_page()
    samples_bare, _ = timed(bare_page, args.runs)

    median = statistics.median(samples_visitor)
    print()
    print(
        f"trajectory: {trajectory.num_events:,} events; first HTML {html_bytes / 1000:.1f} KB, {cards} cards server-rendered"
    )
    print(f"first request (cold lexers/templates): {first_ms:.1f} ms")
    line("page, anonymous visitor", samples_visitor, f"  {len(page_sql)} queries")
    line(
        "page, signed-in owner", samples_owner, f"  {len(captured_owner.captured_queries)} queries"
    )
    line("fragment events?after=1000", samples_fragment, f"  {len(fragment.content) / 1000:.1f} KB")
    line("find?q=contacts", samples_find)
    line("floor: the page's SQL (psycopg)", samples_sql)
    line("floor: bare template, same rows", samples_bare)
    print(
        f"page / SQL floor: {median / statistics.median(samples_sql):.1f}x   page / bare floor: {median / statistics.median(samples_bare):.1f}x"
    )
    ok_time = p95(samples_visitor) <= TARGET_MS and p95(samples_owner) <= TARGET_MS
    ok_size = html_bytes <= TARGET_BYTES
    print()
    print(f"server time p95 <= {TARGET_MS:.0f} ms: {'PASS' if ok_time else 'FAIL'}")
    print(
        f"first HTML <= {TARGET_BYTES // 1000} KB: {'PASS' if ok_size else 'FAIL'} ({html_bytes:,} bytes)"
    )
    print(
        f"queries: {len(page_sql)} (visitor), {len(captured_owner.captured_queries)} (signed in); pinned in tests/trajectories/test_viewer_views.py"
    )
    ok_compare = bench_compare(args, trajectory, Client)
    ok_feedback = True
    if not args.no_feedback:
        from bench.page_feedback import bench_feedback

        ok_feedback = bench_feedback(
            trajectory,
            Client,
            runs=args.runs,
            timed=timed,
            line=line,
            p95=p95,
            target_ms=TARGET_MS,
        )
    if args.many_findings:
        bench_many_findings(
            args,
            Client,
            {
                "page": median,
                "events?after=1000": statistics.median(samples_fragment),
                "find?q=contacts": statistics.median(samples_find),
            },
        )
    return 0 if ok_time and ok_size and ok_compare and ok_feedback else 1


def bench_many_findings(args, client_class, normal: dict[str, float] | None) -> None:
    """Issue 7's case: a public share of OUTPUTS outputs with 15 distinct emails each (300,000
    redactions at 20,000), held by the scan past TRAJHUB_SCAN_MAX_DISTINCT, then approved. Its
    page, fragment, find and the list pages, timed next to the 2,000-event page of this run.
    (On main before issue 7's linear redaction its page took 47-61 s.)"""
    from apps.moderation.services.scan import trajectory_scan
    from apps.trajectories.models import Event, Trajectory
    from apps.trajectories.services import trajectory_delete

    title = "bench_page: many findings"
    for old in Trajectory.objects.filter(title=title):
        trajectory_delete(trajectory=old, reason="bench")
    outputs = args.many_findings
    trajectory = Trajectory.objects.create(
        title=title,
        source_format="openhands_v0",
        visibility="public",
        review_state="pending",
        license="MIT",
        num_events=outputs,
    )
    started = time.perf_counter()
    Event.objects.bulk_create(
        (
            Event(
                trajectory=trajectory,
                position=index,
                source="environment",
                kind="observation",
                type="run",
                text=f"$ grep -r @ contacts/{index}.txt\n"
                + " ".join(f"user{index}.{j}.leak@gmail.com" for j in range(15)),
                data={},
            )
            for index in range(outputs)
        ),
        batch_size=2000,
    )
    result = trajectory_scan(trajectory=trajectory)
    scan_s = time.perf_counter() - started
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")  # a moderator's
    trajectory.refresh_from_db()
    print()
    print(
        f"many findings: {outputs:,} outputs, {len(trajectory.redactions):,} redactions, "
        f"scan said {result.review_state!r}; stored and scanned in {scan_s:.1f} s"
    )
    visitor = client_class()
    url = trajectory.get_absolute_url()
    lists = {}
    for path in ("/browse/", "/", "/api/v1/trajectories"):
        # The lists without it first (made private for the moment), then with it listed.
        Trajectory.objects.filter(pk=trajectory.pk).update(visibility="private")
        visitor.get(path)
        lists[path], _ = timed(lambda path=path: visitor.get(path), args.many_runs)
        Trajectory.objects.filter(pk=trajectory.pk).update(visibility="public")
    for name, path in (
        ("page", url),
        ("events?after=1000", f"{url}events?after=1000"),
        ("find?q=contacts", f"{url}find?q=contacts"),
        ("/browse/", "/browse/"),
        ("home", "/"),
        ("API list", "/api/v1/trajectories"),
    ):
        samples, response = timed(lambda path=path: visitor.get(path), args.many_runs)
        assert response.status_code == 200, (path, response.status_code)
        assert b"leak@gmail.com" not in response.content, path
        floor = (normal or {}).get(name)
        if path in lists:
            floor = statistics.median(lists[path])
            name += " (floor: the same list without it)"
        ratio = f"  {statistics.median(samples) / floor:.1f}x the floor" if floor else ""
        line(f"many findings: {name}", samples, ratio)
        if floor and name in (normal or {}):
            print(f"    floor: the 2,000-event trajectory's {name}, this run: {floor:.1f} ms")


def bench_compare(args, trajectory, client_class) -> bool:
    """/compare/ of this trajectory and a second one of the same length (another seed)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    other, _ = make_trajectory(
        args.events, 0, 0, args.mb / 2, title=TITLE + " (B)", seed="bench-page-b"
    )
    url = f"/compare/?a={trajectory.share_id}&b={other.share_id}"
    visitor = client_class()
    response = visitor.get(url)
    assert response.status_code == 200, response.status_code
    html_bytes = len(response.content)
    with CaptureQueriesContext(connection) as captured:
        visitor.get(url)
    sql = [query["sql"] for query in captured.captured_queries]
    samples, _ = timed(lambda: visitor.get(url), args.runs)
    rows_url = f"/compare/rows?a={trajectory.share_id}&b={other.share_id}&from=200"
    fragment_samples, fragment = timed(lambda: visitor.get(rows_url), args.runs)

    def cold():
        # As after either side was stored again: steps read from the events, aligned afresh.
        from django.core.cache import cache

        from apps.trajectories.selectors.compare import align_key, compare_steps_forget

        compare_steps_forget(trajectory.share_id)
        compare_steps_forget(other.share_id)
        cache.delete(align_key(trajectory, other))
        return visitor.get(url)

    cold_samples, _ = timed(cold, 5)
    with psycopg.connect(DATABASE_URL) as conn:

        def run_sql():
            for statement in sql:
                conn.execute(statement).fetchall()

        run_sql()
        floor, _ = timed(run_sql, args.runs)
    print()
    print(
        f"compare: {trajectory.num_events:,} and {other.num_events:,} events; "
        f"first HTML {html_bytes / 1000:.1f} KB, {response.content.count(b'<tr class=')} rows shown"
    )
    line("compare page, anonymous visitor", samples, f"  {len(sql)} queries")
    line(
        "compare rows fragment from=200",
        fragment_samples,
        f"  {len(fragment.content) / 1000:.1f} KB",
    )
    line("compare page, cold (steps, alignment)", cold_samples)
    line("floor: the compare page's SQL (psycopg)", floor)
    print(f"compare / SQL floor: {statistics.median(samples) / statistics.median(floor):.1f}x")
    ok_time = p95(samples) <= COMPARE_TARGET_MS
    ok_size = html_bytes <= COMPARE_TARGET_BYTES
    print(f"compare server time p95 <= {COMPARE_TARGET_MS:.0f} ms: {'PASS' if ok_time else 'FAIL'}")
    print(
        f"compare first HTML <= {COMPARE_TARGET_BYTES // 1000} KB: "
        f"{'PASS' if ok_size else 'FAIL'} ({html_bytes:,} bytes)"
    )
    return ok_time and ok_size


def reused_trajectory(events: int, *, seed: str, title: str):
    """A public generated trajectory of `events` events (no images, the generator's own output
    sizes), stored through ingest once and reused by later runs (a 50,000-event one takes
    minutes to generate and store)."""
    from apps.trajectories.models import Trajectory

    found = (
        Trajectory.objects.filter(title=title, num_events=events, review_state="approved")
        .order_by("-id")
        .first()
    )
    if found is not None:
        from apps.trajectories.services import trajectory_redaction_index_refresh

        # A no-op when current; makes what a newer schema adds (the find index).
        started = time.perf_counter()
        trajectory_redaction_index_refresh(trajectory_id=found.pk)
        took = time.perf_counter() - started
        if took > 0.5:
            print(f"{title}: index made again in {took:.1f} s")
        found.refresh_from_db()
        return found
    trajectory, _ = make_trajectory(events, 0, 0, 0, title=title, seed=seed)
    return trajectory


def bench_lengths(args) -> int:
    """Issue 24: the same views at every length, in one run, each next to the floor of its own
    SQL (psycopg, warm connection). Target: page at the longest <= 1.5x the page at the
    shortest."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    lengths = [int(n) for n in args.lengths.split(",") if n.strip()]
    made = {
        n: reused_trajectory(n, seed=f"bench-lengths-{n}", title=f"bench_page: {n:,} events")
        for n in lengths
    }
    visitor = Client()
    results: dict[int, dict[str, list[float]]] = {n: {} for n in lengths}
    plans = {}
    for n, trajectory in made.items():
        base = trajectory.get_absolute_url()
        urls = {
            "page": base,
            "events?after=100": f"{base}events?after=100",
            "timeline": f"{base}timeline",
            "find?q=contacts": f"{base}find?q=contacts",
            "find?q=error": f"{base}find?q=error",
            "find?q=cargo test": f"{base}find?q=cargo%20test",
            # Two words on nearly every line of every `ls -la`: the most occurrences to place.
            "find?q=openhands openhands": f"{base}find?q=openhands%20openhands",
            # A phrase of four words with punctuation, in every read and edit.
            "find?q=result of running `cat": f"{base}find?q=result%20of%20running%20%60cat",
            # As the viewer asks at each keystroke (a page of 500 from the reader's place,
            # with the cards around the first match): one letter, matching every step, and a
            # prefix of the phrase above.
            "viewer find e": f"{base}find?q=e&limit=500&from=1&cards=1",
            "viewer find result of r": f"{base}find?q=result%20of%20r&limit=500&from=1&cards=1",
        }
        for url in urls.values():
            assert visitor.get(url).status_code == 200, url
        with CaptureQueriesContext(connection) as captured:
            visitor.get(base)
        plans[n] = (urls, [query["sql"] for query in captured.captured_queries])
        results[n]["queries"] = [float(len(plans[n][1]))]
    with psycopg.connect(DATABASE_URL) as conn:
        # Round robin over lengths and views, request by request, so that a change of load
        # moves every figure alike.
        for _ in range(args.runs):
            for n in lengths:
                urls, page_sql = plans[n]
                row = results[n]
                for name, url in urls.items():
                    started = time.perf_counter()
                    visitor.get(url)
                    row.setdefault(name, []).append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                for sql in page_sql:
                    conn.execute(sql).fetchall()
                row.setdefault("floor: page SQL", []).append((time.perf_counter() - started) * 1000)
    names = [name for name in results[lengths[0]] if name != "queries"]
    print()
    print(f"{'median ms (p95)':<30}" + "".join(f"{n:>20,}" for n in lengths))
    for name in names:
        cells = "".join(
            f"{statistics.median(results[n][name]):>12.1f} ({p95(results[n][name]):5.1f})"
            for n in lengths
        )
        print(f"{name:<30}{cells}")
    print(
        f"{'page queries':<30}" + "".join(f"{int(results[n]['queries'][0]):>20}" for n in lengths)
    )
    shortest, longest = lengths[0], lengths[-1]
    ratio = statistics.median(results[longest]["page"]) / statistics.median(
        results[shortest]["page"]
    )
    floor_ratio = statistics.median(results[longest]["floor: page SQL"]) / statistics.median(
        results[shortest]["floor: page SQL"]
    )
    ok = ratio <= 1.5
    print(
        f"page at {longest:,} / page at {shortest:,}: {ratio:.2f}x (its SQL floor: "
        f"{floor_ratio:.2f}x); target <= 1.5x: {'PASS' if ok else 'FAIL'}"
    )
    if args.compare_length:
        ok = bench_compare_cold(args, Client) and ok
    return 0 if ok else 1


def bench_compare_cold(args, client_class) -> bool:
    """/compare/ of two generated trajectories of --compare-length events, cold (the steps
    read and aligned afresh), next to the page's SQL floor."""
    from django.core.cache import cache

    from apps.trajectories.selectors.compare import align_key, compare_steps_forget

    n = args.compare_length
    a = reused_trajectory(n, seed=f"bench-lengths-{n}", title=f"bench_page: {n:,} events")
    b = reused_trajectory(n, seed=f"bench-lengths-{n}-b", title=f"bench_page: {n:,} events (B)")
    url = f"/compare/?a={a.share_id}&b={b.share_id}"
    visitor = client_class()
    assert visitor.get(url).status_code == 200

    def cold():
        compare_steps_forget(a.share_id)
        compare_steps_forget(b.share_id)
        cache.delete(align_key(a, b))
        return visitor.get(url)

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        cold()
    cold_sql = [query["sql"] for query in captured.captured_queries]
    runs = max(3, args.runs // 4)
    cold_samples, response = timed(cold, runs)
    warm_samples, _ = timed(lambda: visitor.get(url), runs)
    with psycopg.connect(DATABASE_URL) as conn:

        def run_sql():
            for statement in cold_sql:
                conn.execute(statement).fetchall()

        run_sql()
        floor, _ = timed(run_sql, runs)
    print()
    line(f"compare {n:,} x {n:,}, cold", cold_samples, f"  {len(response.content) / 1000:.0f} KB")
    line(f"compare {n:,} x {n:,}, warm", warm_samples)
    line("floor: the cold page's SQL (psycopg)", floor, f"  {len(cold_sql)} queries")
    ok = statistics.median(cold_samples) <= COMPARE_TARGET_MS
    print(f"cold compare median <= {COMPARE_TARGET_MS:.0f} ms: {'PASS' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
