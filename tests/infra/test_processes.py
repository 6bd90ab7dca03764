"""docker/compose.yaml, proven without Docker: the same web, worker and beat commands, for real.

No Docker engine runs here (nor in CI), so this starts the processes the compose file starts —
gunicorn on config.wsgi, a Celery worker, Celery beat — against the machine's PostgreSQL (a
database of its own, migrated by the compose file's migrate command) and Redis (a Redis database
of its own: the test process clears its cache database between tests, which would drop the
broker's queues). It checks /healthz, that a trajectory shared over HTTP is scanned by the real
worker (its review state leaves "pending" and it becomes visible), and that beat schedules the
sweep and the worker runs it. `test_compose_runs_these_commands` keeps the list in step with
docker/compose.yaml and docker/Dockerfile.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import yaml

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yaml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"

# What docker/compose.yaml runs. The stack below runs exactly these.
MIGRATE = ["python", "manage.py", "migrate", "--noinput"]
PROCESSES = {
    "web": ["gunicorn", "--config", "docker/gunicorn.conf.py", "config.wsgi"],
    "worker": ["celery", "-A", "config", "worker", "--loglevel=INFO"],
    "beat": ["celery", "-A", "config", "beat", "--loglevel=INFO"],
}
SWEEP_SECONDS = 2
# A fresh worker's first scan compiles the scanner's rules (a few seconds on a quiet machine) and
# may OCR a screenshot: on a loaded 2-core machine that took longer than the 25 s default.
SCAN_WAIT_SECONDS = 120.0


def test_compose_runs_these_commands():
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert {"web", "worker", "beat", "postgres", "redis", "minio"} <= set(services)
    assert services["migrate"]["command"] == MIGRATE
    for name, command in PROCESSES.items():
        service = services[name]
        assert service["command"] == command, name
        assert service["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        for needed in ("postgres", "redis"):
            assert service["depends_on"][needed] == {"condition": "service_healthy"}
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["STORAGE_BACKEND"] == "s3"
        assert env["AWS_S3_ENDPOINT_URL"].endswith("http://minio:9000}")
        for key in ("AWS_STORAGE_BUCKET_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            assert env[key], key
        assert env["DJANGO_SECRET_KEY"].startswith("${DJANGO_SECRET_KEY:?")
    assert services["minio"]["image"].startswith("minio/minio")
    assert services["web"]["healthcheck"]["test"][-1].count("/healthz") == 1

    dockerfile = DOCKERFILE.read_text()
    assert dockerfile.splitlines()[2] == "FROM python:3.11-slim"
    assert "pip install -r requirements-prod.txt" in dockerfile
    assert "collectstatic" in dockerfile
    (cmd,) = [line for line in dockerfile.splitlines() if line.startswith("CMD ")]
    assert json.loads(cmd.removeprefix("CMD ")) == PROCESSES["web"]


# --- the running stack ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _executable(name: str) -> str:
    if name == "python":
        return sys.executable
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def _service_urls(suffix: str = "processes", redis_offset: int = 8) -> tuple[str, str]:
    """(PostgreSQL database URL, Redis URL) for the stack, next to the ones the suite uses."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        base = "postgres://postgres@127.0.0.1:5432/trajhub"
    parts = urlsplit(base)
    database = f"{parts.path.lstrip('/') or 'trajhub'}_{suffix}"
    pg_url = urlunsplit((parts.scheme, parts.netloc, f"/{database}", "", ""))
    redis = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    number = int(redis.path.lstrip("/") or 0)
    redis_url = urlunsplit((redis.scheme, redis.netloc, f"/{(number + redis_offset) % 16}", "", ""))
    return pg_url, redis_url


def _admin_connect(pg_url: str):
    import psycopg

    parts = urlsplit(pg_url)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))
    return psycopg.connect(admin, autocommit=True, connect_timeout=3)


class Stack:
    def __init__(self, root: Path, env: dict[str, str], port: int, pg_url: str):
        self.root = root
        self.env = env
        self.port = port
        self.pg_url = pg_url
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self, name: str, command: list[str]) -> None:
        log = self.root / f"{name}.log"
        self.logs[name] = log
        with log.open("wb") as out:
            # A session of its own: the whole process tree is stopped by one signal.
            self.processes[name] = subprocess.Popen(
                [_executable(command[0]), *command[1:]],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def tails(self) -> str:
        return "\n".join(
            f"--- {name} (exit {proc.poll()}):\n{self.log(name)[-3000:]}"
            for name, proc in self.processes.items()
        )

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)

    def query(self, sql: str, *params):
        import psycopg

        with psycopg.connect(self.pg_url, connect_timeout=3) as conn:
            return conn.execute(sql, params).fetchall()

    def wait_for(self, what: str, check, timeout: float = 25.0):
        deadline = time.monotonic() + timeout
        while True:
            dead = [n for n, p in self.processes.items() if p.poll() is not None]
            if dead:
                pytest.fail(f"{', '.join(dead)} exited while waiting for {what}\n{self.tails()}")
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}\n{self.tails()}")
            time.sleep(0.25)


