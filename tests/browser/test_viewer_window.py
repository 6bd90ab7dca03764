"""The windowed trajectory page (issue 24) in real Chromium: a long trajectory holds only the
cards near the screen however far the reader goes, and a permalink deep in, the slider, the keys,
find, the filter, Back and the way back to the top still work on it."""

from __future__ import annotations

import re

import pytest

from tests.trajectories.viewer_factories import ingest, session_bytes

ELEMENTS = "() => document.getElementsByTagName('*').length"
CARDS = "ol#events > li"
# The card nearest the middle of the window, once the cards around it are on the page.
MIDDLE_CARD = """() => {
  const y = innerHeight / 2;
  for (const li of document.querySelectorAll('ol#events > li')) {
    const r = li.getBoundingClientRect();
    if (r.top <= y + 5 && r.bottom >= y - 5) return +li.dataset.step;
  }
  return null;
}"""
SETTLED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


@pytest.fixture
def long_trajectory(owner, transactional_db):
    return ingest(
        session_bytes(2001, screenshots=10, output_lines=20), owner=owner, visibility="public"
    )


def on_screen(page, step: int) -> bool:
    return page.evaluate(
        f"() => {{ const n = document.getElementById('step-{step}'); if (!n) return false;"
        " const r = n.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }"
    )


def wait_for_card_in_middle(page) -> int:
    page.wait_for_function(MIDDLE_CARD)
    return page.evaluate(MIDDLE_CARD)


def test_a_full_scroll_of_2001_steps_stays_under_3000_elements(browser_page, long_trajectory):
    bp, page = browser_page, browser_page.page
    bp.goto(long_trajectory.get_absolute_url())
    page.wait_for_selector("#tools:not([hidden])")
    page.evaluate(SETTLED)
    opened = page.evaluate(ELEMENTS)
    # The document is as long as the whole trajectory from the start (placeholders' height).
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > 2001 * 60, height
    assert page.locator(CARDS).count() < 100  # the server's first chunk, trimmed to the window

    peak = opened
    seen: set[int] = set()
    page.mouse.move(640, 500)
    for _ in range(2000):
        page.mouse.wheel(0, 1600)
        page.evaluate(SETTLED)
        step = wait_for_card_in_middle(page)  # never a blank screen once loaded
        seen.add(step)
        peak = max(peak, page.evaluate(ELEMENTS))
        if page.evaluate("scrollY + innerHeight >= document.documentElement.scrollHeight - 2"):
            break
    page.wait_for_selector("#step-2001", state="attached")
    assert on_screen(page, 2001)
    bp.screenshot("viewer-window-end")
    assert peak <= 3000, peak
    assert page.locator(CARDS).count() <= 160
    # Every part of the trajectory passed under the reader's eyes on the way down.
    assert len(seen) > 100 and max(seen) > 1990, sorted(seen)[-5:]
    assert all(any(start <= s < start + 200 for s in seen) for start in range(1, 2001, 200)), (
        sorted(seen)
    )

    # Back to the top by scrolling: step 1 is there again, the page still small.
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_selector("#step-1", state="attached")
    page.evaluate(SETTLED)
    assert on_screen(page, 1) or page.evaluate(
        "document.getElementById('step-1').getBoundingClientRect().top < innerHeight"
    )
    assert page.evaluate(ELEMENTS) <= 3000
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []


