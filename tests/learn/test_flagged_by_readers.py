"""The filter that drops windows readers flagged as wrong (apps/learn/quality.py,
FlaggedByReadersFilter, over apps.feedback.consensus): the window's bounds against the steps
rated wrong and against the majority's first wrong step, then a whole run that counts it in the
filter report."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from apps.feedback.consensus import FirstWrong, RatedWrong, ReadersVerdict
from apps.feedback.services import Author, step_feedback_give
from apps.learn.models import Example, ExampleState, SynthesisRun, Window
from apps.learn.quality import Candidate, FlaggedByReadersFilter
from tests.learn.factories import make_session


def candidate(start: int, end: int, trajectory_id: int = 1) -> Candidate:
    return Candidate(
        id=start * 100 + end,
        instruction="do it",
        steps=[],
        num_actions=1,
        trajectory_id=trajectory_id,
        start_position=start,
        end_position=end,
    )


def judged(verdict: ReadersVerdict, *windows: tuple[int, int]) -> list[str]:
    """Each window's reason for being dropped ("" : kept)."""
    asked: list[list[int]] = []

    def verdicts(ids: list[int]) -> dict[int, ReadersVerdict]:
        asked.append(ids)
        return {1: verdict}

    found = FlaggedByReadersFilter(verdicts).check([candidate(*w) for w in windows])
    assert asked == [[1]]  # once per batch, not once per window
    assert all(v.kept == (not v.reason) for v in found)
    return [v.reason for v in found]


def test_a_step_rated_wrong_drops_the_windows_that_hold_it_and_no_other():
    rated = ReadersVerdict(rated_wrong=[RatedWrong(position=5, good=1, bad=2)])
    reasons = judged(rated, (5, 8), (1, 5), (3, 7), (6, 9), (0, 4))
    assert reasons[:3] == ["readers rated step 6 wrong (2 bad, 1 good)"] * 3
    assert reasons[3:] == ["", ""]  # starts just after it, ends just before it


def test_the_first_wrong_step_drops_what_holds_or_follows_it_and_keeps_what_ends_before():
    first = ReadersVerdict(first_wrong=FirstWrong(position=5, votes=2, markers=3))
    reasons = judged(first, (0, 4), (0, 5), (5, 6), (6, 9))
    assert reasons[0] == ""
    assert (
        reasons[1]
        == reasons[2]
        == (
            "the window holds step 6, where 2 of the 3 readers who marked one say the run first "
            "went wrong"
        )
    )
    assert reasons[3].startswith("the window comes after step 6")


def test_no_verdict_keeps_everything():
    def verdicts(ids):
        return {}

    assert all(v.kept for v in FlaggedByReadersFilter(verdicts).check([candidate(0, 9)]))


COMMANDS = [
    ("git status", "On branch main"),
    ("pytest tests/test_login.py", "1 failed"),
    ("rm -rf app/", ""),
    ("pytest tests/test_login.py", "no tests ran"),
]


@pytest.mark.django_db
def test_a_run_drops_the_flagged_windows_and_reports_them(fake_llm, django_user_model):
    fix = make_session("Fix the login bug", COMMANDS)
    clean = make_session("Paginate the API", [("grep -rn page api/", "x"), ("cat a.py", "y")])
    # Positions: 0 the task, then each command (1, 3, 5, 7) and its output (2, 4, 6, 8). Two of
    # three readers say `rm -rf app/` (step 6) is where it went wrong; one thinks step 8.
    for number, step in enumerate([6, 6, 8]):
        reader = django_user_model.objects.create_user(f"reader{number}")
        step_feedback_give(
            trajectory=fix,
            step=step,
            author=Author(user=reader, client_ip="10.0.0.1"),
            first_wrong=True,
        )
    out = io.StringIO()
    call_command("synthesize", stdout=out, stderr=io.StringIO())

    stats = SynthesisRun.objects.get().stats
    flagged = Example.objects.filter(dropped_by="flagged_by_readers")
    assert stats["flagged_by_readers"]["dropped"] == flagged.count() > 0
    assert "flagged_by_readers" in out.getvalue()
    # Exactly the windows of `fix` that end at or after position 5, and none of `clean`.
    ends = {e.window.end_position for e in flagged.select_related("window")}
    assert ends and min(ends) >= 5
    assert not flagged.filter(trajectory=clean).exists()
    before = Window.objects.filter(trajectory=fix, end_position__lt=5)
    assert before.exists()
    assert not Example.objects.filter(window__in=before, dropped_by="flagged_by_readers").exists()
    reason = flagged.first().verdicts[-1]
    assert reason["filter"] == "flagged_by_readers" and "step 6" in reason["reason"]
    # What the readers flagged is never served.
    served = set(Example.objects.filter(state=ExampleState.KEPT).values_list("pk", flat=True))
    assert not served & set(flagged.values_list("pk", flat=True))
