"""The LLM concurrency slots (services.llm_slot) across real processes on Redis: a live holder
keeps its slot however long its call runs, and a holder that is SIGKILLed frees it within
TRAJHUB_LLM_SLOT_SECONDS, not after the call's timeout and all its retries (7 minutes with
the settings below, 2.5 with the defaults)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import uuid

import pytest

from tests.conftest import skip_or_fail
from tests.infra.test_processes import ROOT, _service_urls

pytestmark = pytest.mark.services
LEASE = 1.5
HOLD = """
import time, django
django.setup()
from apps.learn.services import llm_config, llm_slot
with llm_slot(llm_config()):
    print("held", flush=True)
    time.sleep(600)
"""
TAKE = """
import django
django.setup()
from apps.learn.services import llm_config, llm_slot
print("asking", flush=True)
with llm_slot(llm_config()):
    print("taken", flush=True)
"""


@pytest.fixture
def env():
    _, redis_url = _service_urls(suffix="learnslot")
    try:
        import redis as redis_lib

        redis_lib.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except Exception as exc:
        skip_or_fail(f"Redis is not reachable at {redis_url} ({exc}); install and start it")
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CELERY_", "DJANGO_", "TRAJHUB_", "PYTEST_"))
    }
    return environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_SECRET_KEY": "llm-slot-test-only",
        "REDIS_URL": redis_url,
        # An endpoint of its own (slots are per endpoint); never called.
        "TRAJHUB_LLM_BASE_URL": f"http://127.0.0.1:9/{uuid.uuid4().hex}/v1",
        "TRAJHUB_LLM_MODEL": "writer-1",
        "TRAJHUB_LLM_CONCURRENCY": "1",
        "TRAJHUB_LLM_TIMEOUT": "60",
        "TRAJHUB_LLM_MAX_RETRIES": "4",
        "TRAJHUB_LLM_SLOT_SECONDS": str(LEASE),
        "PYTHONUNBUFFERED": "1",
    }


def _start(script: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _line(process: subprocess.Popen, expected: str, timeout: float = 60) -> None:
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"no {expected!r} from the process within {timeout:.0f} s"
    line = process.stdout.readline().strip()
    assert line == expected, f"{line!r}: {process.stdout.read() if process.poll() else ''}"


def test_a_killed_holder_frees_its_slot_within_the_lease(env):
    holder = _start(HOLD, env)
    taker = None
    try:
        _line(holder, "held")
        taker = _start(TAKE, env)
        _line(taker, "asking")
        # The holder lives: its lease is renewed, however many leases its call lasts.
        time.sleep(4 * LEASE)
        assert taker.poll() is None, "the slot was taken from a live holder"
        os.killpg(holder.pid, signal.SIGKILL)
        killed = time.monotonic()
        _line(taker, "taken", timeout=30)
        waited = time.monotonic() - killed
        # Within one lease (and the taker's 20 ms polling), with room for a loaded machine.
        assert waited < LEASE + 2.0, f"the slot came free {waited:.1f} s after the kill"
        assert taker.wait(timeout=30) == 0
    finally:
        for process in (holder, taker):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
