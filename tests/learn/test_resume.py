"""Resumption: `manage.py synthesize` killed (SIGKILL) in the middle of a run, then run again.

The killed process leaves windows claimed; once the claim has expired (here at once), the next
run takes them over. Afterwards every window has its two examples (none lost), and the LLM was
not asked again for any window whose answers were already stored (none written twice).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from apps.learn.models import Example, Window, WindowState
from tests.conftest import skip_or_fail
from tests.learn.factories import make_session

pytestmark = pytest.mark.usefixtures("transactional_db")
ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    if connection.vendor != "postgresql":
        skip_or_fail("a second process needs the test database in PostgreSQL (DATABASE_URL)")
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def test_a_killed_run_is_resumed_without_repeating_or_losing_a_window(fake_llm, settings, tmp_path):
    url = database_url()
    for n in range(3):
        make_session(
            f"Task {n}",
            [(f"cmd{n}-{k}", f"output {n} {k}") for k in range(4)],
        )
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")},
        "DATABASE_URL": url,
        "DJANGO_SECRET_KEY": "test",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TRAJHUB_VAR_DIR": str(tmp_path / "var"),
        "TRAJHUB_RETRIEVE_DIR": str(tmp_path / "retrieval"),
        "TRAJHUB_RETRIEVE_DENSE": "off",
        "TRAJHUB_LLM_BASE_URL": fake_llm.url,
        "TRAJHUB_LLM_MODEL": "writer-1",
        "TRAJHUB_LLM_JUDGE_MODELS": "judge-a",
        "TRAJHUB_LLM_CONCURRENCY": "2",
        "TRAJHUB_LLM_TIMEOUT": "5",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "synthesize"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    answered = 0
    nine_answered = threading.Event()
    killed = threading.Event()

    def hold_after_nine(kind: str) -> None:
        # After nine answers, later requests wait until the process is dead: the windows they
        # belong to stay claimed, whatever the machine's load.
        nonlocal answered
        if kind in ("task", "replicate"):
            answered += 1
            if answered >= 9:
                nine_answered.set()
                killed.wait(120)

    fake_llm.hook = hold_after_nine
    try:
        assert nine_answered.wait(120), "the run never got nine answers"
        # Kill once an answer has been stored (a slow machine may take a while to write one).
        deadline = time.monotonic() + 60
        while not Example.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        killed.set()
        if process.poll() is None:
            process.kill()
    fake_llm.hook = None
    time.sleep(0.2)
    left = list(Window.objects.values_list("state", flat=True))
    assert WindowState.CLAIMED in left, "the kill should have left windows being written"
    assert WindowState.DONE in left or Example.objects.exists()
    stored_before = set(Example.objects.values_list("window_id", "prompt_type"))
    served_before = len(fake_llm.served)

    # The dead process's claims count as expired; the next run takes them over.
    settings.TRAJHUB_SYNTH_CLAIM_SECONDS = 0
    call_command("synthesize", stdout=io.StringIO(), stderr=io.StringIO())

    windows = Window.objects.count()
    assert windows == 3 * 10
    assert set(Window.objects.values_list("state", flat=True)) == {WindowState.DONE}
    assert Example.objects.count() == 2 * windows  # none lost
    asked_again = [s for s in fake_llm.served[served_before:] if s.kind in ("task", "replicate")]
    assert len(asked_again) == 2 * windows - len(stored_before)  # none written twice
