"""Event → card rendering (apps/trajectories/rendering): every format, every OpenHands type,
redaction, clipping, sanitizing. No database except where ingest moves images out."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest

from apps.trajectories.importers import parse
from apps.trajectories.rendering import (
    Marks,
    ViewContext,
    card_html,
    event_json_html,
    present_event,
)
from apps.trajectories.rendering import text as t

SHARE_ID = "ab" * 32
SHA = "cd" * 32


def ctx(redactions=None, *, original=False, full_block=None) -> ViewContext:
    return ViewContext(
        share_id=SHARE_ID,
        marks=Marks(redactions or {}, show_original=original),
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        full_block=full_block,
    )


def event(data, *, kind="action", type="run", source="agent", position=0, text="", **extra):
    return SimpleNamespace(
        pk=position,
        position=position,
        original_id=str(extra.get("original_id", position)),
        timestamp=extra.get("timestamp"),
        source=source,
        kind=kind,
        type=type,
        cause=str(extra.get("cause", "")),
        text=text,
        data=data,
    )


def html_of(card) -> str:
    return card_html(card, f"/t/{SHARE_ID}/")


def render(data, context=None, **kwargs) -> tuple[object, str]:
    card = present_event(event(data, **kwargs), context or ctx())
    return card, html_of(card)


def fixture_events(raw: bytes) -> list:
    result = parse(raw)
    events = []
    for trajectory in result.trajectories:
        for position, item in enumerate(trajectory.events):
            events.append(
                event(
                    item.data,
                    kind=item.kind,
                    type=item.type,
                    source=item.source,
                    position=position,
                    text=item.text,
                    original_id=item.original_id,
                    cause=item.cause,
                    timestamp=item.timestamp,
                )
            )
    return events


# ---- every real file renders, card by card --------------------------------------------------

REAL_FILES = [
    "openhands_v0_basic.json",
    "openhands_v0_basic_gui_mode.json",
    "openhands_v0_basic_interactions.json",
    "openhands_v0_wrong_initial_state.json",
    "openhands_v0_eval_multi_swe_bench_output.jsonl",
    "openhands_resolver_mock_output_flat_legacy.jsonl",
    "openhands_v1_sdk_openagentsafety_output.jsonl",
    "sweagent_function_calling_simple.traj",
    "sweagent_v07_marshmallow-1867_default.traj",
    "sweagent_v1_marshmallow-1867_function_calling_replace.traj",
    "sharegpt_glaive_toolcall_en_demo.json",
    "messages_mllm_demo_with_image_paths.json",
]


@pytest.mark.parametrize("name", REAL_FILES)
def test_every_event_of_every_real_file_gets_a_card_with_content(real_fixture, name, caplog):
    events = fixture_events(real_fixture(name))[:400]
    assert events
    with caplog.at_level(logging.WARNING, logger="apps.trajectories.rendering"):
        cards = [present_event(item, ctx()) for item in events]
    # No card fell back after an exception.
    assert not [r for r in caplog.records if "could not present" in r.getMessage()]
    for item, card in zip(events, cards, strict=True):
        assert card.title, item.type
        has_content = card.blocks or card.badges or card.family in ("state", "meta")
        assert has_content, (name, item.type, item.data)
        html = html_of(card)
        assert f'id="step-{card.step}"' in html
        assert "Show JSON" in html
        assert "<script" not in html.lower()


def _by_type(events, kind, type):
    return [item for item in events if item.kind == kind and item.type == type]


def test_openhands_v0_cards(real_fixture):
    events = fixture_events(real_fixture("openhands_v0_basic_gui_mode.json"))
    state = present_event(_by_type(events, "observation", "agent_state_changed")[0], ctx())
    assert state.title == "Agent state" and [text for text, _ in state.badges] == ["loading"]
    run = present_event(_by_type(events, "action", "run")[0], ctx())
    assert run.title == "Command" and run.blocks[-1].kind == "code"
    assert 'class="code hl"' in run.blocks[-1].html and '<span class="' in run.blocks[-1].html
    output = present_event(_by_type(events, "observation", "run")[0], ctx())
    assert ("exit 0", "ok") in [(str(text), tone) for text, tone in output.badges]
    assert "in /workspace" in [str(text) for text, _ in output.badges]
    # Early-2025 edits name their arguments only in translated_ipython_code: still a diff.
    edit = present_event(_by_type(events, "action", "edit")[0], ctx())
    assert edit.blocks[-1].kind == "diff"
    assert '<span class="d-add">+&lt;!DOCTYPE html&gt;</span>' in edit.blocks[-1].html


def test_openhands_eval_cards(real_fixture):
    events = fixture_events(real_fixture("openhands_v0_eval_multi_swe_bench_output.jsonl"))
    system = present_event(_by_type(events, "system", "system")[0], ctx())
    assert system.title == "System prompt" and system.blocks[0].collapsed
    recall = present_event(_by_type(events, "observation", "recall")[0], ctx())
    assert any(block.collapsed and block.kind == "markdown" for block in recall.blocks)
    # A refused str_replace is shown as failed, with the error in sight, not as a done diff.
    failed = [
        present_event(item, ctx())
        for item in _by_type(events, "observation", "edit")
        if str(item.data.get("content", "")).startswith("ERROR")
    ][0]
    assert ("failed", "bad") in [(str(text), tone) for text, tone in failed.badges]
    assert "No replacement was performed" in failed.blocks[0].html
    assert not failed.blocks[0].collapsed
    assert any(block.label == "Attempted change" for block in failed.blocks)
    finish = present_event(_by_type(events, "action", "finish")[0], ctx())
    assert finish.title == "Finish"
    read = present_event(_by_type(events, "observation", "read")[0], ctx())
    assert read.blocks[0].kind == "code" and '<span class="' in read.blocks[0].html


def test_flat_legacy_events(real_fixture):
    events = fixture_events(real_fixture("openhands_resolver_mock_output_flat_legacy.jsonl"))
    message = present_event(events[0], ctx())
    assert message.title == "User" and message.blocks[0].kind == "markdown"
    run = present_event(_by_type(events, "action", "run")[0], ctx())
    assert run.blocks[-1].kind == "code"
    output = present_event(_by_type(events, "observation", "run")[0], ctx())
    assert "exit 0" in [str(text) for text, _ in output.badges]


def test_openhands_v1_cards(real_fixture):
    events = fixture_events(real_fixture("openhands_v1_sdk_openagentsafety_output.jsonl"))
    assert present_event(events[0], ctx()).title == "User"
    run = present_event(_by_type(events, "action", "run")[0], ctx())
    assert run.title == "Command" and "chat_npc" in run.blocks[-1].html
    output = present_event(_by_type(events, "observation", "run")[0], ctx())
    assert output.title == "Output" and "exit 0" in [str(text) for text, _ in output.badges]
    assert "\x1b" not in output.blocks[0].html and "[?2004l" not in output.blocks[0].html
    finish = present_event(_by_type(events, "action", "finish")[0], ctx())
    assert finish.title == "Finish" and "coordinated with David" in finish.blocks[-1].html


def test_v1_message_system_error_and_browser_events():
    card, html = render(
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look at **this**"},
                    {"type": "image", "image_urls": [f"trajhub-image:{SHA}"]},
                ],
            },
        },
        kind="message",
        type="message",
        source="user",
    )
    assert card.title == "User" and "<strong>this</strong>" in html
    assert f'src="/t/{SHARE_ID}/images/{SHA}"' in html and 'loading="lazy"' in html
    card, html = render(
        {
            "kind": "SystemPromptEvent",
            "system_prompt": {"type": "text", "text": "You are X"},
            "tools": [{"name": "bash"}],
        },
        kind="system",
        type="system",
    )
    assert card.title == "System prompt" and card.blocks[0].collapsed and "Tools: bash" in html
    card, html = render(
        {"kind": "AgentErrorEvent", "error": "boom <b>"}, kind="observation", type="error"
    )
    assert card.family == "error" and "boom &lt;b&gt;" in html
    card, html = render(
        {
            "kind": "ObservationEvent",
            "tool_name": "browser",
            "observation": {
                "kind": "BrowserObservation",
                "output": "page",
                "screenshot_data": f"trajhub-image:{SHA}",
            },
        },
        kind="observation",
        type="browse",
    )
    assert card.title == "Browser" and f"/images/{SHA}" in html


def test_sweagent_steps_and_history(real_fixture):
    events = fixture_events(real_fixture("sweagent_v07_marshmallow-1867_default.traj"))
    action = present_event(_by_type(events, "action", "run")[0], ctx())
    assert action.title == "Command" and action.blocks[0].kind == "markdown"
    assert action.blocks[-1].kind == "code"
    observation = present_event(_by_type(events, "observation", "read")[0], ctx())
    assert observation.title == "File content" and observation.blocks[0].kind == "output"
    history = fixture_events(real_fixture("sweagent_function_calling_simple.traj"))
    cards = [present_event(item, ctx()) for item in history]
    assert [card.title for card in cards[:4]] == ["System prompt", "User", "Command", "Output"]


def test_sharegpt_and_openai_messages(real_fixture):
    events = fixture_events(real_fixture("sharegpt_glaive_toolcall_en_demo.json"))[:40]
    cards = [present_event(item, ctx()) for item in events]
    titles = {card.title for card in cards}
    assert {"User", "Agent", "Tool call", "Tool result"} <= titles
    call = next(card for card in cards if card.title == "Tool call")
    # Arguments as readable fields (issue 11), not a JSON dump.
    assert call.blocks[0].kind == "fields" and "<dt>" in call.blocks[0].html
    messages = fixture_events(real_fixture("messages_mllm_demo_with_image_paths.json"))
    assert [present_event(item, ctx()).title for item in messages[:2]] == ["User", "Agent"]


def test_openai_tool_calls_and_results():
    card, html = render(
        {
            "role": "assistant",
            "content": "Let me look",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls -la"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q": "x", "n": 3}'},
                },
            ],
        },
        type="run",
    )
    assert card.title == "Command"
    assert "Tool call: bash" in html and "Tool call: search" in html and "ls" in html
    card, html = render(
        {"role": "tool", "tool_call_id": "c1", "content": "total 0"}, kind="observation", type="run"
    )
    assert card.title == "Output" and "total 0" in html


# ---- the made share payload, stored through ingest (images moved out) ------------------------


@pytest.mark.django_db
def test_made_share_payload_cards_with_stored_images(made_fixture):
    from tests.trajectories.viewer_factories import ingest

    trajectory = ingest(made_fixture("openhands_share_payload_with_screenshots.json"))
    context = ViewContext(
        share_id=trajectory.share_id,
        marks=Marks({}, show_original=True),
        started_at=trajectory.started_at,
    )
    cards = [present_event(item, context) for item in trajectory.events.order_by("position")]
    html = {card.step: html_of(card) for card in cards}
    by_type = {(card.kind, card.type): card for card in cards}
    image = re.compile(
        rf'<img src="/t/{trajectory.share_id}/images/[0-9a-f]{{64}}" alt="[^"]*" loading="lazy"'
    )
    assert cards[0].title == "System prompt"
    assert cards[1].title == "User" and image.search(html[2])  # the attached image
    browse = by_type[("observation", "browse")]
    assert browse.title == "Browser" and image.search(html[browse.step])
    assert 'href="http://localhost:8080/pulls/43"' in html[browse.step]
    assert any(
        block.collapsed and block.summary == "Set-of-marks screenshot" for block in browse.blocks
    )
    assert "data:image" not in "".join(html.values())
    plot = by_type[("observation", "run_ipython")]
    assert plot.title == "Python output" and image.search(html[plot.step])
    edit = by_type[("action", "edit")]
    assert '<span class="d-del">-    user = User.objects.get(email=raw)</span>' in html[edit.step]
    assert (
        '<span class="d-add">+    user = User.objects.get(email__iexact=raw.strip())</span>'
        in html[edit.step]
    )
    assert by_type[("observation", "edit")].blocks[0].kind == "diff"
    run = by_type[("observation", "run")]
    assert "exit 0" in html[run.step] and "in /workspace" in html[run.step]
    finish = by_type[("action", "finish")]
    assert "case-insensitive" in html[finish.step]
    assert by_type[("action", "run")].cost == pytest.approx(0.0331)


# ---- every OpenHands action and observation type (OPENHANDS.md 2.3, 2.4) ---------------------

ACTIONS = [
    ("message", {"content": "hi **there**"}, "User", "<strong>there</strong>"),
    (
        "system",
        {"content": "You are helpful", "tools": [{"function": {"name": "bash"}}]},
        "System prompt",
        "Tools: bash",
    ),
    (
        "read",
        {"path": "/w/a.py", "view_range": [1, 20], "thought": "look"},
        "Read file",
        "lines 1–20",
    ),
    (
        "write",
        {"path": "/w/a.py", "content": "x = 1\n"},
        "Write file",
        '<span class="d-add">+x = 1</span>',
    ),
    (
        "edit",
        {"path": "/w/a.py", "command": "create", "file_text": "print(1)\n"},
        "Edit file",
        '<span class="d-add">+print(1)</span>',
    ),
    (
        "edit",
        {"path": "/w/a.py", "command": "insert", "insert_line": 4, "new_str": "y = 2"},
        "Edit file",
        "Insert after line 4",
    ),
    (
        "edit",
        {"path": "/w/a.py", "command": "view", "view_range": [3, 9]},
        "View file",
        "lines 3–9",
    ),
    ("edit", {"path": "/w/a.py", "command": "undo_edit"}, "Edit file", "Undo the last edit"),
    (
        "edit",
        {"path": "/w/a.py", "content": "z = 3", "impl_source": "llm_based_edit"},
        "Edit file",
        "New content",
    ),
    ("run", {"command": "ls -la", "thought": "list", "cwd": "/tmp"}, "Command", "in /tmp"),
    (
        "run_ipython",
        {"code": "print(1)", "thought": "run"},
        "Python",
        '<span class="nb">print</span>',
    ),
    (
        "browse",
        {"url": "https://example.org/a", "thought": "open"},
        "Browse",
        'href="https://example.org/a"',
    ),
    (
        "browse_interactive",
        {"browser_actions": "click('12')", "browsergym_send_msg_to_user": "done"},
        "Browser action",
        "click",
    ),
    ("call_tool_mcp", {"name": "fetch", "arguments": {"url": "x"}}, "MCP tool", "Arguments"),
    ("delegate", {"agent": "BrowsingAgent", "inputs": {"task": "t"}}, "Delegate", "BrowsingAgent"),
    ("think", {"thought": "hmm *maybe*"}, "Thought", "<em>maybe</em>"),
    (
        "finish",
        {"final_thought": "Done.", "outputs": {"answer": 42}, "task_completed": "true"},
        "Finish",
        "task completed: true",
    ),
    ("reject", {"thought": "no", "outputs": {"reason": "r"}}, "Reject", "reason"),
    (
        "change_agent_state",
        {"agent_state": "awaiting_user_input"},
        "Agent state",
        "awaiting user input",
    ),
    ("recall", {"recall_type": "workspace_context", "query": "fix bug"}, "Recall", "fix bug"),
    (
        "condensation",
        {"forgotten_events_start_id": 3, "forgotten_events_end_id": 9, "summary": "sum"},
        "Condensation",
        "Forgets events 3–9",
    ),
    ("condensation_request", {}, "Condensation request", "No action"),
    (
        "task_tracking",
        {
            "command": "plan",
            "task_list": [
                {"id": "1", "title": "Write tests", "status": "done"},
                {"id": "2", "title": "Ship", "status": "todo"},
            ],
        },
        "Task list",
        "task-done",
    ),
    ("loop_recovery", {"option": 1}, "Loop recovery", "option"),
    ("null", {}, "No action", "No action"),
    ("pause", {}, "Pause", "No action"),
    (
        "initialize",
        {"LLM_MODEL": "gpt-4o", "AGENT": "CodeActAgent", "LLM_API_KEY": "sk-abcdefghijkl"},
        "Session settings",
        "gpt-4o",
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "title", "snippet"),
    ACTIONS,
    ids=[f"{a[0]}-{i}" for i, a in enumerate(ACTIONS)],
)
def test_each_openhands_action(name, args, title, snippet):
    source = "user" if name == "message" else "agent"
    data = {"id": 1, "source": source, "message": "No action", "action": name, "args": args}
    card, html = render(
        data, type=name, source=source, kind="message" if name == "message" else "action"
    )
    assert card.title == title
    assert snippet in html


def test_secrets_in_settings_are_hidden_from_visitors():
    data = {"action": "initialize", "args": {"LLM_API_KEY": "sk-abcdefghijkl", "AGENT": "X"}}
    _, visitor = render(data, type="initialize", kind="system")
    _, owner = render(data, ctx(original=True), type="initialize", kind="system")
    assert "sk-abcdefghijkl" not in visitor and "[hidden]" in visitor
    assert "sk-abcdefghijkl" in owner


OBSERVATIONS = [
    ("run", "out\n", {"metadata": {"exit_code": 2, "working_dir": "/w"}}, "Output", "exit 2"),
    ("run", "", {"exit_code": 0}, "Output", "(no output)"),
    (
        "run_ipython",
        "<Figure>\n![image](trajhub-image:" + SHA + ")",
        {"image_urls": [f"trajhub-image:{SHA}"]},
        "Python output",
        f"/images/{SHA}",
    ),
    (
        "read",
        "def f():\n    pass\n",
        {"path": "/w/m.py"},
        "File content",
        '<span class="k">def</span>',
    ),
    ("write", "ok", {"path": "/w/m.py"}, "Write result", "/w/m.py"),
    (
        "edit",
        "edited",
        {"path": "/w/m.py", "old_content": "a\n", "new_content": "b\n", "prev_exist": True},
        "Edit result",
        '<span class="d-del">-a</span>',
    ),
    (
        "edit",
        "edited",
        {"path": "/w/m.py", "diff": "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y"},
        "Edit result",
        '<span class="d-hunk">@@ -1 +1 @@</span>',
    ),
    (
        "browse",
        "page text",
        {
            "url": "http://x/",
            "screenshot": f"trajhub-image:{SHA}",
            "error": True,
            "last_browser_action_error": "timeout",
        },
        "Browser",
        "timeout",
    ),
    ("delegate", "", {"outputs": {"answer": "42"}}, "Delegate result", "answer"),
    ("error", "Traceback <x>", {"error_id": "E1"}, "Error", "Traceback &lt;x&gt;"),
    ("success", "fine", {}, "Success", "fine"),
    ("null", "", {}, "No observation", "No observation"),
    ("think", "logged *it*", {}, "Thought logged", "<em>it</em>"),
    (
        "agent_state_changed",
        "",
        {"agent_state": "error", "reason": "quota"},
        "Agent state",
        "quota",
    ),
    ("user_rejected", "nope", {}, "Rejected by the user", "nope"),
    ("condense", "summary", {}, "Condensed", "summary"),
    (
        "recall",
        "",
        {
            "recall_type": "knowledge",
            "repo_name": "r/r",
            "microagent_knowledge": [{"name": "git", "trigger": "git", "content": "use git"}],
        },
        "Recall result",
        "Microagent git",
    ),
    ("mcp", '{"ok": true}', {"name": "fetch", "arguments": {}}, "MCP result", "fetch"),
    ("download", "", {"file_path": "/w/f.zip"}, "Download", "/w/f.zip"),
    (
        "task_tracking",
        "2 tasks",
        {"command": "view", "task_list": [{"id": "1", "title": "A", "status": "in_progress"}]},
        "Task list",
        "task-in_progress",
    ),
    ("loop_detection", "looping", {}, "Loop detected", "looping"),
]


@pytest.mark.parametrize(
    ("name", "content", "extras", "title", "snippet"),
    OBSERVATIONS,
    ids=[f"{o[0]}-{i}" for i, o in enumerate(OBSERVATIONS)],
)
def test_each_openhands_observation(name, content, extras, title, snippet):
    data = {
        "id": 2,
        "source": "environment",
        "message": "No observation",
        "cause": 1,
        "observation": name,
        "content": content,
        "extras": extras,
    }
    card, html = render(data, kind="observation", type=name, source="environment")
    assert card.title == title
    assert snippet in html


def test_unknown_types_show_their_fields():
    card, html = render(
        {"action": "teleport", "args": {"destination": "Mars", "speed": 3}}, type="teleport"
    )
    assert card.title == "Teleport"
    assert "destination" in html and "Mars" in html
    card, html = render(
        {"weird": {"nested": ["a", 1]}, "other": "value"}, type="mystery", kind="system"
    )
    assert card.title == "Mystery" and "weird" in html and "nested" in html and "value" in html


# ---- long output, JSON view -------------------------------------------------------------------


def test_long_output_is_cut_with_show_all_and_the_full_block_has_everything():
    content = "\n".join(f"line {n}" for n in range(1, 501))
    data = {"observation": "run", "content": content, "extras": {"exit_code": 0}}
    card, html = render(data, kind="observation")
    block = card.blocks[0]
    assert block.more_lines == 500
    assert "line 30</pre>" in html and "line 491\n" in html and "line 500" in html  # head, tail
    assert "line 250" not in html
    assert "… 460 more lines …" in html
    assert f'data-src="/t/{SHARE_ID}/events/1/blocks/0"' in html and "Show all 500 lines" in html
    full = present_event(event(data, kind="observation"), ctx(full_block=0))
    assert full.blocks[0].more_lines == 0 and "line 250" in full.blocks[0].html


def test_show_json_is_escaped_and_keeps_images_as_references():
    data = {
        "action": "message",
        "args": {
            "content": "</pre><script>alert(1)</script>",
            "image_urls": [f"trajhub-image:{SHA}", "data:image/png;base64," + "A" * 4000],
        },
    }
    html = event_json_html(event(data, kind="message", type="message"), ctx())
    assert html.startswith('<pre class="json">') and html.count("</pre>") == 1
    assert "&lt;script&gt;" in html and "<script" not in html
    assert f"trajhub-image:{SHA}" in html
    assert "AAAA" not in html and "[inline image, 3,0" in html


# ---- redaction --------------------------------------------------------------------------------

SECRET = "jane.doe+x@corp.example"
REDACTIONS = {SECRET: "<EMAIL_1>", 'say "hi"\nnow': "<TEXT_1>"}


def test_visitors_see_placeholders_everywhere_and_never_the_original():
    data = {
        "action": "browse",
        "args": {"url": f"https://site.example/?u={SECRET}", "thought": f"Mail **{SECRET}**"},
        "extra": {SECRET: ['say "hi"\nnow']},
    }
    card, html = render(data, ctx(REDACTIONS), type="browse", text=SECRET, original_id=SECRET)
    json_html = event_json_html(event(data, type="browse"), ctx(REDACTIONS))
    for shown in (html, json_html):
        assert SECRET not in shown and "jane.doe" not in shown
        assert "say &quot;hi&quot;" not in shown and 'say \\"hi\\"' not in shown
    assert '<mark class="redaction">&lt;EMAIL_1&gt;</mark>' in html
    assert "&lt;EMAIL_1&gt;" in json_html and "&lt;TEXT_1&gt;" in json_html


def test_owner_sees_originals_with_the_redacted_spans_marked():
    data = {"observation": "read", "content": f"x = '{SECRET}'\n", "extras": {"path": "/w/a.py"}}
    card, html = render(data, ctx(REDACTIONS, original=True), kind="observation", type="read")
    assert SECRET in html.replace("&#x27;", "'") or SECRET in html
    marked = re.search(r'<mark class="redaction">(.*?)</mark>', html)
    assert marked and "jane.doe" in marked.group(1)


def test_marks_stay_well_nested_across_highlighted_tokens():
    marks = Marks({"a = 1": "<CODE_1>"}, show_original=True)
    html = t.finish(t.highlight(marks.mark("a = 1\nb = 2"), language="python"))
    opened = html.count('<mark class="redaction">')
    assert opened >= 1 and opened == html.count("</mark>")
    # Each mark opens and closes inside the same element: no "</span>" between a mark's ends.
    for inner in re.findall(r'<mark class="redaction">(.*?)</mark>', html):
        assert inner.count("<span") == inner.count("</span>")


def test_forged_sentinels_in_input_do_nothing():
    marks = Marks({}, show_original=False)
    assert t.finish(t.escape(marks.mark("a\ue000b\ue001c"))) == "abc"


# ---- sanitizing -------------------------------------------------------------------------------

PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "[click](javascript:alert(3))",
    "<svg onload=alert(4)><circle/></svg>",
    '<a href="javascript:alert(5)">x</a>',
    "![x](javascript:alert(6))",
    '<iframe src="https://evil.example"></iframe>',
    "<style>body{display:none}</style>",
    '"><script>alert(7)</script>',
    '<div style="background:url(javascript:alert(8))">',
    "[a](data:text/html;base64,PHNjcmlwdD5hbGVydCg5KTwvc2NyaXB0Pg==)",
    "<<script>script>alert(10)<</script>/script>",
    "![ext](https://evil.example/track.png)",
]


class Elements(HTMLParser):
    """Every element and attribute a browser would build from the HTML."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {name: value or "" for name, value in attrs}))


