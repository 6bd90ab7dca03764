"""The Result card and tool-call cards in real Chromium (issue 11), on the suite's own samples:
readable on a desktop and a phone, nothing sideways, no script errors."""

from __future__ import annotations

from tests.browser.conftest import PHONE
from tests.trajectories.viewer_factories import ingest


def test_result_card_and_tool_cards(browser_page, owner, sample):
    evaluation = ingest(sample("openhands_eval_output.jsonl"), owner=owner, visibility="public")
    chat = ingest(sample("openai_messages.json"), owner=owner, visibility="public")
    sharegpt = ingest(sample("sharegpt_conversations.json"), owner=owner, visibility="public")
    bp, page = browser_page, browser_page.page

    bp.goto(evaluation.get_absolute_url())
    card = page.locator("#result")
    assert card.is_visible()
    assert "Resolved" in card.inner_text() and "greet__greet-1" in card.inner_text()
    assert page.locator("#result .d-add").count() >= 3
    bp.screenshot("result-card-desktop")
    page.set_viewport_size(PHONE)
    bp.screenshot("result-card-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1

    page.set_viewport_size({"width": 1280, "height": 900})
    bp.goto(chat.get_absolute_url())
    command = page.locator("#step-3")
    assert command.locator(".ev-title").inner_text() == "Command"
    assert "wc -l greet.py" in command.locator(".blk-code").inner_text()
    bp.screenshot("tool-call-openai")

    bp.goto(sharegpt.get_absolute_url())
    page.locator("#tools-offered summary").click()
    assert "get_weather" in page.locator("#tools-offered").inner_text()
    assert "Current weather" in page.locator("#tools-offered").inner_text()
    assert page.locator("#step-1 .ev-title").inner_text() == "System prompt"
    call = page.locator("li[data-type=get_weather]").first
    assert "Paris" in call.inner_text()
    bp.screenshot("tool-call-sharegpt", full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert bp.dialogs == [] and bp.page_errors == [] and bp.console_errors == []
