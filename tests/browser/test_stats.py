"""/stats/ in real Chromium (issue 11): charts drawn, numbers in a table, readable on a phone."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from tests.browser.conftest import PHONE
from tests.trajectories.site_factories import make_trajectory


def test_stats_page_on_desktop_and_phone(browser_page):
    now = timezone.now()
    agents = [
        "CodeActAgent",
        "SWE-agent",
        "BrowsingAgent",
        "a-very-long-agent-name-that-goes-on-and-on",
    ]
    for n in range(24):
        make_trajectory(
            agent=agents[n % 4],
            model_name=["gpt-4o", "claude-3-5-sonnet", "llama-4"][n % 3],
            num_events=[5, 40, 90, 300, 1200, 2500][n % 6],
            polarity=["positive", "negative", "none"][n % 3],
            age_minutes=n * 60 * 24 * 5,
            started_at=now - timedelta(minutes=n * 7),
            ended_at=now,
            total_tokens=1000 * n,
            total_cost=0.05 * n,
        )
    bp, page = browser_page, browser_page.page
    bp.goto("/stats/")
    assert page.locator("svg.chart").count() >= 7
    assert page.locator("#per-week rect.chart-bar").count() == 26
    box = page.locator("#by-agent svg").bounding_box()
    assert box["width"] > 300 and box["height"] > 40
    page.locator("#by-agent summary").click()
    assert "CodeActAgent" in page.locator("#by-agent table").inner_text()
    # Cards side by side are level with each other.
    tops = [page.locator(f"#{card}").bounding_box()["y"] for card in ("per-week", "by-agent")]
    assert abs(tops[0] - tops[1]) < 1, tops
    bp.screenshot("stats-desktop", full_page=True)
    page.set_viewport_size(PHONE)
    bp.screenshot("stats-phone", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    # Chart text stays legible on a phone (at least ~9 px once scaled).
    size = page.evaluate(
        "document.querySelector('#by-agent text.chart-label').getBoundingClientRect().height"
    )
    assert size >= 11
    # No label runs out of its chart on the left (the long one is cut with an ellipsis).
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('svg.chart-bars')].flatMap(svg => {
            const left = svg.getBoundingClientRect().left;
            return [...svg.querySelectorAll('text.chart-label')]
                .filter(t => t.getBoundingClientRect().left < left - 0.5)
                .map(t => t.textContent); })"""
    )
    assert clipped == [], clipped
    # Table headings are not split inside a word ("Trajecto-ries").
    heading = page.locator("#by-agent th").last
    line = float(
        page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('#by-agent th')).lineHeight) || 20"
        )
    )
    assert heading.bounding_box()["height"] < 1.6 * line
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []
