"""List and search over 100,000 public trajectories: p95 of the API (and the browse page) against
the floor of the same SQL run straight through psycopg, in the same run.

Targets (DESIGN.md): GET /api/v1/trajectories p95 <= 50 ms; search (?q=...) p95 <= 150 ms,
ranked by relevance (the default with q: weighted ts_rank over the candidates of
apps/trajectories/selectors/search.py) and by the other orderings.
The sorts and filters by readers' signal (issue 23: ?ordering=-stars, ?ordering=-corrections,
?has_corrections=1, ?flagged=1, ?flagged_at=<decile>) are timed on the API and on /browse/,
both held to the list target.

It uses its own PostgreSQL database (trajhub_bench by default; created if missing, migrated),
loads generated trajectories of about 20 events each with COPY (psycopg3 cursor.copy, not one
INSERT per row) unless the right number is already there, starts a real gunicorn process on it,
and times HTTP requests to it. The floor is the exact SQL each page ran (captured through
Django), executed with psycopg on a warm connection: what the database alone costs.

    .venv/bin/python bench/bench_list.py [--count 100000] [--events 20] [--requests 200] [--reload]
        [--signals-only] [--search-only]

Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/trajhub_bench),
REDIS_URL (optional: the cache the pages use; without it a local file cache).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench"
)
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-bench-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")
# WhiteNoise warns about a missing STATIC_ROOT; the benchmark serves no static files.
(Path(os.environ["TRAJHUB_VAR_DIR"]) / "static").mkdir(parents=True, exist_ok=True)

import psycopg  # noqa: E402

TARGETS_MS = {"list": 50.0, "search": 150.0, "stats": 100.0}
CONCURRENT = 4  # readers at once after a stats cache drop
EXTRA_NOT_PUBLIC = 0.05  # private / held / pending rows mixed in, so visibility filters for real

# --- Generated content ---------------------------------------------------------------------------

VERBS = [
    "Fix",
    "Add",
    "Refactor",
    "Speed up",
    "Document",
    "Test",
    "Remove",
    "Upgrade",
    "Debug",
    "Implement",
    "Migrate",
    "Rename",
    "Split",
    "Cache",
    "Validate",
]
THINGS = [
    "pagination",
    "login flow",
    "CSV export",
    "date parsing",
    "retry logic",
    "rate limiter",
    "search index",
    "upload form",
    "email templates",
    "webhook handler",
    "CLI flags",
    "config loader",
    "timezone handling",
    "unit tests",
    "Dockerfile",
    "CI pipeline",
    "database migration",
    "JSON schema",
    "error messages",
    "logging",
    "cache layer",
    "payment callback",
    "image resizing",
    "i18n strings",
    "API client",
    "websocket reconnect",
]
PROJECTS = [
    "acme-api",
    "webshop-frontend",
    "ledger-service",
    "tiny-http",
    "md2site",
    "issue-tracker",
    "weather-notebooks",
    "django-polls",
    "marshmallow",
    "requests-lite",
    "astro-blog",
    "kube-operator",
    "data-pipeline",
    "chat-server",
    "pdf-tools",
]
AGENTS = ["CodeActAgent", "BrowsingAgent", "SWE-agent", "LocAgent", "VisualBrowsingAgent"]
MODELS = [
    "claude-sonnet-4-20250514",
    "gpt-4o-2024-08-06",
    "o3-mini-2025-01-31",
    "gemini-2.5-pro",
    "deepseek-chat",
    "Qwen/Qwen2.5-Coder-32B-Instruct",
    "gpt-4.1-2025-04-14",
]
FORMATS = [
    "openhands_share",
    "openhands_v0",
    "openhands_eval",
    "sweagent",
    "sharegpt",
    "openai_messages",
]
MODULES = [
    f"{a}_{b}"
    for a in (
        "user",
        "order",
        "invoice",
        "report",
        "session",
        "token",
        "cart",
        "search",
        "upload",
        "export",
        "audit",
        "queue",
        "mail",
        "page",
        "price",
        "stock",
        "ticket",
        "event",
        "metric",
        "config",
    )
    for b in (
        "views",
        "models",
        "utils",
        "service",
        "tasks",
        "api",
        "forms",
        "parser",
        "client",
        "cache",
        "schema",
        "helpers",
        "store",
        "handlers",
        "jobs",
    )
]
ERRORS = [
    "AssertionError",
    "KeyError",
    "TypeError",
    "ValueError",
    "IntegrityError",
    "TimeoutError",
    "ImportError",
    "AttributeError",
    "ZeroDivisionError",
    "PermissionError",
]


def event_texts(module: str, ticket: int, length: int) -> list[tuple[str, str, str, str]]:
    """`length` (source, kind, type, text) steps of a plausible coding session (at most 20)."""
    error = ERRORS[ticket % len(ERRORS)]
    test = f"tests/test_{module}.py"
    steps = [
        (
            "user",
            "message",
            "message",
            f"Please fix issue #{ticket}: {module} raises {error} when the input is empty.",
        ),
        ("agent", "action", "run", f"ls -la src/ && grep -rn '{module}' src/ | head -20"),
        (
            "environment",
            "observation",
            "run",
            f"src/{module}.py:41: def handle(request):\nsrc/{module}.py:88:     return render(data)",
        ),
        ("agent", "action", "read", f"src/{module}.py"),
        (
            "environment",
            "observation",
            "read",
            f"def handle(request):\n    data = parse(request.body)\n    return data['items'][0]  # {module}",
        ),
        (
            "agent",
            "action",
            "think",
            f"The {error} comes from indexing an empty list in {module}; guard it and add a test.",
        ),
        ("agent", "action", "run", f"python -m pytest {test} -q"),
        (
            "environment",
            "observation",
            "run",
            f"F.. [100%]\nFAILED {test}::test_empty_input - {error}\n1 failed, 2 passed in 0.41s",
        ),
        (
            "agent",
            "action",
            "edit",
            f"--- a/src/{module}.py\n+++ b/src/{module}.py\n-    return data['items'][0]\n"
            f"+    items = data.get('items') or []\n+    return items[0] if items else None",
        ),
        ("environment", "observation", "edit", f"The file src/{module}.py has been edited."),
        (
            "agent",
            "action",
            "edit",
            f"def test_empty_input():\n    assert handle(make_request(b'{{}}')) is None  # #{ticket}",
        ),
        ("environment", "observation", "edit", f"The file {test} has been edited."),
        ("agent", "action", "run", f"python -m pytest {test} -q"),
        ("environment", "observation", "run", "... [100%]\n3 passed in 0.38s"),
        ("agent", "action", "run", "git diff --stat && ruff check src/"),
        (
            "environment",
            "observation",
            "run",
            f" src/{module}.py | 3 ++-\n {test} | 4 ++++\n 2 files changed\nAll checks passed!",
        ),
        ("agent", "action", "browse", f"https://docs.example.org/{module}#empty-input"),
        (
            "environment",
            "observation",
            "browse",
            f"Handling empty input in {module}: return None rather than raising {error}.",
        ),
        (
            "agent",
            "action",
            "finish",
            f"Fixed #{ticket}: {module} now returns None for empty input; added a regression test.",
        ),
        ("user", "message", "message", "Thanks, looks good."),
    ]
    return steps[:length]


# --- Database --------------------------------------------------------------------------------------


def admin_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    return urlunsplit(parts._replace(path="/postgres")), name


def ensure_database() -> None:
    url, name = admin_url(DATABASE_URL)
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            print(f"creating database {name}")
            conn.execute(f'CREATE DATABASE "{name}"')


def migrate() -> None:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def not_null_columns(conn, table: str) -> dict[str, str]:
    """NOT NULL columns without a database default, and their types (Django sets defaults in
    Python, so COPY must give every one of them a value)."""
    rows = conn.execute(
        """SELECT column_name, data_type FROM information_schema.columns
           WHERE table_name = %s AND is_nullable = 'NO' AND column_default IS NULL""",
        [table],
    ).fetchall()
    return dict(rows)


def quoted(columns: list[str]) -> list[str]:
    return [f'"{column}"' for column in columns]


def zero_of(data_type: str):
    if data_type in ("jsonb", "json"):
        return "{}"
    if data_type in ("integer", "bigint", "smallint", "double precision", "numeric", "real"):
        return 0
    if data_type == "boolean":
        return False
    return ""


OUTCOME_ROWS = [
    {"outcome": "resolved", "outcome_score": 1.0, "outcome_source": "openhands_eval"},
    {"outcome": "unresolved", "outcome_score": 0.0, "outcome_source": "openhands_eval"},
    {"outcome": "resolved", "outcome_score": None, "outcome_source": "owner"},
    {"outcome": "unknown", "outcome_score": None, "outcome_source": ""},
    {"outcome": "unknown", "outcome_score": None, "outcome_source": ""},
]


def generated_trajectories(
    rng: random.Random, count: int, total: int, events_per: int, now: datetime
) -> Iterator[tuple[dict[str, Any], tuple[int, str, int, int, datetime]]]:
    """Each generated trajectory row (its columns' values) and what regenerates its events
    (id, module, ticket, length, created): the first `count` public, the rest not."""
    from apps.trajectories.services.search import build_search_text

    for pk in range(1, total + 1):
        public = pk <= count
        module = rng.choice(MODULES)
        ticket = rng.randint(1000, 99999)
        length = max(4, min(events_per, round(rng.gauss(events_per, 3))))
        steps = event_texts(module, ticket, length)
        title = f"{rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PROJECTS)}"
        created = now - timedelta(seconds=rng.randint(0, 365 * 24 * 3600))
        # As the scan's refresh builds it: the title, the task (the first step, the user's
        # message), then the other steps (services/search.py).
        search_text = build_search_text(title, steps[0][3], (text for *_, text in steps[1:]), None)
        values = {
            "id": pk,
            "share_id": rng.getrandbits(256).to_bytes(32, "big").hex(),
            "title": title,
            "source_format": rng.choice(FORMATS),
            "agent": rng.choice(AGENTS),
            "model_name": rng.choice(MODELS),
            "agent_version": f"0.{rng.randint(30, 60)}.{rng.randint(0, 3)}",
            "polarity": rng.choice(["positive", "negative", "none", "none"]),
            "feedback_text": rng.choice(
                [
                    "",
                    "",
                    "Worked first time.",
                    "Went in circles before finding the bug.",
                ]
            ),
            "visibility": "public" if public else rng.choice(["private", "public"]),
            "review_state": "approved"
            if public
            else rng.choice(["pending", "held", "rejected", "hidden"]),
            "license": "MIT" if public else "",
            "num_events": len(steps),
            "num_bytes": len(search_text) * 3,
            "search_text": search_text,
            "created_at": created,
            "updated_at": created,
            "published_at": created if public else None,
            # The stored outcome (issue 23), from the id rather than the generator, so that
            # the rest of each row is what it was before outcomes: about 3 in 5 runs known.
            **OUTCOME_ROWS[(pk * 7919) % len(OUTCOME_ROWS)],
        }
        yield values, (pk, module, ticket, len(steps), created)


def load(count: int, events_per: int, seed: int = 7) -> None:
    """Empty the trajectory tables and load `count` public trajectories (+5 % not public)."""
    rng = random.Random(seed)
    total = count + int(count * EXTRA_NOT_PUBLIC)
    now = datetime.now(UTC)
    with psycopg.connect(DATABASE_URL) as conn:
        conn.execute(
            "TRUNCATE trajectories_event, trajectories_trajectoryimage, "
            "trajectories_trajectory RESTART IDENTITY CASCADE"
        )
        # The columns are the generated row's own keys (no list of them kept beside it), plus
        # the NOT NULL ones it does not set, which get their type's zero.
        rows = generated_trajectories(rng, count, total, events_per, now)
        first = next(rows)
        known = set(first[0])
        extra = {
            k: v
            for k, v in not_null_columns(conn, "trajectories_trajectory").items()
            if k not in known
        }
        columns = sorted(known) + sorted(extra)
        event_columns = [
            "trajectory_id",
            "position",
            "original_id",
            "timestamp",
            "source",
            "kind",
            "type",
            "cause",
            "text",
            "data",
        ]
        event_extra = {
            k: v
            for k, v in not_null_columns(conn, "trajectories_event").items()
            if k not in event_columns and k != "id"
        }
        event_columns += sorted(event_extra)
        started = time.perf_counter()
        events_total = 0
        # Events are written in a second COPY (one COPY at a time per connection, and the
        # foreign key needs the trajectories first); keep only what regenerates them.
        plan: list[tuple[int, str, int, int, datetime]] = []
        with conn.cursor() as cur:
            with cur.copy(
                f"COPY trajectories_trajectory ({', '.join(quoted(columns))}) FROM STDIN"
            ) as copy_t:
                for values, planned in itertools.chain([first], rows):
                    values.update({k: zero_of(t) for k, t in extra.items()})
                    copy_t.write_row([values[c] for c in columns])
                    plan.append(planned)
            print(f"  trajectories copied ({total:,}) in {time.perf_counter() - started:.1f}s")
            started_events = time.perf_counter()
            extra_values = [zero_of(t) for _, t in sorted(event_extra.items())]
            with cur.copy(
                f"COPY trajectories_event ({', '.join(quoted(event_columns))}) FROM STDIN"
            ) as copy_e:
                for pk, module, ticket, length, created in plan:
                    for position, (source, kind, type_, text) in enumerate(
                        event_texts(module, ticket, length)
                    ):
                        copy_e.write_row(
                            [
                                pk,
                                position,
                                str(position + 1),
                                created + timedelta(seconds=position),
                                source,
                                kind,
                                type_,
                                str(position) if kind == "observation" else "",
                                text,
                                json.dumps({"content": text[:80]}),
                                *extra_values,
                            ]
                        )
                    events_total += length
            print(
                f"  events copied ({events_total:,}) in {time.perf_counter() - started_events:.1f}s"
            )
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('trajectories_trajectory', 'id'), %s)",
                [total],
            )
            # What the redaction index writes for a trajectory the scan found nothing in: an
            # empty index, and the redacted view's columns (filters and facets read them).
            cur.execute(
                """UPDATE trajectories_trajectory SET shown_agent = agent,
                     shown_model = model_name, shown_agent_version = agent_version,
                     redaction_index = '{"own": {}, "count": 0}'::jsonb, indexed_at = now()"""
            )
        conn.commit()
    started_vector = time.perf_counter()
    # The vector the search refresh writes, by its own expression (title A, task B, steps D).
    from apps.trajectories.models import Trajectory
    from apps.trajectories.services.search import search_vector_expression

    Trajectory.objects.update(search_vector=search_vector_expression())
    print(f"  search vectors in {time.perf_counter() - started_vector:.1f}s")
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE trajectories_trajectory")
        conn.execute("VACUUM ANALYZE trajectories_event")


def load_signals() -> None:
    """Readers' signal on the loaded rows, as apps.stars and apps.feedback keep it: stars on
    one in five, shown corrections on one in 17 (1-4), first-wrong marks on one in 13 (1-3)
    with their deciles (a second decile for one in 26), spread over the run. Deterministic by
    id, so it can be added to rows loaded before it existed."""
    with psycopg.connect(DATABASE_URL) as conn:
        conn.execute("TRUNCATE trajectories_flaggeddecile")
        conn.execute(
            """UPDATE trajectories_trajectory SET
                 star_count = CASE WHEN id % 5 = 0 THEN 1 + id % 40 ELSE 0 END,
                 correction_count = CASE WHEN id % 17 = 0 THEN 1 + id % 4 ELSE 0 END,
                 first_wrong_count = CASE WHEN id % 13 = 0 THEN 1 + id % 3 ELSE 0 END"""
        )
        conn.execute(
            """INSERT INTO trajectories_flaggeddecile (trajectory_id, decile, marks)
               SELECT id, (id * 7) % 10, first_wrong_count FROM trajectories_trajectory
               WHERE first_wrong_count > 0"""
        )
        conn.execute(
            """INSERT INTO trajectories_flaggeddecile (trajectory_id, decile, marks)
               SELECT id, (id * 3 + 1) % 10, 1 FROM trajectories_trajectory
               WHERE first_wrong_count > 1 AND id % 26 = 0 AND (id * 3 + 1) % 10 <> (id * 7) % 10"""
        )
        # The deciles' bits, as apps.feedback keeps them beside the rows (?flagged_at=).
        conn.execute(
            """UPDATE trajectories_trajectory t SET first_wrong_deciles = d.bits
               FROM (SELECT trajectory_id, bit_or(1 << decile) AS bits
                     FROM trajectories_flaggeddecile GROUP BY trajectory_id) d
               WHERE t.id = d.trajectory_id"""
        )
        conn.commit()
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE trajectories_trajectory")
        conn.execute("VACUUM ANALYZE trajectories_flaggeddecile")


def signals_loaded() -> bool:
    with psycopg.connect(DATABASE_URL) as conn:
        return (
            conn.execute("SELECT 1 FROM trajectories_flaggeddecile LIMIT 1").fetchone() is not None
        )


def loaded_count() -> int:
    with psycopg.connect(DATABASE_URL) as conn:
        return conn.execute(
            "SELECT count(*) FROM trajectories_trajectory "
            "WHERE visibility = 'public' AND review_state = 'approved'"
        ).fetchone()[0]


# --- Measuring ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, workers: int = 1) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        # The API's next-page links are built on the site's address: this server's.
        "TRAJHUB_SITE_URL": f"http://127.0.0.1:{port}",
    }
    process = subprocess.Popen(
        [
            # Beside the Python running this (the project's venv, wherever the checkout is).
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    import requests

    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/api/v1/trajectories?limit=1", timeout=5)
            return process
        # Still importing Django (a loaded machine): the request waits in the backlog.
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.2)
    process.kill()
    raise SystemExit("gunicorn did not start")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))
    return ordered[index]


def time_http(session, base: str, paths: list[str], requests_count: int) -> list[float]:
    timings = []
    for i in range(requests_count):
        path = paths[i % len(paths)]
        started = time.perf_counter()
        response = session.get(base + path, timeout=30)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code} {response.text[:300]}")
        timings.append(elapsed)
    return timings


def captured_sql(paths: list[str]) -> dict[str, list[str]]:
    """The SQL each path runs, as Django sent it (parameters inlined by the driver)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    result = {}
    for path in paths:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        result[path] = [
            query["sql"]
            for query in queries.captured_queries
            if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        ]
    return result


def time_floor(
    sql_by_path: dict[str, list[str]], paths: list[str], requests_count: int
) -> list[float]:
    timings = []
    with psycopg.connect(DATABASE_URL) as conn:
        for i in range(requests_count):
            statements = sql_by_path[paths[i % len(paths)]]
            started = time.perf_counter()
            for sql in statements:
                conn.execute(sql).fetchall()
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def _second_page(session, base: str, path: str) -> str:
    """The path of the page after `path` (itself when there is none)."""
    url = session.get(base + path, timeout=30).json().get("next")
    if not url:
        return path
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def scenarios(rng: random.Random, session, base: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (target kind, request paths). Cursor pages are followed from the first page."""
    api = "/api/v1/trajectories"
    pages = [f"{api}?limit=50"]
    url = base + pages[0]
    for _ in range(5):
        url = session.get(url, timeout=30).json().get("next")
        if not url:
            break
        parts = urlsplit(url)
        pages.append(f"{parts.path}?{parts.query}")
    words_common = ["pytest", "passed", "empty input", "edit"]
    words_medium = rng.sample(MODULES, 8)
    words_rare = [str(rng.randint(1000, 99999)) for _ in range(4)] + ["zebra crossing"]
    searches = [quote(w) for w in words_common + words_medium + words_rare]
    words_common, words_medium, words_rare = (
        [quote(w) for w in words] for words in (words_common, words_medium, words_rare)
    )
    return {
        "API list, first page": ("list", [f"{api}?limit=50"]),
        "API list, cursor pages 2-6": ("list", pages[1:] or pages),
        "API list, filtered (agent/model/polarity)": (
            "list",
            [
                f"{api}?agent={rng.choice(AGENTS)}&limit=50",
                f"{api}?model={rng.choice(MODELS)}&polarity=positive&limit=50",
                f"{api}?source_format=sweagent&ordering=-events&limit=50",
            ],
        ),
        "API list, ?outcome=": (
            "list",
            [
                f"{api}?outcome=resolved&limit=50",
                f"{api}?outcome=unresolved&model={rng.choice(MODELS)}&limit=50",
            ],
        ),
        "API search, common words": ("search", [f"{api}?q={w}&limit=50" for w in words_common]),
        "API search, module names": ("search", [f"{api}?q={w}&limit=50" for w in words_medium]),
        "API search, rare / no match": ("search", [f"{api}?q={w}&limit=50" for w in words_rare]),
        "API search + filter": (
            "search",
            [f"{api}?q={w}&agent={rng.choice(AGENTS)}&limit=50" for w in searches[:6]],
        ),
        # The searches above are ranked by relevance (the default with q); these the other ways.
        "API search, two words (relevance)": (
            "search",
            [
                f"{api}?q={quote(a + ' ' + b)}&limit=50"
                for a, b in [("fix", "pagination"), ("empty", "input"), ("cache", "layer")]
                + [(m, "pytest") for m in rng.sample(MODULES, 3)]
            ],
        ),
        "API search, relevance cursor page 2": (
            "search",
            [_second_page(session, base, f"{api}?q={w}&limit=50") for w in searches[:8]],
        ),
        "API search, newest first (ordering=-created)": (
            "search",
            [f"{api}?q={w}&ordering=-created&limit=50" for w in searches],
        ),
        "API search, most starred (ordering=-stars)": (
            "search",
            [f"{api}?q={w}&ordering=-stars&limit=50" for w in searches[:8]],
        ),
        "/browse/ (page 1 and 40)": ("list", ["/browse/", "/browse/?page=40"]),
        "/browse/ filtered": (
            "list",
            [
                f"/browse/?agent={rng.choice(AGENTS)}",
                f"/browse/?model={quote(rng.choice(MODELS))}&polarity=negative",
                "/browse/?source_format=sweagent&ordering=-events",
                "/browse/?outcome=resolved",
            ],
        ),
        "/browse/?q= (all searches)": ("search", [f"/browse/?q={w}" for w in searches]),
        **signal_scenarios(session, base),
    }


# The sorts and filters by readers' signal (issue 23), each timed alone on the API and on
# /browse/: their targets are the list's.
SIGNAL_QUERIES = {
    "ordering=-stars": ["ordering=-stars"],
    "ordering=-corrections": ["ordering=-corrections"],
    "has_corrections=1": ["has_corrections=1"],
    "flagged=1": ["flagged=1"],
    "flagged_at=<0-9>": [f"flagged_at={tenth}" for tenth in range(10)],
}


def signal_scenarios(session, base: str) -> dict[str, tuple[str, list[str]]]:
    api = "/api/v1/trajectories"
    plan: dict[str, tuple[str, list[str]]] = {}
    for name, queries in SIGNAL_QUERIES.items():
        plan[f"API {name}"] = ("list", [f"{api}?{query}&limit=50" for query in queries])
        if name == "ordering=-corrections":
            # The cursor pages after the first, where the count's ties are broken by id.
            pages, url = [], f"{base}{api}?{queries[0]}&limit=50"
            for _ in range(5):
                url = session.get(url, timeout=30).json().get("next")
                if not url:
                    break
                parts = urlsplit(url)
                pages.append(f"{parts.path}?{parts.query}")
            plan[f"API {name}, cursor pages 2-6"] = ("list", pages)
        plan[f"/browse/?{name}"] = ("list", [f"/browse/?{query}" for query in queries])
    plan["/browse/?has_corrections=1 page 40"] = ("list", ["/browse/?has_corrections=1&page=40"])
    return plan


def bench_stats(session, base: str, requests_count: int) -> list[dict]:
    """/stats/ and GET /api/v1/stats over the same rows: warm (the cached aggregates, what
    readers get) against the target, and cold (the seven aggregate queries after the cache was
    dropped, as after a trajectory enters or leaves public()) against the same SQL through
    psycopg."""
    from apps.stats.selectors import collection_stats_forget

    paths = ["/stats/", "/api/v1/stats"]
    collection_stats_forget()
    sql = captured_sql(paths[:1])  # cold: the aggregates
    cold = []
    for _ in range(5):
        collection_stats_forget()
        started = time.perf_counter()
        session.get(base + paths[0], timeout=60).raise_for_status()
        cold.append((time.perf_counter() - started) * 1000)
    floor = time_floor(sql, paths[:1], 5)
    # The stampede guard: CONCURRENT readers right after a drop. One computes, the others wait
    # for its numbers, so the slowest of them takes about one cold computation (without the
    # guard each would run the seven aggregates, all at once, on the same cores).
    import threading

    import requests

    port = free_port()
    many = start_server(port, workers=CONCURRENT)  # one sync worker would serialise them
    many_base = f"http://127.0.0.1:{port}"
    stampede = []
    for _ in range(4):  # the first round also wakes every worker: not counted
        collection_stats_forget()
        barrier = threading.Barrier(CONCURRENT)
        times: list[float] = []

        def reader(barrier: threading.Barrier = barrier, times: list[float] = times) -> None:
            with requests.Session() as own:
                barrier.wait()
                started = time.perf_counter()
                own.get(many_base + paths[0], timeout=120).raise_for_status()
                times.append((time.perf_counter() - started) * 1000)

        threads = [threading.Thread(target=reader) for _ in range(CONCURRENT)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stampede.append(max(times))
    many.terminate()
    try:
        many.wait(60)  # a loaded machine takes a while to stop four workers
    except subprocess.TimeoutExpired:
        many.kill()
        many.wait(10)
    stampede = stampede[1:]
    time_http(session, base, paths, 20)  # warm up
    warm = time_http(session, base, paths, requests_count)
    return [
        {
            "scenario": "/stats/ + API stats (warm)",
            "kind": "stats",
            "queries": 0,
            "p50_ms": statistics.median(warm),
            "p95_ms": percentile(warm, 95),
            "max_ms": max(warm),
            "floor_p50_ms": 0.0,
            "floor_p95_ms": 0.0,
            "target_p95_ms": TARGETS_MS["stats"],
        },
        {
            "scenario": "/stats/ (cold: cache just dropped)",
            "kind": "stats",
            "queries": len(sql[paths[0]]),
            "p50_ms": statistics.median(cold),
            "p95_ms": percentile(cold, 95),
            "max_ms": max(cold),
            "floor_p50_ms": statistics.median(floor),
            "floor_p95_ms": percentile(floor, 95),
            "target_p95_ms": None,
        },
        {
            "scenario": f"/stats/ cold, {CONCURRENT} at once (slowest)",
            "kind": "stats",
            "queries": len(sql[paths[0]]),
            "p50_ms": statistics.median(stampede),
            "p95_ms": percentile(stampede, 95),
            "max_ms": max(stampede),
            "floor_p50_ms": statistics.median(floor),
            "floor_p95_ms": percentile(floor, 95),
            "target_p95_ms": None,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200, help="requests per scenario")
    parser.add_argument("--reload", action="store_true", help="reload even if the count matches")
    parser.add_argument(
        "--signals-only",
        action="store_true",
        help="only the sorts and filters by readers' signal, the API list's first page beside them",
    )
    parser.add_argument(
        "--stats-only",
        action="store_true",
        help="only /stats/ (warm, cold, concurrent cold) and the API list's first page beside it",
    )
    parser.add_argument(
        "--search-only",
        action="store_true",
        help="only the searches (API and browse), the API list's first page beside them",
    )
    parser.add_argument(
        "--no-stats",
        action="store_true",
        help="leave out /stats/ (its four-worker server may not start on a loaded machine)",
    )
    args = parser.parse_args()

    ensure_database()
    migrate()
    if args.reload or loaded_count() != args.count:
        print(f"loading {args.count:,} public trajectories of ~{args.events} events with COPY ...")
        started = time.perf_counter()
        load(args.count, args.events)
        print(f"loaded in {time.perf_counter() - started:.1f}s")
    if args.reload or not signals_loaded():
        print("adding readers' signal (stars, corrections, first-wrong marks) ...")
        load_signals()
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        # Fresh statistics, also for expression indexes a migration may just have added.
        conn.execute("ANALYZE trajectories_trajectory")
    print(f"{loaded_count():,} public trajectories in {DATABASE_URL.rsplit('/', 1)[-1]}")

    import requests

    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(11)
    results = []
    try:
        session = requests.Session()
        plan = scenarios(rng, session, base)
        # The browse rows of the signal scenarios (the API's are held to the target anyway).
        signal_names = {name for name in plan if name.startswith("/browse/?") and "?q=" not in name}
        if args.stats_only:
            plan = {name: plan[name] for name in ("API list, first page", "API list, ?outcome=")}
        elif args.search_only:
            plan = {
                name: paths
                for name, paths in plan.items()
                if name == "API list, first page" or paths[0] == "search"
            }
        elif args.signals_only:
            plan = {
                name: paths
                for name, paths in plan.items()
                if name == "API list, first page"
                or (name.startswith("API ") and name[4:].split(",")[0] in SIGNAL_QUERIES)
                or name in signal_names
            }
        for name, (kind, paths) in plan.items():
            time_http(session, base, paths, min(20, args.requests))  # warm up
            http = time_http(session, base, paths, args.requests)
            sql = captured_sql(paths)
            floor = time_floor(sql, paths, args.requests)
            results.append(
                {
                    "scenario": name,
                    "kind": kind,
                    "queries": max(len(v) for v in sql.values()),
                    "p50_ms": statistics.median(http),
                    "p95_ms": percentile(http, 95),
                    "max_ms": max(http),
                    "floor_p50_ms": statistics.median(floor),
                    "floor_p95_ms": percentile(floor, 95),
                    "target_p95_ms": TARGETS_MS[kind]
                    if name.startswith("API") or name in signal_names
                    else None,
                }
            )
        if not (args.signals_only or args.search_only or args.no_stats):
            results.extend(bench_stats(session, base, args.requests))
    finally:
        server.terminate()
        server.wait(10)

    print(
        f"\n{'scenario':44} {'queries':>7} {'p50':>8} {'p95':>8} {'max':>8} "
        f"{'floor p50':>10} {'floor p95':>10} {'target':>8}"
    )
    ok = True
    for row in results:
        target = row["target_p95_ms"]
        verdict = ""
        if target is not None:
            passed = row["p95_ms"] <= target
            ok &= passed
            verdict = f"<= {target:.0f} {'ok' if passed else 'MISSED'}"
        print(
            f"{row['scenario']:44} {row['queries']:>7} {row['p50_ms']:>6.1f}ms "
            f"{row['p95_ms']:>6.1f}ms {row['max_ms']:>6.1f}ms {row['floor_p50_ms']:>8.1f}ms "
            f"{row['floor_p95_ms']:>8.1f}ms {verdict}"
        )
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    (out / f"list-{stamp}.json").write_text(
        json.dumps(
            {
                "count": args.count,
                "events": args.events,
                "requests": args.requests,
                "results": results,
            },
            indent=2,
        )
    )
    print(
        "\nHTTP times are measured by the client (gunicorn, 1 sync worker, keep-alive off); "
        "the floor is the same SQL through psycopg."
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