def assert_inert(markup: str) -> None:
    for tag, attrs in Elements(markup).found:
        assert tag not in {
            "script",
            "style",
            "svg",
            "math",
            "iframe",
            "object",
            "embed",
            "form",
            "base",
        }, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name != "style", tag
            if name in ("href", "src"):
                assert (
                    not value.strip().lower().startswith(("javascript:", "data:", "vbscript:"))
                ), value
        if tag == "img":
            assert re.match(r"^/t/[0-9a-f]{64}/images/[0-9a-f]{64}$", attrs.get("src", "")), attrs


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_and_every_text_field_are_inert(payload):
    data = {
        "action": "message",
        "args": {"content": payload, "thought": payload, "command": payload, "path": payload},
        "extras": {"url": payload, "screenshot": payload},
        payload: payload,
    }
    for kind, type_ in (("message", "message"), ("action", payload[:30]), ("observation", "error")):
        card, html = render(
            data, kind=kind, type=type_, text=payload, original_id=payload, cause=payload
        )
        assert_inert(html)
        assert_inert(event_json_html(event(data, kind=kind, type=type_), ctx()))
    for name in ("run", "edit", "browse", "read"):
        _, html = render({**data, "action": name}, type=name)
        assert_inert(html)
        _, html = render(
            {"observation": name, "content": payload, "extras": data["extras"]},
            kind="observation",
            type=name,
        )
        assert_inert(html)


