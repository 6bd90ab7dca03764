"""Find on a trajectory with more matching steps than one answer holds (issue 24): the client
asks for a page of matches from the reader's place, shows their rank among all of them, and
Enter / Shift+Enter walk past either end of the page to every match."""

from __future__ import annotations

import re

import pytest

from tests.trajectories.viewer_factories import ingest, session_bytes

STATUS = re.compile(r"(\d+) / (\d+) steps? · (\d+) match")
CURRENT_STEP = (
    "() => { const m = document.querySelector('mark.find-hit-current');"
    " if (!m) return null; const r = m.getBoundingClientRect();"
    " return r.top >= 0 && r.bottom <= innerHeight ? +m.closest('li').dataset.step : null; }"
)


@pytest.fixture
def long_trajectory(owner, transactional_db):
    return ingest(
        session_bytes(2001, screenshots=0, output_lines=3), owner=owner, visibility="public"
    )


def _shown(page, not_step: int | None = None) -> tuple[int, int, int]:
    """(rank shown, matching steps, step of the match on screen) once a new one is on screen."""
    page.wait_for_function(
        f"() => {{ const s = ({CURRENT_STEP})(); return s !== null && s !== {not_step or -1}; }}"
    )
    status = page.locator("#find-status").inner_text()
    found = STATUS.match(status)
    assert found, status
    return int(found.group(1)), int(found.group(2)), page.evaluate(CURRENT_STEP)


def test_find_walks_every_match_past_the_page_from_the_readers_place(browser_page, long_trajectory):
    bp, page = browser_page, browser_page.page
    answers: list[dict] = []
    page.on(
        "response",
        lambda response: "/find?" in response.url and answers.append(response.json()),
    )
    bp.goto(long_trajectory.get_absolute_url())
    page.wait_for_selector("#tools:not([hidden])")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("End")
    page.wait_for_function(
        "() => document.getElementById('step-status').textContent === 'All 2001 steps'"
    )
    page.locator("#find-input").click()
    page.locator("#find-input").press_sequentially("e", delay=40)
    rank, matched, step = _shown(page)
    # Far past the first 500 matches (the page the client asks for): found from where the
    # reader is, and counted among all of them.
    assert matched > 1500 and rank > 1000 and step > 1500, (rank, matched, step)
    # Back across the start of the page it was given: the match before, from the page before.
    page.locator("#find-input").press("Shift+Enter")
    back, _, earlier = _shown(page, step)
    assert (back, earlier < step) == (rank - 1, True)
    # Forward to the last match, then round to the first.
    for _ in range(matched - back + 1):
        page.locator("#find-input").press("Enter")
        back, _, earlier = _shown(page, earlier)
    assert back == 1 and earlier < 10, (back, earlier)
    page.locator("#find-input").press("Shift+Enter")
    last, _, at = _shown(page, earlier)
    assert last == matched and at > 1990, (last, at)
    # Pages, never all 2,001 matches at once: the walk above asked for the ones beyond.
    assert answers and all(len(answer["steps"]) <= 500 for answer in answers)
    assert len({answer["offset"] for answer in answers}) >= 3
    bp.screenshot("viewer-find-pages")
