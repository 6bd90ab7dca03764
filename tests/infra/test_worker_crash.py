"""Workers killed in the middle of their work, for real (PostgreSQL, Redis, Celery processes).

- A pool process killed in the middle of a scan: the task goes back to the queue at once
  (acks_late + task_reject_on_worker_lost) and the trajectory is scanned seconds later, not after
  the broker's visibility timeout (Redis' default: an hour).
- A whole worker killed in the middle of a sweep: the sweep's lock expires a few seconds after
  its holder stopped renewing it, so the next sweep (another worker) scans a pending trajectory
  within that interval instead of every sweep being skipped for 15 minutes.

The killed worker is tests/infra/slow_worker.py: the real worker, whose first scan stalls so the
kill lands in the middle of it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.infra.test_processes import PROCESSES, ROOT, Stack, _executable, running_stack

SWEEP_SECONDS = 1
LOCK_SECONDS = 4
SLOW_WORKER = ["python", "-m", "tests.infra.slow_worker"]

# A pending public trajectory whose on-commit scan was lost (old enough for the sweep).
MAKE_PENDING = """
from datetime import timedelta
from django.utils import timezone
from apps.trajectories.models import Event, Trajectory
t = Trajectory.objects.create(title="crash {n}", source_format="openhands_v0",
    visibility="public", review_state="pending", license="MIT", num_events=1)
Event.objects.create(trajectory=t, position=0, source="agent", kind="action", type="run",
    text="ls -la")
if {old}:
    Trajectory.objects.filter(pk=t.pk).update(updated_at=timezone.now() - timedelta(minutes=10))
if {queue}:
    from apps.moderation.tasks import scan_trajectory
    scan_trajectory.delay(t.pk)
print(t.pk)
"""


@pytest.fixture
def crash_stack(tmp_path):
    # No process yet: each test starts (and kills) its own workers.
    with running_stack(
        tmp_path,
        names=(),
        database_suffix="crash",
        env={
            "TRAJHUB_SCAN_SWEEP_SECONDS": str(SWEEP_SECONDS),
            "TRAJHUB_SCAN_SWEEP_LOCK_SECONDS": str(LOCK_SECONDS),
            "SLOW_SCAN_MARK": str(tmp_path / "scan-entered"),
        },
    ) as stack:
        yield stack


def _pending(stack: Stack, n: int, *, old: bool, queue: bool) -> int:
    code = MAKE_PENDING.format(n=n, old=old, queue=queue)
    done = subprocess.run(
        [_executable("python"), "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return int(done.stdout.strip().splitlines()[-1])


def _state(stack: Stack, pk: int) -> str:
    return stack.query("SELECT review_state FROM trajectories_trajectory WHERE id = %s", pk)[0][0]


def _mark(stack: Stack) -> Path:
    return Path(stack.env["SLOW_SCAN_MARK"])


@pytest.mark.services
def test_a_pool_process_killed_mid_scan_has_its_task_redelivered_at_once(crash_stack):
    stack = crash_stack
    stack.start("worker", SLOW_WORKER)
    stack.wait_for("the worker to be ready", lambda: "ready." in stack.log("worker"), 60)
    pk = _pending(stack, 1, old=False, queue=True)
    stack.wait_for("the scan to start", _mark(stack).exists, 30)
    time.sleep(0.5)
    os.kill(int(_mark(stack).read_text()), signal.SIGKILL)  # the pool process, mid-scan
    killed_at = time.monotonic()
    # Not the sweep (no beat runs, and the trajectory is too recent for it): the redelivery.
    stack.wait_for("the redelivered scan", lambda: _state(stack, pk) != "pending", 60)
    assert time.monotonic() - killed_at < 60
    assert _state(stack, pk) == "approved"
    assert "WorkerLostError" in stack.log("worker")


@pytest.mark.services
def test_a_worker_killed_mid_sweep_does_not_block_the_sweep(crash_stack):
    stack = crash_stack
    pk = _pending(stack, 2, old=True, queue=False)
    stack.start("beat", PROCESSES["beat"])
    stack.start("doomed", SLOW_WORKER)
    stack.wait_for("the sweep to start scanning", _mark(stack).exists, 60)
    time.sleep(LOCK_SECONDS + 1)  # the lock outlives its expiry while its holder lives
    assert _state(stack, pk) == "pending"
    os.killpg(stack.processes["doomed"].pid, signal.SIGKILL)  # the whole worker, mid-sweep
    stack.processes.pop("doomed").wait(timeout=10)
    killed_at = time.monotonic()
    stack.start("worker", PROCESSES["worker"])
    # Within the lock's short expiry plus a sweep interval and a new worker's start (which loads
    # the scanner's rules: slow on a busy machine), not the old lock's 15 minutes.
    stack.wait_for(
        "a sweep after the crash to scan the trajectory",
        lambda: _state(stack, pk) != "pending",
        timeout=LOCK_SECONDS + 90,
    )
    assert _state(stack, pk) == "approved"
    assert time.monotonic() - killed_at < LOCK_SECONDS + 90
    # The sweep did it (nothing else queued a scan): its log line follows the write.
    stack.wait_for(
        "the sweep's log line",
        lambda: "scan sweep scanned 1 pending trajectories" in stack.log("worker"),
        timeout=20,
    )
