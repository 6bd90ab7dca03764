"""Step feedback in real Chromium: a reader rates, marks the first wrong step and corrects a
step's action through the step's feedback form; the trajectory page then shows the ratings on
the card, the mark on the strip under the timeline and the correction, as a diff, next to the
step; a hostile correction stays text; one-click rating from the card (issue 23)."""

from __future__ import annotations

import pytest

from apps.feedback.models import FirstWrongMark, StepNote, StepRating
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.usefixtures("private_storage")


def test_a_reader_gives_feedback_through_the_form_and_the_viewer_shows_it(
    browser_page, browser_login, owner, other_user
):
    trajectory = make_trajectory(owner=owner, steps=6)
    bp, page = browser_page, browser_page.page
    browser_login(bp.context, other_user)

    bp.goto(f"/t/{trajectory.share_id}/steps/4/feedback")
    page.get_by_role("button", name="✗ Bad").click()
    page.wait_for_selector("text=Your rating is saved.")
    page.get_by_role("button", name="⚑ This is where it first went wrong").click()
    page.wait_for_selector("text=Your mark is saved.")
    page.locator("input[name=mode][value=action]").check()
    box = page.locator("#fb-correction")
    # The form starts from the step's action as readers see it.
    assert box.input_value() == "ls 1"
    box.fill("pytest -x tests/<script>alert('x')</script>")
    page.get_by_role("button", name="Save the correction").click()
    page.wait_for_selector("text=Your correction is saved.")
    assert StepRating.objects.get().value == "bad"
    assert FirstWrongMark.objects.get().step == 4
    assert StepNote.objects.get().mode == "action"
    bp.screenshot("feedback-step-page", full_page=True)

    bp.goto(trajectory.get_absolute_url())
    page.wait_for_selector("#step-4 .fb-bar")
    bar = page.locator("#step-4 .fb-bar").inner_text()
    assert "✗ 1" in bar and "1 first wrong" in bar and "1 correction" in bar
    page.wait_for_selector("#step-4 .fb-notes .fb-diff")
    diff = page.locator("#step-4 .fb-diff").inner_text()
    assert "-ls 1" in diff and "+pytest -x tests/<script>alert('x')</script>" in diff
    page.wait_for_selector("#fb-strip rect.fb-mark[data-step='4']")
    page.locator("#step-4").scroll_into_view_if_needed()
    bp.screenshot("feedback-viewer")
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []

    # One click on the card rates another step, without leaving the page.
    page.locator("#step-2 .fb-bar button[data-rate=good]").click()
    page.wait_for_function(
        "() => document.querySelector('#step-2 .fb-bar button[data-rate=good]')"
        ".getAttribute('aria-pressed') === 'true'"
    )
    assert StepRating.objects.get(position=1).value == "good"
    assert page.locator("#step-2 .fb-bar button[data-rate=good]").inner_text() == "✓ 1"


def test_anonymous_reader_sees_counts_and_no_rating_buttons(browser_page, owner, other_user):
    trajectory = make_trajectory(owner=owner, steps=2)
    from apps.feedback.services import Author, step_feedback_give

    step_feedback_give(
        trajectory=trajectory,
        step=2,
        author=Author(user=other_user),
        rating="bad",
        comment="check the path first",
    )
    bp, page = browser_page, browser_page.page
    bp.goto(trajectory.get_absolute_url())
    page.wait_for_selector("#step-2 .fb-notes")
    assert page.locator("#step-2 .fb-bar button").count() == 0
    assert "✗ 1" in page.locator("#step-2 .fb-bar").inner_text()
    assert "check the path first" in page.locator("#step-2 .fb-notes").inner_text()
    assert bp.page_errors == [] and bp.console_errors == []
