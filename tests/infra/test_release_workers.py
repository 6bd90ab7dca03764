"""Release builds on real processes (PostgreSQL, Redis, Celery worker and beat):

- beat schedules the release run and the worker publishes a release;
- a worker killed in the middle of a build (Parquet uploaded, card and manifest not yet) leaves
  a failed release and no visible file, and the next run publishes;
- a build split into shard tasks is shared by two workers, coordinated through database rows,
  and the last shard to finish publishes the card and manifest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.infra.test_processes import PROCESSES, ROOT, Stack, _executable, running_stack

SLOW_WORKER = ["python", "-m", "tests.infra.slow_release_worker"]

MAKE_PUBLIC = """
import random, orjson
from apps.demo import generator as demo
from apps.trajectories.models import Trajectory
from apps.trajectories.services.ingest import ShareOptions, trajectory_ingest
from apps.moderation.services.scan import trajectory_scan
for seed in range({first}, {first} + {count}):
    session = demo.generate_session(random.Random(seed), events=12, screenshots=0)
    result = trajectory_ingest(data=demo.v0_array(session), user=None,
        options=ShareOptions(visibility="public", license_agreed=True, title=f"run {{seed}}"))
    t = result.stored[0].trajectory
    # The real scan, so each is approved under today's rules (the release leaves out a
    # trajectory whose scan is stale, as one never scanned is); then it must be in public().
    trajectory_scan(trajectory=t)
    assert Trajectory.objects.public().filter(pk=t.pk).exists(), t.review_state
print("ok")
"""


@pytest.fixture
def release_stack(tmp_path):
    # No process yet: each test starts the workers it needs, with its own settings.
    with running_stack(
        tmp_path,
        names=(),
        database_suffix="releases",
        env={"TRAJHUB_SCAN_SWEEP_SECONDS": "3600", "TRAJHUB_RELEASE_OPT_OUT_DAYS": "0"},
    ) as stack:
        yield stack


def _manage(stack: Stack, *args: str, code: str | None = None) -> str:
    command = ["manage.py", *args] if code is None else ["manage.py", "shell", "-c", code]
    done = subprocess.run(
        [_executable("python"), *command],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _releases(stack: Stack) -> list[tuple]:
    return stack.query("SELECT version, status, num_rows FROM datasets_release ORDER BY version")


def _release_root(stack: Stack) -> Path:
    return Path(stack.env["TRAJHUB_VAR_DIR"]) / "media" / "releases"


@pytest.mark.services
def test_beat_schedules_a_build_and_the_worker_publishes_it(release_stack):
    stack = release_stack
    stack.env["TRAJHUB_RELEASE_CHECK_SECONDS"] = "2"
    _manage(stack, code=MAKE_PUBLIC.format(first=1, count=3))
    stack.start("worker", PROCESSES["worker"])
    stack.start("beat", PROCESSES["beat"])
    stack.wait_for(
        "beat to send the release run and the worker to publish",
        lambda: any(status == "published" for _, status, _ in _releases(stack)),
        timeout=90,
    )
    assert "Sending due task release-run" in stack.log("beat")
    assert _releases(stack)[0] == (1, "published", 3)
    manifest = json.loads((_release_root(stack) / "v1" / "manifest.json").read_text())
    assert len(manifest["added_ids"]) == 3
    # Beat keeps sending it; with nothing new, nothing new is published.
    stack.wait_for(
        "another run",
        lambda: stack.log("worker").count("release run:") >= 2,
        timeout=30,
    )
    assert [v for v, *_ in _releases(stack)] == [1]


@pytest.mark.services
def test_a_worker_killed_mid_build_leaves_a_failed_release_and_nothing_visible(
    release_stack, tmp_path
):
    stack = release_stack
    mark = tmp_path / "release-entered"
    stack.env["SLOW_RELEASE_MARK"] = str(mark)
    _manage(stack, code=MAKE_PUBLIC.format(first=10, count=3))
    stack.start("worker", SLOW_WORKER)
    stack.wait_for("the worker to be ready", lambda: "ready." in stack.log("worker"), timeout=60)
    _manage(stack, code="from apps.datasets.tasks import release_run; release_run.delay()")
    stack.wait_for("the build to reach the card", mark.exists, timeout=90)
    folder = _release_root(stack) / "v1"
    assert list(folder.rglob("*.parquet")) and not (folder / "manifest.json").exists()
    assert _releases(stack) == [(1, "building", 3)]

    worker = stack.processes.pop("worker")
    os.killpg(worker.pid, signal.SIGKILL)  # the whole worker: main process and pool
    worker.wait(timeout=10)
    time.sleep(0.5)

    out = _manage(stack, "build_release", "--now")
    assert out.startswith("v2 published: 3 trajectories"), out
    releases = _releases(stack)
    assert releases == [(1, "failed", 3), (2, "published", 3)]
    (error,) = stack.query("SELECT error FROM datasets_release WHERE version = 1")[0]
    assert "died or was killed" in error
    assert not any(p.is_file() for p in folder.rglob("*"))  # the killed build's files are gone
    listed = _manage(
        stack,
        code="from apps.datasets.selectors import release_list_published as r; "
        "print([x.version for x in r()])",
    )
    assert listed.strip().splitlines()[-1] == "[2]"


@pytest.mark.services
def test_two_workers_share_a_build_split_into_shard_tasks(release_stack):
    stack = release_stack
    stack.env["TRAJHUB_RELEASE_SHARD_TASK_ROWS"] = "1"
    stack.env["SLOW_SHARD_SECONDS"] = "1"
    _manage(stack, code=MAKE_PUBLIC.format(first=20, count=4))
    stack.start("worker1", [*SLOW_WORKER, "-n", "one@%h"])
    stack.start("worker2", [*SLOW_WORKER, "-n", "two@%h"])
    for name in ("worker1", "worker2"):
        stack.wait_for(f"{name} to be ready", lambda n=name: "ready." in stack.log(n), timeout=60)
    out = _manage(stack, "build_release", "--now")
    assert out.startswith("v1: building in 4 shard tasks"), out
    stack.wait_for(
        "the last shard to publish",
        lambda: _releases(stack) == [(1, "published", 4)],
        timeout=120,
    )
    workers = {w.split("@")[0] for (w,) in stack.query("SELECT worker FROM datasets_releaseshard")}
    assert workers == {"one", "two"}
    folder = _release_root(stack) / "v1"
    manifest = json.loads((folder / "manifest.json").read_text())
    shards = sorted(p.name for p in (folder / "data").glob("*.parquet"))
    assert shards == [f"train-{i:05d}-of-00004.parquet" for i in range(4)]
    ids = [
        row["id"] for name in shards for row in pq.read_table(folder / "data" / name).to_pylist()
    ]
    assert sorted(ids) == sorted(manifest["added_ids"]) and len(ids) == 4
    assert {f["path"] for f in manifest["files"]} >= {f"openai/{name}" for name in shards}


DELETE = """
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
for t in Trajectory.objects.order_by("id")[:{count}]:
    trajectory_delete(trajectory=t)  # each its own commit, and its own signal
