"""The whole pipeline against a real OpenAI-compatible HTTP server (tests/learn/llm_server.py):
the real client, retries, accounting, resumption and the filters."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from apps.learn.models import Example, ExampleState, RunState, SynthesisRun, Window, WindowState
from apps.learn.retrieval import index
from tests.learn.factories import make_session

pytestmark = pytest.mark.django_db

COMMANDS = [
    ("git status", "On branch main\nnothing to commit"),
    ("pytest tests/test_login.py", "3 passed in 0.2s"),
    ("sed -i s/old/new/ app/login.py", ""),
    ("pytest tests/test_login.py", "4 passed in 0.2s"),
]


def sessions():
    return [
        make_session("Fix the login bug", COMMANDS),
        make_session(
            "Paginate the API",
            [
                ("grep -rn paginate api/", "api/views.py:10"),
                ("cat api/views.py", "class ListView: ..."),
            ],
        ),
        make_session("Private work", [("cat secret_plan.txt", "plan")], visibility="private"),
        make_session("Held work", [("cat held_plan.txt", "plan")], review_state="held"),
    ]


def synthesize(*args: str) -> str:
    out = io.StringIO()
    call_command("synthesize", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_synthesis_end_to_end_with_faults_accounting_and_rerun(fake_llm):
    fix, paginate, private, held = sessions()
    fake_llm.script = [429, 500, ("slow", 0.2)]
    output = synthesize()

    windows = Window.objects.all()
    # Only approved public trajectories: 4 actions -> 10 windows, 2 actions -> 3 windows.
    assert {w.trajectory_id for w in windows} == {fix.pk, paginate.pk}
    assert windows.count() == 13
    assert set(windows.values_list("state", flat=True)) == {WindowState.DONE}
    # One answer per window and prompt type: the two faults were retried, nothing asked twice.
    written = fake_llm.ok("task") + fake_llm.ok("replicate")
    assert len(written) == 26 == len({s.digest for s in written})
    assert Example.objects.count() == 26
    assert not any(
        "secret_plan" in p or "held_plan" in p
        for p in Example.objects.values_list("instruction", flat=True)
    )
    # The committee: both judge models asked about every example that reached it.
    judged = fake_llm.ok("judge")
    assert {s.model for s in judged} == {"judge-a", "judge-b"}

    run = SynthesisRun.objects.get()
    assert run.state == RunState.DONE
    assert run.llm_retries == 2
    ok = fake_llm.ok()
    assert run.llm_calls == len(ok)
    assert run.prompt_tokens == sum(s.prompt_tokens for s in ok)
    assert run.completion_tokens == sum(s.completion_tokens for s in ok)
    assert run.cost == pytest.approx((run.prompt_tokens * 1.0 + run.completion_tokens * 2.0) / 1e6)
    stats = run.stats
    assert stats["total"]["candidates"] == 26
    assert stats["total"]["kept"] + stats["total"]["dropped"] == 26
    assert stats["committee"]["kept"] == stats["total"]["kept"] > 0
    # The fixed "Do: <actions>" answers repeat across windows: near-duplicates go.
    assert stats["near_duplicate"]["dropped"] > 0
    for name in ("scan", "length", "errors_only", "near_duplicate", "committee"):
        assert f"{name}" in output
    assert "kept" in output and "dropped" in output and f"{run.prompt_tokens} prompt" in output
    kept = Example.objects.filter(state=ExampleState.KEPT)
    assert all(e.verdicts[-1]["filter"] == "committee" for e in kept)
    dropped = Example.objects.filter(state=ExampleState.DROPPED).first()
    assert dropped.dropped_by and dropped.verdicts[-1]["reason"]
    # The index was rebuilt with what was kept.
    assert len(index.current()) == kept.count()

    # Run twice: no window is written again.
    before = len(fake_llm.served)
    synthesize()
    again = fake_llm.served[before:]
    assert [s for s in again if s.kind in ("task", "replicate")] == []
    assert Example.objects.count() == 26


def test_judge_no_drops_and_records_why(fake_llm):
    make_session(
        "Paginate the API",
        [("grep -rn paginate api/", "api/views.py:10"), ("cat api/views.py", "class ListView")],
    )
    fake_llm.reject_words = ("grep",)
    synthesize()
    dropped = Example.objects.filter(dropped_by="committee")
    assert dropped.exists()
    for example in dropped:
        assert "not aligned" in example.verdicts[-1]["reason"]
        assert "grep" in example.instruction


def test_what_the_llm_writes_is_scanned(fake_llm):
    key = "AKIAIOSFODNN7EXAMPLF"
    make_session(
        "Deploy", [(f"aws configure set aws_access_key_id {key}", "ok"), ("aws s3 ls", "bucket")]
    )
    synthesize()
    leaked = Example.objects.filter(instruction__contains=key)
    assert leaked.exists()
    assert set(leaked.values_list("state", "dropped_by")) == {(ExampleState.DROPPED, "scan")}
    index.current()
    assert not Example.objects.filter(state=ExampleState.KEPT, instruction__contains=key).exists()


def test_answers_without_a_fenced_block_invent_nothing(fake_llm):
    make_session("Paginate", [("cat api/views.py", "class ListView")])
    fake_llm.no_fence = True
    synthesize()
    assert Example.objects.count() == 0
    window = Window.objects.get()
    assert window.state == WindowState.DONE and "no fenced block" in window.error


def test_no_endpoint_says_so_and_invents_nothing(no_llm):
    make_session("Paginate", [("cat api/views.py", "class ListView")])
    with pytest.raises(CommandError, match="No LLM endpoint is configured.*TRAJHUB_LLM_BASE_URL"):
        synthesize()
    assert not Example.objects.exists() and not SynthesisRun.objects.exists()


def test_4xx_is_not_retried_and_a_refused_key_stops_the_run(fake_llm):
    make_session("Paginate", [("cat api/views.py", "class ListView"), ("ls", "a")])
    fake_llm.script = [401] * 50
    with pytest.raises(CommandError, match="401"):
        synthesize()
    # Each call tried once: 401 is not transient.
    assert all(s.status == 401 for s in fake_llm.served)
    assert len(fake_llm.served) <= 3 * 2  # at most the calls in flight, never retried
    run = SynthesisRun.objects.get()
    assert run.state == RunState.FAILED and "401" in run.error
    # Nothing was lost: the claimed windows went back to pending, and the next run does them.
    assert set(Window.objects.values_list("state", flat=True)) == {WindowState.PENDING}
    fake_llm.script = []
    synthesize("--trajectory", str(Window.objects.first().trajectory_id))
    assert set(Window.objects.values_list("state", flat=True)) == {WindowState.DONE}
    assert Example.objects.count() == 2 * Window.objects.count()


def test_limit_takes_the_oldest(fake_llm):
    first = make_session("First", [("ls", "a")])
    make_session("Second", [("ls -la", "b")])
    synthesize("--limit", "1")
    assert set(Window.objects.values_list("trajectory_id", flat=True)) == {first.pk}


def test_a_trajectory_delivered_twice_is_counted_once(fake_llm):
    """The broker delivers a task again when a worker died after the work but before its
    acknowledgement: the second delivery must not count the trajectory again, or the run is
    filtered while another trajectory is still being written (its examples never judged)."""
    from apps.learn import services, tasks

    first = make_session("One", [("ls", "a"), ("pwd", "/")])
    second = make_session("Two", [("ls", "b"), ("pwd", "/tmp")])
    run = services.run_start()
    SynthesisRun.objects.filter(pk=run.pk).update(trajectories_total=2)
    queued = []
    original = tasks.filter_run.delay
    tasks.filter_run.delay = lambda run_id: queued.append(run_id)
    try:
        tasks.synthesize_trajectory.apply(args=(run.pk, first.pk))
        tasks.synthesize_trajectory.apply(args=(run.pk, first.pk))  # redelivered
        run.refresh_from_db()
        assert run.state == RunState.SYNTHESIZING and run.trajectories_done == 1
        assert queued == []
        tasks.synthesize_trajectory.apply(args=(run.pk, second.pk))
    finally:
        tasks.filter_run.delay = original
    run.refresh_from_db()
    assert run.state == RunState.FILTERING and run.trajectories_done == 2
    assert queued == [run.pk]
