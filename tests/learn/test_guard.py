"""A run stops early when a model's first answers cannot be read, and a dry run says what a run
would spend without spending it (issue 20: an endpoint whose judges answered in words spent
1,365 calls and 1.46 M prompt tokens and kept nothing, with no warning until the end).

Against the suite's stand-in LLM server (tests/learn/llm_server.py), through the real client.
"""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from apps.learn.guard import SynthesisAborted, UnreadableGuard
from apps.learn.models import Example, ExampleState, RunState, SynthesisRun, Window
from tests.learn.test_admin import logged_in, may_start
from tests.learn.test_synthesis import sessions

pytestmark = pytest.mark.django_db

STOP_AFTER = 4


def synthesize(*args: str) -> str:
    out = io.StringIO()
    call_command("synthesize", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_judges_answering_in_words_stop_the_run_after_their_first_answers(fake_llm, settings):
    settings.TRAJHUB_SYNTH_STOP_UNREADABLE = STOP_AFTER
    fake_llm.garbled_judges = True
    sessions()  # 13 windows: 26 examples, 52 judge calls if nothing stopped it
    with pytest.raises(CommandError) as stopped:
        synthesize()
    message = str(stopped.value)
    assert f"the first {STOP_AFTER} answers of model 'judge-" in message
    assert "JSON of yes/no answers the committee filter reads" in message
    judged = fake_llm.ok("judge")
    # Both judges' first answers, and at most the calls already in flight (concurrency 3).
    assert len(judged) <= 2 * STOP_AFTER + settings.TRAJHUB_LLM_CONCURRENCY < 52
    run = SynthesisRun.objects.get()
    assert run.state == RunState.FAILED and run.error.startswith("stopped early")
    # The examples stay candidates for a run against a working judge: nothing half-judged.
    assert set(Example.objects.values_list("state", flat=True)) == {ExampleState.CANDIDATE}


def test_a_writer_without_fenced_blocks_stops_the_synthesis(fake_llm, settings):
    settings.TRAJHUB_SYNTH_STOP_UNREADABLE = STOP_AFTER
    fake_llm.no_fence = True
    sessions()
    with pytest.raises(CommandError, match="none had the fenced block"):
        synthesize()
    written = fake_llm.ok("task") + fake_llm.ok("replicate")
    assert len(written) <= STOP_AFTER + settings.TRAJHUB_LLM_CONCURRENCY < 26
    assert not fake_llm.ok("judge")
    run = SynthesisRun.objects.get()
    assert run.state == RunState.FAILED and "'writer-1'" in run.error


def test_the_stop_shows_in_the_admin(fake_llm, settings, staff, django_capture_on_commit_callbacks):
    """The workers' path (one task per trajectory, then the filter task), started from the
    admin: the run list and the run's page say why it stopped."""
    settings.TRAJHUB_SYNTH_STOP_UNREADABLE = STOP_AFTER
    fake_llm.garbled_judges = True
    sessions()
    client = logged_in(may_start(staff))
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/learn/synthesisrun/start/")
    run = SynthesisRun.objects.get()
    assert run.state == RunState.FAILED
    listed = client.get("/admin/learn/synthesisrun/").content.decode()
    assert "stopped because" in listed.lower() and "stopped early: the first" in listed
    page = client.get(f"/admin/learn/synthesisrun/{run.pk}/change/").content.decode()
    assert "could not be read" in page


def test_one_readable_answer_and_the_model_is_trusted(settings):
    settings.TRAJHUB_SYNTH_STOP_UNREADABLE = 3
    guard = UnreadableGuard(run_id=991, started=1.0, phase="judge")
    guard.answered("judge-a", readable=True)
    for _ in range(10):
        guard.answered("judge-a", readable=False)  # later bad answers do not stop it
    guard.answered("judge-b", readable=False)
    guard.answered("judge-b", readable=False)
    with pytest.raises(SynthesisAborted, match="'judge-b'"):
        guard.answered("judge-b", readable=False)
    settings.TRAJHUB_SYNTH_STOP_UNREADABLE = 0  # off
    off = UnreadableGuard(run_id=992, started=1.0, phase="judge")
    for _ in range(10):
        off.answered("judge-c", readable=False)


def _figures(text: str) -> dict[str, int]:
    found = re.search(
        r"at most (\d+) LLM calls \((\d+) to write instructions for (\d+) windows of (\d+) "
        r"trajectories, then up to (\d+) to 2 judge models.*?at most (\d+) prompt tokens "
        r"\((\d+) \+ (\d+)",
        text,
        re.S,
    )
    assert found, text
    names = ["calls", "write", "windows", "trajectories", "judge", "tokens", "wtok", "jtok"]
    return dict(zip(names, map(int, found.groups()), strict=True))


def test_dry_run_states_calls_and_tokens_and_spends_nothing(fake_llm):
    sessions()
    said = synthesize("--dry-run")
    assert said.startswith("Dry run, nothing spent")
    assert fake_llm.served == [] and not SynthesisRun.objects.exists()
    assert not Window.objects.exists()  # nothing written either
    figures = _figures(said)
    assert figures["trajectories"] == 2 and figures["windows"] == 13
    # The run it describes, for real: the same calls, about the same prompt tokens.
    synthesize()
    writes = fake_llm.ok("task") + fake_llm.ok("replicate")
    judges = fake_llm.ok("judge")
    assert figures["write"] == len(writes) == 26
    # Every example judged by both judges at most: the filters before them drop some.
    assert figures["judge"] == 52 >= len(judges) > 0
    assert figures["calls"] == 78
    spent_writing = sum(s.prompt_tokens for s in writes)
    assert abs(figures["wtok"] - spent_writing) <= 0.05 * spent_writing
    per_judge_call = figures["jtok"] / figures["judge"]
    spent_per_call = sum(s.prompt_tokens for s in judges) / len(judges)
    assert abs(per_judge_call - spent_per_call) <= 0.3 * spent_per_call
    # Again once done: nothing left to write, nothing waiting to be judged.
    again = _figures(synthesize("--dry-run"))
    assert again["calls"] == 0 and again["windows"] == 0


def test_dry_run_from_the_admin(fake_llm, staff):
    sessions()
    client = logged_in(may_start(staff))
    page = client.get("/admin/learn/synthesisrun/").content.decode()
    assert "Dry run: what would it spend?" in page
    answer = client.post("/admin/learn/synthesisrun/start/", {"dry_run": "1"}, follow=True)
    assert (
        "Dry run, nothing spent: a run would make at most 78 LLM calls" in answer.content.decode()
    )
    assert fake_llm.served == [] and not SynthesisRun.objects.exists()


def test_dry_run_needs_the_permission_to_start(fake_llm, staff):
    assert Client().post("/admin/learn/synthesisrun/start/", {"dry_run": "1"}).status_code == 302
    response = logged_in(staff).post("/admin/learn/synthesisrun/start/", {"dry_run": "1"})
    assert response.status_code == 403