def test_permalink_deep_in_slider_keys_find_and_back_to_the_top(browser_page, long_trajectory):
    bp, page = browser_page, browser_page.page
    fetched: list[int] = []
    page.on(
        "response",
        lambda response: (
            fetched.append(len(response.body())) if "/events?" in response.url else None
        ),
    )
    bp.goto(long_trajectory.get_absolute_url() + "#step-1500")
    page.wait_for_function(
        "() => { const n = document.getElementById('step-1500');"
        " return n && n.classList.contains('is-target') && Math.abs(n.getBoundingClientRect().top) < 150; }"
    )
    bp.screenshot("viewer-window-permalink-1500")
    # The chunk around it only, not the 1,499 steps before it.
    assert sum(fetched) < 300_000, fetched
    assert page.locator("#step-100").count() == 0
    # The page around it fills in; step 1500 stays where the reader is looking.
    page.evaluate(SETTLED)
    top = page.evaluate("document.getElementById('step-1500').getBoundingClientRect().top")
    page.wait_for_selector("#step-1496", state="attached")
    page.wait_for_timeout(300)
    page.evaluate(SETTLED)
    after = page.evaluate("document.getElementById('step-1500').getBoundingClientRect().top")
    assert abs(after - top) < 2, (top, after)
    # Scrolling up shows the steps before it, fetched as they come.
    page.mouse.move(640, 500)
    for _ in range(6):
        page.mouse.wheel(0, -900)
        page.evaluate(SETTLED)
    step = wait_for_card_in_middle(page)
    assert 1400 < step < 1500, step
    assert page.evaluate(ELEMENTS) <= 3000

    # The slider back to step 3: a jump, and later steps leave.
    page.locator("#step-slider").fill("3")
    page.wait_for_function(
        "() => { const n = document.getElementById('step-3');"
        " return n && n.classList.contains('is-current'); }"
    )
    assert on_screen(page, 3)
    assert page.locator("#step-4").count() == 0  # hidden while travelling in time: not on the page
    assert page.evaluate("location.hash") == "#step-3"
    assert page.locator("#step-status").inner_text().startswith("Step 3 of 2001")
    # Keys: j forward, k back.
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("j")
    page.wait_for_function(
        "() => document.getElementById('step-4')?.classList.contains('is-current')"
    )
    assert on_screen(page, 4)
    page.keyboard.press("k")
    page.wait_for_function(
        "() => document.getElementById('step-3')?.classList.contains('is-current')"
    )
    # The slider far forward, then End: every step shown again, the reader at the end.
    page.locator("#step-slider").fill("1800")
    page.wait_for_function(
        "() => document.getElementById('step-1800')?.classList.contains('is-current')"
    )
    assert on_screen(page, 1800)
    page.keyboard.press("End")
    page.wait_for_function(
        "() => document.getElementById('step-status').textContent === 'All 2001 steps'"
    )
    page.wait_for_selector("#step-2001", state="attached")
    page.evaluate(SETTLED)
    assert on_screen(page, 2001)

    # Find as you type: the first match from the reader's place is on screen.
    page.locator("#find-input").click()
    page.locator("#find-input").press_sequentially("round 17", delay=60)
    page.wait_for_function(
        "() => { const m = document.querySelector('mark.find-hit-current'); if (!m) return false;"
        " const r = m.getBoundingClientRect(); return r.top > 0 && r.bottom < innerHeight; }"
    )
    status = page.locator("#find-status").inner_text()
    matches = re.match(r"1 / (\d+) steps? · (\d+) match", status)
    assert matches and int(matches.group(1)) >= 2, status
    first = page.locator("mark.find-hit-current").evaluate("m => +m.closest('li').dataset.step")
    # Enter: the next match, wherever it is.
    page.locator("#find-input").press("Enter")
    page.wait_for_function(
        f"() => {{ const m = document.querySelector('mark.find-hit-current');"
        f" return m && +m.closest('li').dataset.step !== {first}; }}"
    )
    assert page.locator("#find-status").inner_text().startswith("2 / ")
    bp.screenshot("viewer-window-find")

    # Home goes back to step 1.
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("Home")
    page.wait_for_function(
        "() => document.getElementById('step-1')?.classList.contains('is-current')"
    )
    assert on_screen(page, 1)
    assert page.evaluate(ELEMENTS) <= 3000
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []


def test_filter_back_and_print_all_on_a_long_trajectory(browser_page, owner):
    trajectory = ingest(
        session_bytes(600, screenshots=0, output_lines=5), owner=owner, visibility="public"
    )
    bp, page = browser_page, browser_page.page
    bp.goto(trajectory.get_absolute_url())
    page.wait_for_selector("#tools:not([hidden])")
    # Hide every type but "think": the page shows only thinks, however far they are apart.
    page.locator("#type-filter summary").click()
    page.locator("#type-filter [data-types=none]").click()
    page.locator("#type-filter input[value=think]").check()
    page.locator("#type-filter summary").click()
    page.wait_for_function("() => document.querySelectorAll('ol#events > li').length > 3")
    types = page.locator(CARDS).evaluate_all("els => els.map(e => e.dataset.type)")
    assert set(types) == {"think"}, types
    page.mouse.move(640, 500)
    for _ in range(30):
        page.mouse.wheel(0, 2000)
        page.evaluate(SETTLED)
    page.wait_for_timeout(300)
    late = page.locator(CARDS).evaluate_all("els => els.map(e => +e.dataset.step)")
    assert max(late) > 500, late
    page.locator("#type-filter summary").click()
    page.locator("#type-filter [data-types=all]").click()
    page.locator("#type-filter summary").click()

    # The reader's place survives a reload (the history entry keeps it).
    page.evaluate("window.scrollTo(0, 20000)")
    step = wait_for_card_in_middle(page)
    page.wait_for_timeout(500)
    page.reload()
    page.wait_for_selector("#tools:not([hidden])")
    page.wait_for_function(
        f"() => {{ const n = document.getElementById('step-{step}');"
        " return n && n.getBoundingClientRect().top < innerHeight && n.getBoundingClientRect().bottom > 0; }"
    )

    # Print all: every step on the page for the printout, then back to the window.
    page.evaluate(
        "() => { window.print = () => {"
        " window.__printed = document.querySelectorAll('ol#events > li').length; }; }"
    )
    page.locator("[data-go=print]").click()
    page.wait_for_function("() => window.__printed !== undefined")
    assert page.evaluate("window.__printed") == 600
    page.wait_for_function("() => document.querySelectorAll('ol#events > li').length < 200")
    page.emulate_media(media="print")
    bp.screenshot("viewer-window-print")
    page.emulate_media(media="screen")
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []
