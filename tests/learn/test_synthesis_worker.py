"""Synthesis through real Celery workers on Redis and PostgreSQL, against the test-run
OpenAI-compatible server (tests/learn/llm_server.py, in this process on loopback).

`manage.py synthesize --background` queues the run; a worker (`celery -A config worker`, the
command the deployment runs) fans out one task per trajectory. The whole worker is SIGKILLed in
the middle of a trajectory; a second worker takes the run over: the unacknowledged task comes
back from Redis (short visibility timeout here), the dead worker's window claims have expired,
and the run ends done with every window written once: no window lost, none asked of the LLM
again once its answers were stored, and the filter phase and the index rebuild ran.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.infra.test_processes import ROOT, Stack, _executable, running_stack

pytestmark = pytest.mark.services
TRAJECTORIES = 4
WINDOWS_EACH = 10  # 4 observations after the task: 5 observations, 10 windows (cap 20)
WORKER = [
    "celery",
    "-A",
    "config",
    "worker",
    "--loglevel=INFO",
    "--concurrency=1",
    "--prefetch-multiplier=1",
]
MAKE = """
from tests.learn.factories import make_session
for n in range({count}):
    make_session(f"Task {{n}}", [(f"cmd{{n}}-{{k}}", f"output {{n}} {{k}}") for k in range(4)])
"""


@pytest.fixture
def stack(tmp_path, fake_llm):
    env = dict(
        TRAJHUB_RETRIEVE_DIR=str(tmp_path / "retrieval"),
        TRAJHUB_RETRIEVE_DENSE="off",
        TRAJHUB_LLM_BASE_URL=fake_llm.url,
        TRAJHUB_LLM_MODEL="writer-1",
        TRAJHUB_LLM_JUDGE_MODELS="judge-a",
        TRAJHUB_LLM_CONCURRENCY="2",
        TRAJHUB_LLM_TIMEOUT="5",
        # The dead worker's LLM slots come free when their lease, no longer renewed, ends
        # (services.llm_slot; default retries, which no longer lengthen it).
        TRAJHUB_LLM_SLOT_SECONDS="2",
        # A dead worker's claims and unacknowledged task come back in seconds, not 15 minutes.
        TRAJHUB_SYNTH_CLAIM_SECONDS="3",
        CELERY_BROKER_VISIBILITY_TIMEOUT="8",
    )
    # No process of the compose file: the test starts and kills its own workers.
    with running_stack(tmp_path, names=(), env=env, database_suffix="learnworker") as running:
        make = subprocess.run(
            [_executable("python"), "manage.py", "shell", "-c", MAKE.format(count=TRAJECTORIES)],
            cwd=ROOT,
            env=running.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert make.returncode == 0, make.stdout + make.stderr
        yield running


def _counts(stack: Stack) -> dict[str, int]:
    return dict(stack.query("SELECT state, count(*) FROM learn_window GROUP BY state"))


def test_a_worker_killed_mid_trajectory_loses_no_window_and_repeats_none(stack, fake_llm):
    answered = 0
    killed = False

    def kill_mid_trajectory(kind: str) -> None:
        # The whole worker (main process and its pool), while it waits for an answer.
        nonlocal answered, killed
        if kind in ("task", "replicate"):
            answered += 1
            if answered == 25 and not killed:
                killed = True
                os.killpg(stack.processes["doomed"].pid, signal.SIGKILL)

    fake_llm.hook = kill_mid_trajectory
    stack.start("doomed", WORKER)
    queued = subprocess.run(
        [_executable("python"), "manage.py", "synthesize", "--background"],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert queued.returncode == 0 and "queued" in queued.stdout, queued.stdout + queued.stderr
    deadline = time.monotonic() + 120
    while stack.processes["doomed"].poll() is None:
        assert time.monotonic() < deadline, f"the worker was never killed\n{stack.tails()}"
        time.sleep(0.2)
    assert stack.processes.pop("doomed").wait(timeout=10) == -signal.SIGKILL
    fake_llm.hook = None
    time.sleep(0.5)  # answers in flight to the dead worker are counted before the takeover
    left = _counts(stack)
    assert left.get("claimed"), f"the kill should leave windows being written: {left}"
    stored_before = set(stack.query("SELECT window_id, prompt_type FROM learn_example"))
    served_before = len(fake_llm.served)

    stack.start("worker", WORKER)
    stack.wait_for(
        "the run to finish on the second worker",
        lambda: stack.query("SELECT state FROM learn_synthesisrun")[0][0] == "done",
        timeout=150,
    )
    windows = TRAJECTORIES * WINDOWS_EACH
    assert _counts(stack) == {"done": windows}
    examples = stack.query("SELECT window_id, prompt_type FROM learn_example")
    assert len(examples) == len(set(examples)) == 2 * windows  # none lost
    asked_again = [s for s in fake_llm.served[served_before:] if s.kind in ("task", "replicate")]
    assert len(asked_again) == 2 * windows - len(stored_before)  # none written twice
    ((done, total, calls),) = stack.query(
        "SELECT trajectories_done, trajectories_total, llm_calls FROM learn_synthesisrun"
    )
    assert done == total == TRAJECTORIES and calls >= 2 * windows
    assert not stack.query("SELECT 1 FROM learn_example WHERE state = 'candidate'")
    # The filter phase queued the index rebuild, which the worker ran.
    stack.wait_for(
        "the retrieval index",
        lambda: (ROOT / stack.env["TRAJHUB_RETRIEVE_DIR"] / "CURRENT").exists(),
        timeout=60,
    )
    assert "learn.tasks.synthesize_trajectory" in stack.log("worker")
