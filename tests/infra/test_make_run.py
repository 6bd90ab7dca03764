"""`make run`'s embedded stack, for real: SQLite, the filesystem broker, a solo worker with beat
inside it, and the development server — no service installed.

It runs the commands the Makefile's run target runs (checked against the Makefile), in a fresh
var/ folder: the demo trajectories it loads are scanned by the worker through the filesystem
broker, and so is a trajectory shared to the running site afterwards.
"""

from __future__ import annotations

import json
import random
import re
import urllib.request
from pathlib import Path

import pytest

from tests.infra.test_processes import ROOT, SCAN_WAIT_SECONDS, Stack, _executable, _free_port, _get

MAKEFILE = ROOT / "Makefile"
SETUP = [
    ["python", "manage.py", "migrate", "--noinput"],
    ["python", "manage.py", "demo_data", "--if-empty", "--count", "3"],
]
WORKER = ["celery", "-A", "config", "worker", "--beat", "--pool=solo", "--loglevel=warning"]


def test_makefile_runs_these_commands():
    recipe = MAKEFILE.read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip().lstrip("@") for line in recipe.splitlines()]
    assert "$(BIN)/python manage.py migrate --noinput" in lines
    assert "$(BIN)/python manage.py collectstatic --noinput --verbosity 0" in lines
    assert any(line.startswith("$(BIN)/python manage.py demo_data --if-empty") for line in lines)
    assert any(line.startswith(f"$(BIN)/{' '.join(WORKER)} &") for line in lines)
    assert re.search(r"\$\(BIN\)/python manage.py runserver 127\.0\.0\.1:\$\(PORT\)", recipe)


def test_make_run_on_another_port_makes_every_absolute_link_follow_it(tmp_path):
    """The report: with PORT=8101 every absolute link said :8000. The site and the worker get
    TRAJHUB_SITE_URL from PORT (unless it is set), and the settings take it from there."""
    import os
    import shutil
    import subprocess

    make = shutil.which("make")
    if make is None:
        from tests.conftest import skip_or_fail

        skip_or_fail("make is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAJHUB_", "MAKE"))}
    dry = subprocess.run(
        [make, "-n", "run", "PORT=8101"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    serve = dry.stdout.split("export TRAJHUB_SITE_URL=", 1)[1]
    assert serve.startswith("http://127.0.0.1:8101;")
    assert "celery -A config worker" in serve and "runserver 127.0.0.1:8101" in serve
    assert "TrajHub at http://127.0.0.1:8101/" in dry.stdout
    explicit = subprocess.run(
        [make, "-n", "run", "PORT=8101"],
        cwd=ROOT,
        env={**env, "TRAJHUB_SITE_URL": "https://hub.example.org"},
        capture_output=True,
        text=True,
    )
    assert "export TRAJHUB_SITE_URL=https://hub.example.org;" in explicit.stdout
    # What the settings make of it: the API's `url` and the other absolute links.
    site_url = subprocess.run(
        [_executable("python"), "-c", "import config.settings as s; print(s.SITE_URL)"],
        cwd=ROOT,
        env={**env, "TRAJHUB_SITE_URL": "http://127.0.0.1:8101", "TRAJHUB_VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert site_url.stdout.strip() == "http://127.0.0.1:8101", site_url.stderr
    # A command run beside `make run` (issue 20: its mails linked to :8000) reads the address
    # `make run` wrote to var/site_url.
    assert "printf '%s\\n' \"http://127.0.0.1:8101\" > var/site_url" in dry.stdout
    (tmp_path / "site_url").write_text("http://127.0.0.1:8101\n")
    beside = subprocess.run(
        [_executable("python"), "-c", "import config.settings as s; print(s.SITE_URL)"],
        cwd=ROOT,
        # The embedded default: production (DATABASE_URL) sets TRAJHUB_SITE_URL instead.
        env={
            **{k: v for k, v in env.items() if k != "DATABASE_URL"},
            "TRAJHUB_VAR_DIR": str(tmp_path),
        },
        capture_output=True,
        text=True,
    )
    assert beside.stdout.strip() == "http://127.0.0.1:8101", beside.stderr


@pytest.fixture
def embedded(tmp_path):
    import os
    import subprocess

    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CELERY_", "DJANGO_", "TRAJHUB_", "DATABASE_", "REDIS_", "PYTEST_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        TRAJHUB_VAR_DIR=str(tmp_path / "var"),
        PYTHONUNBUFFERED="1",
    )
    for command in SETUP:
        done = subprocess.run(
            [_executable(command[0]), *command[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    port = _free_port()
    stack = Stack(tmp_path, env, port, pg_url="")
    try:
        stack.start("worker", WORKER)
        stack.start("web", ["python", "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"])
        stack.wait_for(
            "runserver to answer /healthz", lambda: _get(stack.url("/healthz"))[0] == 200
        )
        yield stack
    finally:
        stack.stop()


def _public_count(stack: Stack) -> int:
    status, _, body = _get(stack.url("/api/v1/trajectories"))
    return len(json.loads(body)["results"]) if status == 200 else -1


def test_tasks_travel_through_the_filesystem_broker(embedded: Stack):
    from apps.demo import generator as demo

    # The demo data was queued before the worker started; it picks the scans up from the folder.
    sessions = list(demo.sessions(1, 3))
    public = sum(s["permissions"] == "public" for s in sessions)
    assert public >= 1
    embedded.wait_for(
        "the demo scans", lambda: _public_count(embedded) == public, timeout=SCAN_WAIT_SECONDS
    )

    body = demo.share_payload(
        demo.generate_session(random.Random(5), events=12), permissions="public"
    )
    request = urllib.request.Request(
        embedded.url("/share_od_trajectory"),
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        share_id = json.loads(response.read())["body"]["feedback_id"]
    embedded.wait_for(
        "the worker to scan the new share",
        lambda: _get(embedded.url(f"/api/v1/trajectories/{share_id}"))[0] == 200,
        timeout=SCAN_WAIT_SECONDS,
    )
    assert not list(Path(embedded.env["TRAJHUB_VAR_DIR"], "celery", "queue").iterdir())
