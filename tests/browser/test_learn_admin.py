"""The Learn-by-interact admin in real Chromium: an example next to its source window with the
filters' verdicts, the example list, and a run with kept / dropped per filter. Screenshots at
1280 px: learn-admin-example, learn-admin-examples, learn-admin-run."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.learn.models import Example, SynthesisRun
from tests.browser.test_moderation import assert_quiet
from tests.learn.factories import make_example, make_session

LONG_OUTPUT = "\n".join(
    f"tests/test_views.py::test_case_{n:03d} PASSED" + " " * 3 + "x" * (40 + n % 7) * 3
    for n in range(40)
)


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("staff-learn", is_staff=True, is_superuser=True)


@pytest.fixture
def examples():
    trajectory = make_session(
        "The login form rejects valid passwords after the upgrade",
        [("pytest tests/test_views.py", LONG_OUTPUT), ("git diff", "diff --git a/app.py")],
    )
    kept = make_example(
        trajectory,
        "Run the view tests and show what changed in app.py",
        start=0,
        end=2,
        steps=[
            {"role": "observation", "text": trajectory.title, "first": 0, "last": 0},
            {"role": "action", "text": "pytest tests/test_views.py", "first": 1, "last": 1},
            {"role": "observation", "text": LONG_OUTPUT, "first": 2, "last": 2},
            {"role": "action", "text": "git diff", "first": 3, "last": 3},
            {"role": "observation", "text": "diff --git a/app.py", "first": 4, "last": 4},
        ],
    )
    Example.objects.filter(pk=kept.pk).update(
        verdicts=[
            {"filter": "scan", "kept": True, "reason": ""},
            {"filter": "length", "kept": True, "reason": ""},
            {"filter": "errors_only", "kept": True, "reason": ""},
            {"filter": "near_duplicate", "kept": True, "reason": ""},
            {"filter": "committee", "kept": True, "reason": "judge-a: yes to all four"},
        ]
    )
    dropped = make_example(trajectory, "Show the diff", start=1, end=2, state="dropped")
    Example.objects.filter(pk=dropped.pk).update(
        dropped_by="committee",
        verdicts=[
            {"filter": "scan", "kept": True, "reason": ""},
            {"filter": "committee", "kept": False, "reason": "judge-a: not reasonable"},
        ],
    )
    SynthesisRun.objects.create(
        state="done",
        model="writer-1",
        judge_models=["judge-a"],
        prompt_version=1,
        trajectories_total=1,
        trajectories_done=1,
        llm_calls=9,
        prompt_tokens=5400,
        completion_tokens=320,
        cost=0.0061,
        stats={
            "scan": {"kept": 2, "dropped": 0},
            "committee": {"kept": 1, "dropped": 1},
            "repeats": {"removed": 0},
            "total": {"candidates": 2, "kept": 1, "dropped": 1, "not_judged": 0},
        },
    )
    return kept, dropped


def test_an_example_beside_its_window_and_verdicts(
    browser_page, browser_login, staff_user, examples
):
    kept, dropped = examples
    browser_login(browser_page.context, staff_user)
    page = browser_page.page
    browser_page.goto("/admin/learn/example/")
    browser_page.screenshot("learn-admin-examples")
    assert "Run the view tests" in page.locator("#result_list").inner_text()
    browser_page.goto(f"/admin/learn/example/{kept.pk}/change/")
    browser_page.screenshot("learn-admin-example", full_page=True)
    window = page.locator("table.learn-window")
    verdicts = page.locator("table.learn-verdicts")
    assert window.is_visible() and verdicts.is_visible()
    assert "pytest tests/test_views.py" in window.inner_text()
    assert "judge-a: yes to all four" in verdicts.inner_text()
    # Side by side at 1280 px, and nothing wider than the page.
    window_box, verdicts_box = window.bounding_box(), verdicts.bounding_box()
    assert verdicts_box["x"] >= window_box["x"] + window_box["width"] - 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    browser_page.screenshot("learn-admin-example", full_page=True)
    browser_page.goto(f"/admin/learn/example/{dropped.pk}/change/")
    assert "judge-a: not reasonable" in page.locator("table.learn-verdicts").inner_text()
    browser_page.goto("/admin/learn/synthesisrun/")
    run = SynthesisRun.objects.get()
    page.get_by_role("link", name=str(run.pk)).first.click()
    # The click navigates: read the run's page once it is there, not the list it leaves (a
    # clean-clone CI run read an empty body at the new address).
    page.wait_for_url(f"**/admin/learn/synthesisrun/{run.pk}/change/")
    expect(page.locator("#content")).to_contain_text("committee")
    browser_page.screenshot("learn-admin-run", full_page=True)
    assert_quiet(browser_page)