def _get(url: str, timeout: float = 5.0) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, {}, b""


@contextlib.contextmanager
def running_stack(
    root: Path,
    *,
    names: tuple[str, ...] = tuple(PROCESSES),
    env: dict[str, str] | None = None,
    database_suffix: str = "processes",
    redis_offset: int = 8,
):
    """The compose file's processes `names` (web, worker, beat) on a database and a Redis
    database of their own, migrated first; stopped and dropped afterwards. Other test modules
    (tests/infra/test_hostile_traffic.py) start their own with other settings in `env`; with
    `names=()` none is started, and the test starts what it needs with `stack.start()`."""
    pg_url, redis_url = _service_urls(database_suffix, redis_offset)
    try:
        admin = _admin_connect(pg_url)
    except Exception as exc:
        skip_or_fail(f"PostgreSQL is not reachable at 127.0.0.1:5432 ({exc}); install and start it")
    try:
        import redis

        client = redis.Redis.from_url(redis_url, socket_connect_timeout=2)
        client.ping()
    except Exception as exc:
        skip_or_fail(f"Redis is not reachable at {redis_url} ({exc}); install and start it")
    database = urlsplit(pg_url).path.lstrip("/")
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{database}"')
    client.flushdb()  # a database of its own: queues left by an earlier run must not replay

    (root / "var").mkdir(exist_ok=True)  # the image has /app/var; beat keeps its schedule there
    port = _free_port()
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CELERY_", "DJANGO_", "TRAJHUB_", "GUNICORN_", "PYTEST_"))
    }
    environment.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_SECRET_KEY="processes-test-only",
        DATABASE_URL=pg_url,
        REDIS_URL=redis_url,
        TRAJHUB_VAR_DIR=str(root / "var"),
        TRAJHUB_SCAN_SWEEP_SECONDS=str(SWEEP_SECONDS),
        GUNICORN_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY="2",
        PYTHONUNBUFFERED="1",
    )
    environment.update(env or {})  # the caller's settings win over the defaults above
    stack = Stack(root, environment, port, pg_url)
    try:
        migrate = subprocess.run(
            [_executable(MIGRATE[0]), *MIGRATE[1:]],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        for name in names:
            stack.start(name, PROCESSES[name])
        if "web" in names:
            stack.wait_for(
                "gunicorn to answer /healthz", lambda: _get(stack.url("/healthz"))[0] == 200
            )
        if "worker" in names:
            stack.wait_for("the worker to be ready", lambda: "ready." in stack.log("worker"))
        yield stack
    finally:
        stack.stop()
        client.flushdb()
        client.close()
        with _admin_connect(pg_url) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running


@pytest.mark.services
def test_gunicorn_serves_healthz(stack):
    status, headers, body = _get(stack.url("/healthz"))
    assert status == 200
    assert json.loads(body) == {"database": "ok", "broker": "ok", "storage": "ok"}
    assert headers.get("Server", "").startswith("gunicorn")


@pytest.mark.services
def test_shared_trajectory_is_scanned_by_the_worker(stack):
    import random

    from apps.demo import generator as demo

    session = demo.generate_session(random.Random(42), events=24, screenshots=1)
    body = demo.share_payload(session, permissions="public")
    request = urllib.request.Request(
        stack.url("/share_od_trajectory"),
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        answer = json.loads(response.read())
    share_id = answer["body"]["feedback_id"]

    (row,) = stack.query(
        "SELECT num_events, visibility FROM trajectories_trajectory WHERE share_id = %s", share_id
    )
    assert row == (24, "public")

    def scanned():
        (state,) = stack.query(
            "SELECT review_state FROM trajectories_trajectory WHERE share_id = %s", share_id
        )[0]
        return state if state != "pending" else None

    state = stack.wait_for(
        "the worker to scan the shared trajectory", scanned, timeout=SCAN_WAIT_SECONDS
    )
    assert state == "approved"
    assert "apps.moderation.tasks.scan_trajectory" in stack.log("worker")
    # Approved and public: now anyone can fetch it through gunicorn.
    status, _, _ = _get(stack.url(f"/api/v1/trajectories/{share_id}"))
    assert status == 200


@pytest.mark.services
def test_beat_schedules_the_sweep_and_the_worker_runs_it(stack):
    stack.wait_for(
        "beat to send the scan sweep",
        lambda: "Sending due task scan-sweep" in stack.log("beat"),
        timeout=SWEEP_SECONDS * 5,
    )
    stack.wait_for(
        "the worker to run the scan sweep",
        lambda: (
            "apps.moderation.tasks.scan_sweep[" in stack.log("worker")
            and "succeeded" in stack.log("worker").split("apps.moderation.tasks.scan_sweep[", 1)[1]
        ),
        timeout=SWEEP_SECONDS * 5,
    )