def test_only_our_images_are_shown():
    html = t.markdown(
        f"![ok](trajhub-image:{SHA}) ![ext](https://evil.example/x.png) ![d](data:image/png;base64,AAAA)",
        image_base=f"/t/{SHARE_ID}/images/",
    )
    assert f'<img src="/t/{SHARE_ID}/images/{SHA}" alt="ok" loading="lazy">' in html
    assert '<img src="https' not in html and "data:image" not in html
    assert "external image" in html


def test_clean_terminal_removes_colours_and_applies_carriage_returns():
    assert t.clean_terminal("\x1b[31mred\x1b[0m\r\n10%\r50%\r100%") == "red\n100%"


def test_shape_detection_does_not_mistake_sweagent_commands_for_openhands_actions():
    card, _ = render(
        {"action": "edit 1:3\nfoo\nend_of_edit\n", "thought": "edit", "response": "r"}, type="edit"
    )
    assert card.title == "Edit file" and card.blocks[-1].kind == "code"
    card, _ = render({"action": "run", "args": {"command": "ls"}}, type="run")
    assert card.title == "Command"


def test_json_dump_of_fixture_payload_round_trips(made_fixture):
    # The JSON view is valid JSON once unescaped (reader can copy it).
    payload = json.loads(made_fixture("openhands_share_payload_with_screenshots.json"))
    item = payload["trajectory"][5]
    html = event_json_html(event(item), ctx())
    text = re.sub(r"^<pre class=\"json\">|</pre>$", "", html)
    import html as html_lib

    assert json.loads(html_lib.unescape(text))["id"] == item["id"]
