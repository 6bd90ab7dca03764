"""The page of a coding agent's own session in real Chromium (issue 22): a Claude Code session
with thinking and a subagent, and a Codex CLI rollout with shell calls and a patch."""

from __future__ import annotations

import json

from tests.browser.test_upload import assert_quiet
from tests.conftest import SAMPLES_DIR
from tests.trajectories.viewer_factories import ingest


def _card(page, title: str):
    return page.locator("li.ev", has=page.locator(".ev-title", has_text=title))


def test_a_claude_code_session_with_thinking_a_subagent_and_an_edit(browser_page, owner):
    data = (SAMPLES_DIR / "claude_code_session.jsonl").read_bytes()
    lines = data.decode().splitlines()
    # One more turn: a failing test run and a to-do list update.
    base = json.loads(lines[2])
    lines += [
        json.dumps(
            {
                **base,
                "uuid": "t1",
                "type": "assistant",
                "message": {
                    "id": "msg_todo",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_todo",
                            "name": "TodoWrite",
                            "input": {
                                "todos": [
                                    {
                                        "content": "Add the flag",
                                        "status": "completed",
                                        "activeForm": "Adding",
                                    },
                                    {
                                        "content": "Test it",
                                        "status": "in_progress",
                                        "activeForm": "Testing",
                                    },
                                    {
                                        "content": "Update the README",
                                        "status": "pending",
                                        "activeForm": "Updating",
                                    },
                                ]
                            },
                        },
                        {
                            "type": "tool_use",
                            "id": "toolu_test",
                            "name": "Bash",
                            "input": {"command": "pytest -q"},
                        },
                    ],
                    "usage": {"input_tokens": 1200, "output_tokens": 300},
                },
            }
        ),
        json.dumps(
            {
                **base,
                "uuid": "t2",
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_todo",
                            "content": "Todos have been modified",
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_test",
                            "content": "1 failed",
                            "is_error": True,
                        },
                    ],
                },
            }
        ),
    ]
    trajectory = ingest("\n".join(lines).encode(), owner=owner, visibility="public")
    bp, page = browser_page, browser_page.page

    bp.goto(trajectory.get_absolute_url())

    thinking = _card(page, "Thinking").first
    assert thinking.locator("details.fold").count() == 1
    assert not thinking.locator("details.fold").evaluate("node => node.open")  # folded
    body = thinking.locator(".blk-body p", has_text="Look at the file first.")
    assert not body.is_visible()  # its first line is the summary; the text opens on a click
    thinking.locator("details.fold summary").click()
    assert body.is_visible()

    subagent = _card(page, "Subagent").first
    assert "Find the print" in subagent.inner_text() and "Explore" in subagent.inner_text()
    nested = page.locator("li.ev.is-sub")
    assert nested.count() >= 3  # its task, its search and what the search found
    left = page.evaluate("document.querySelector('li.ev.is-sub').getBoundingClientRect().left")
    main_left = subagent.evaluate("node => node.getBoundingClientRect().left")
    assert left > main_left + 20  # shown nested under the call that began it
    answer = _card(page, "Subagent's answer").first
    assert not answer.evaluate("node => node.classList.contains('is-sub')")

    edit = _card(page, "Edit file").first
    assert edit.locator("pre.diff").count() == 1
    assert "+VERBOSE = '--verbose' in sys.argv" in edit.locator("pre.diff").inner_text()

    todo = _card(page, "To-do list")
    assert "1 of 3 done" in todo.inner_text()
    assert todo.locator("li.task-done").inner_text().startswith("✓")
    assert (
        todo.locator("li.task-in_progress").count() == 1
        and todo.locator("li.task-todo").count() == 1
    )
    # The reply's token use, on its last card (the test run it asked for with the list).
    run = page.locator("li.ev", has=page.locator("pre", has_text="pytest -q")).last
    assert "1.5k tokens" in run.inner_text() and "tokens" not in todo.inner_text()

    failed = page.locator("li.ev.is-obs", has=page.get_by_text("1 failed"))
    assert failed.locator(".badge.tone-bad").inner_text() == "error"

    compacted = _card(page, "Context compacted")
    assert "auto" in compacted.inner_text()
    summary = _card(page, "Summary of the earlier conversation")
    assert summary.locator("details.fold").count() == 1
    bp.screenshot("viewer-claude-code-session", full_page=True)
    assert_quiet(bp)


def test_a_codex_rollout_with_shell_calls_and_a_patch(browser_page, owner):
    trajectory = ingest(
        (SAMPLES_DIR / "codex_rollout.jsonl").read_bytes(), owner=owner, visibility="public"
    )
    bp, page = browser_page, browser_page.page

    bp.goto(trajectory.get_absolute_url())

    context = _card(page, "Context").first
    assert not context.locator("details.fold").evaluate("node => node.open")
    commands = _card(page, "Command")
    assert commands.first.locator("pre code, pre").first.inner_text().strip() == "cat greet.py"
    patch = _card(page, "Patch")
    diff = patch.locator("pre.diff").inner_text()
    assert "+++ greet.py (update)" in diff and "+VERBOSE = '--verbose' in sys.argv" in diff
    assert "*** Begin Patch" not in diff
    assert patch.locator(".diff-stats .d-add").inner_text() == "+1"
    outputs = _card(page, "Output")
    assert outputs.count() >= 1 and "print('hello')" in outputs.first.inner_text()
    assert _card(page, "Thinking").locator("details.fold").count() == 1
    bp.screenshot("viewer-codex-rollout", full_page=True)
    assert_quiet(bp)


def test_a_gemini_cli_session_and_an_atif_trajectory_read_alike(browser_page, owner):
    gemini = ingest(
        (SAMPLES_DIR / "gemini_cli_session.jsonl").read_bytes(), owner=owner, visibility="public"
    )
    atif = ingest(
        (SAMPLES_DIR / "atif_trajectory.json").read_bytes(), owner=owner, visibility="public"
    )
    bp, page = browser_page, browser_page.page

    bp.goto(gemini.get_absolute_url())

    assert _card(page, "Thinking").first.locator("details.fold").count() == 1
    assert "1.3k tokens" in _card(page, "Thinking").first.inner_text()
    edit = _card(page, "Edit file").first
    assert "+VERBOSE = '--verbose' in sys.argv" in edit.locator("pre.diff").inner_text()
    failed = _card(page, "File content").first
    assert failed.locator(".badge.tone-bad").inner_text() == "error"
    assert _card(page, "Command").count() >= 2 and _card(page, "Output").count() >= 2
    bp.screenshot("viewer-gemini-session", full_page=True)
    assert_quiet(bp)

    bp.goto(atif.get_absolute_url())

    thinking = _card(page, "Thinking").first
    assert thinking.locator("details.fold").count() == 1 and "$0.0042" in thinking.inner_text()
    subagent = _card(page, "Subagent").first
    assert "Write tests/test_greet.py" in subagent.inner_text()
    assert page.locator("li.ev.is-sub").count() >= 3
    assert_quiet(bp)