print("ok")
"""


@pytest.mark.services
def test_deletions_supersede_at_once_and_a_worker_publishes_one_removal_build(release_stack):
    stack = release_stack
    stack.env["TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS"] = "8"
    _manage(stack, code=MAKE_PUBLIC.format(first=30, count=4))
    out = _manage(stack, "build_release", "--now")
    assert out.startswith("v1 published: 4 trajectories"), out
    stack.start("worker", PROCESSES["worker"])
    stack.wait_for("the worker to be ready", lambda: "ready." in stack.log("worker"), timeout=60)

    _manage(stack, code=DELETE.format(count=2))
    # Superseded as the deletions committed, before any build.
    ((superseded_at, superseded_by),) = stack.query(
        "SELECT superseded_at, superseded_by_id FROM datasets_release WHERE version = 1"
    )
    assert superseded_at is not None and superseded_by is None
    stack.wait_for(
        "the worker to publish the removal-only release",
        lambda: _releases(stack) == [(1, "published", 4), (2, "published", 2)],
        timeout=90,
    )
    ((removal_only, removed),) = stack.query(
        "SELECT removal_only, removed_ids FROM datasets_release WHERE version = 2"
    )
    assert removal_only and len(removed) == 2
    assert stack.query(
        "SELECT superseded_by_id IS NOT NULL FROM datasets_release WHERE version = 1"
    )[0] == (True,)
    # Two deletions, one build. The worker logs the publication after its commit, which the
    # wait above may see first.
    stack.wait_for(
        "the worker to log the removal-only release",
        lambda: "release removals: v2 published (removal-only)" in stack.log("worker"),
        timeout=30,
    )
    log = stack.log("worker")
    received = [
        line for line in log.splitlines() if "release_removals[" in line and "received" in line
    ]
    assert len(received) == 1, log[-3000:]
    assert log.count("release removals: v2 published (removal-only)") == 1
