"""Tool calls of every format laid out as OpenHands' own cards (issue 11): a shell call as a
command, an editor call as an edit, any other call as readable arguments; ShareGPT's `system`,
and LLaMA-Factory's `images` names where the `<image>` tokens stood."""

from __future__ import annotations

import json
import re

from apps.trajectories.importers import parse
from apps.trajectories.rendering import present_event
from tests.trajectories.test_viewer_rendering import ctx, event, html_of, render


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def cards(raw: bytes):
    trajectory = parse(raw).trajectories[0]
    out = []
    for position, item in enumerate(trajectory.events):
        card = present_event(
            event(
                item.data,
                kind=item.kind,
                type=item.type,
                source=item.source,
                position=position,
                text=item.text,
            ),
            ctx(),
        )
        out.append((card, html_of(card)))
    return out


def openai_call(name: str, arguments: dict) -> dict:
    return {
        "role": "assistant",
        "tool_call": {
            "id": "c1",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        },
        "message": 2,
        "content": None,
    }


def test_openai_bash_call_is_a_command_card(sample):
    found = cards(sample("openai_messages.json"))
    card, html = next((c, h) for c, h in found if c.kind == "action")
    assert card.title == "Command" and card.family == "command"
    assert "wc -l greet.py" in text_of(html)
    assert 'class="blk blk-code' in html
    # Not the bare name with the command hidden under "Show JSON" (before issue 11).
    assert "bash: wc -l" not in text_of(html)


def test_openai_editor_call_is_an_edit_card_with_a_diff():
    card, html = render(
        openai_call(
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": "/repo/app.py",
                "old_str": "x = 1",
                "new_str": "x = 2",
            },
        ),
        type="str_replace_editor",
    )
    assert card.title == "Edit file" and card.family == "edit"
    assert "/repo/app.py" in html
    assert 'class="d-del"' in html and 'class="d-add"' in html
    assert "x = 2" in text_of(html)


def test_other_calls_show_their_arguments_readably():
    card, html = render(
        openai_call("search_web", {"query": "pony lang", "limit": 3}), type="search_web"
    )
    assert card.title == "Tool call" and "search_web" in html
    assert "<dt>query</dt><dd>pony lang</dd>" in html and "<dt>limit</dt><dd>3</dd>" in html


def test_sharegpt_function_call_and_system(sample):
    found = cards(sample("sharegpt_conversations.json"))
    system_card, system_html = found[0]
    assert system_card.title == "System prompt"
    assert "You are a helpful assistant with a weather tool." in system_html
    call, html = next((c, h) for c, h in found if c.kind == "action")
    assert call.title == "Tool call" and "get_weather" in html
    assert "<dt>city</dt><dd>Paris</dd>" in html
    shell = {
        "from": "function_call",
        "value": json.dumps({"name": "execute_bash", "arguments": {"command": "ls -la"}}),
    }
    card, html = render(shell, type="execute_bash")
    assert card.title == "Command" and "ls -la" in text_of(html)


def test_swe_agent_editor_steps_are_edit_cards():
    step = {
        "action": "str_replace_editor str_replace /testbed/a.py --old_str 'return 1' --new_str 'return 2'",
        "observation": "",
        "thought": "Fix it.",
        "response": "Fix it.",
        "execution_time": 0.3,
        "state": {"open_file": "/testbed/a.py", "working_dir": "/testbed"},
    }
    card, html = render(step, type="edit")
    assert card.title == "Edit file" and "/testbed/a.py" in html
    assert 'class="d-del"' in html and "return 2" in text_of(html)
    windowed = dict(step, action="edit 'return 1' 'return 3'")
    card, html = render(windowed, type="edit")
    assert card.title == "Edit file" and "return 3" in text_of(html) and "/testbed/a.py" in html
    plain = dict(step, action="ls -F")
    card, html = render(plain, type="run")
    assert card.title == "Command" and "ls -F" in text_of(html)


def test_v1_tool_call_without_a_known_action_shows_its_arguments():
    data = {
        "kind": "ActionEvent",
        "source": "agent",
        "tool_name": "execute_bash",
        "tool_call": {"name": "execute_bash", "arguments": json.dumps({"command": "pwd"})},
        "thought": [],
        "action": {},
    }
    card, html = render(data, type="execute_bash")
    assert "pwd" in text_of(html)


def test_image_paths_are_named_where_the_image_stood(real_fixture):
    found = cards(real_fixture("messages_mllm_demo_with_image_paths.json"))
    card, html = found[0]
    assert "[image: mllm_demo_data/1.jpg (not in the upload)]" in text_of(html)
    assert "<image>" not in html and "&lt;image&gt;" not in html


def test_image_names_do_not_change_the_raw_upload():
    doc = {
        "messages": [
            {"role": "user", "content": "<image>Who?"},
            {"role": "assistant", "content": "Me."},
        ],
        "images": ["a.png"],
    }
    raw = json.dumps(doc).encode()
    trajectory = parse(raw).trajectories[0]
    assert trajectory.events[0].data["image_files"] == ["a.png"]
    assert "image_files" not in doc["messages"][0]
