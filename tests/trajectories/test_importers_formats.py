"""Each format's shapes and quirks that the real fixtures do not cover, built by hand from
shared/OPENHANDS.md: old field names, the pre-v0.12.1 share list, 2024 eval pairs, V1 kinds,
tool calls in OpenAI messages, ShareGPT speakers, SWE-agent demonstrations."""

import orjson
import pytest

from apps.trajectories.importers import FORMATS, FormatError, parse, parse_document


def dumps(value) -> bytes:
    return orjson.dumps(value)


def one(value, **kwargs):
    result = parse(dumps(value), **kwargs)
    assert result.errors == [], [str(item.error) for item in result.errors]
    assert len(result.trajectories) == 1
    return result.format, result.trajectories[0]


def shape(trajectory):
    return [(e.source, e.kind, e.type) for e in trajectory.events]


# --- OpenHands share payload -------------------------------------------------------------

TOKEN = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXNlc3Npb24.SIG"


def websocket_payload():
    """A pre-v0.12.1 share: the raw websocket list with its non-events (OPENHANDS.md 1.6)."""
    return {
        "version": "1.0",
        "email": "NOT_PROVIDED",
        "token": TOKEN,
        "feedback": "negative",
        "permissions": "public",
        "trajectory": [
            {"token": TOKEN, "status": "ok"},
            {
                "action": "initialize",
                "args": {"LLM_MODEL": "gpt-4o", "AGENT": "CodeActAgent", "LANGUAGE": "en"},
            },
            {"action": "message", "args": {"content": "hi", "images_urls": []}},
            {
                "id": 3,
                "timestamp": "2024-07-01T12:00:00",
                "source": "agent",
                "message": "Hello!",
                "action": "message",
                "args": {"content": "Hello!", "images_urls": None, "wait_for_response": True},
            },
            {"error": True, "message": "Agent crashed"},
            {"user": "please continue"},
            {"step": 3},
            {
                "id": 4,
                "timestamp": "2024-07-01T12:00:03",
                "source": "agent",
                "message": "Running command: ls",
                "action": "run",
                "args": {"command": "ls", "thought": "", "is_confirmed": "confirmed"},
                "token": TOKEN,
            },
            {
                "id": 5,
                "timestamp": "2024-07-01T12:00:04",
                "source": "agent",
                "cause": 4,
                "observation": "run",
                "content": "README.md",
                "extras": {"command_id": -1, "command": "ls", "exit_code": 0},
            },
        ],
    }


def test_share_payload_skips_websocket_non_events_and_keeps_settings():
    fmt, trajectory = one(websocket_payload())
    assert fmt == "openhands_share"
    assert shape(trajectory) == [
        ("user", "message", "message"),
        ("agent", "message", "message"),
        ("agent", "action", "run"),
        ("agent", "observation", "run"),
    ]
    assert trajectory.model == "gpt-4o"
    assert trajectory.agent == "CodeActAgent"
    assert trajectory.polarity == "negative"  # from `feedback`: no `polarity` before v0.12.1
    assert trajectory.email == ""  # NOT_PROVIDED
    assert trajectory.permissions == "public"
    assert trajectory.title == "hi"
    assert trajectory.events[2].text == "ls"
    assert trajectory.events[3].text == "README.md" and trajectory.events[3].cause == "4"


def test_share_payload_never_keeps_the_token():
    _, trajectory = one(websocket_payload())
    everything = dumps(
        {
            "metadata": trajectory.metadata,
            "events": [(e.data, e.text, e.original_id, e.cause) for e in trajectory.events],
            "fields": [trajectory.title, trajectory.feedback_text, trajectory.session_id],
        }
    )
    assert TOKEN.encode() not in everything
    assert all("token" not in event.data for event in trajectory.events)


@pytest.mark.parametrize("empty", [None, []])
def test_share_payload_with_empty_trajectory(empty):
    payload = {
        "version": "1.0",
        "email": "a@example.org",
        "polarity": "positive",
        "feedback": "positive",
        "permissions": "private",
        "trajectory": empty,
    }
    result = parse(dumps(payload))
    assert result.format == "openhands_share"
    assert result.trajectories == []
    error = result.errors[0].error
    assert error.message == "the trajectory is empty"
    assert error.where == "trajectory"


def test_share_payload_of_only_non_events_has_no_events():
    payload = {
        "version": "1.0",
        "feedback": "positive",
        "trajectory": [{"token": "x", "status": "ok"}],
    }
    result = parse(dumps(payload))
    assert "no events" in result.errors[0].error.message


def test_share_payload_defaults_and_free_text_feedback():
    payload = {
        "version": "",
        "email": " dev@example.org ",
        "feedback": "The agent deleted my tests",
        "trajectory": [{"id": 1, "action": "message", "source": "user", "args": {"content": "x"}}],
    }
    _, trajectory = one(payload)
    assert trajectory.polarity == ""
    assert trajectory.feedback_text == "The agent deleted my tests"
    assert trajectory.email == "dev@example.org"
    assert trajectory.permissions == "private"  # missing means private


# --- OpenHands V0 -------------------------------------------------------------------------


def test_v0_api_response_shape_and_old_field_names():
    events = [
        {
            "id": 0,
            "timestamp": "2024-10-01T10:00:00",
            "source": "user",
            "message": "look",
            "action": "message",
            "args": {"content": "look", "images_urls": ["data:image/png;base64,AA"]},
        },
        {
            "id": 1,
            "timestamp": "2024-10-01T10:00:01",
            "source": "agent",
            "message": "Running",
            "action": "run",
            "args": {
                "command": "ls",
                "thought": "list",
                "is_confirmed": "confirmed",
                "keep_prompt": False,
            },
            "timeout": 120,
        },
        {
            "id": -1,
            "timestamp": "2024-10-01T10:00:02",
            "source": "agent",
            "cause": 1,
            "observation": "run",
            "content": "a.txt",
            "extras": {"exit_code": 0, "command_id": -1},
        },
        {
            "id": 3,
            "timestamp": 1727776803,
            "source": "agent",
            "action": "finish",
            "args": {"outputs": {"ok": True}, "thought": "", "task_completed": "true"},
        },
    ]
    fmt, trajectory = one({"trajectory": events})
    assert fmt == "openhands_v0"
    assert trajectory.events[0].text == "look\n\n[image]"
    assert trajectory.events[1].text == "list\n\nls"
    assert trajectory.events[2].original_id == ""  # id -1 means "no id" in OpenHands
    assert trajectory.events[3].text == '{"ok":true}'
    assert trajectory.events[3].timestamp.year == 2024  # epoch seconds
    assert trajectory.agent == "OpenHands"


def test_v0_event_without_source_gets_a_sensible_one():
    events = [
        {"action": "message", "args": {"content": "task"}},
        {"action": "message", "args": {"content": "question?", "wait_for_response": True}},
        {"action": "run", "args": {"command": "ls"}},
        {"observation": "run", "content": "out", "extras": {}},
    ]
    _, trajectory = one(events)
    assert [e.source for e in trajectory.events] == ["user", "agent", "agent", "environment"]


def test_v0_system_event_names_agent_and_version():
    events = [
        {
            "id": 0,
            "source": "agent",
            "action": "system",
            "args": {
                "content": "You are OpenHands",
                "tools": [],
                "openhands_version": "0.40.0",
                "agent_class": "CodeActAgent",
            },
        },
        {"id": 1, "source": "user", "action": "message", "args": {"content": "do it"}},
        {
            "id": 2,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "llm_metrics": {
                "accumulated_cost": 0.5,
                "accumulated_token_usage": {
                    "model": "anthropic/claude",
                    "prompt_tokens": 100,
                    "completion_tokens": 7,
                },
            },
        },
    ]
    _, trajectory = one(events)
    assert shape(trajectory)[0] == ("agent", "system", "system")
    assert (trajectory.agent, trajectory.agent_version) == ("CodeActAgent", "0.40.0")
    assert trajectory.model == "anthropic/claude"
    assert trajectory.metadata == {
        "total_tokens": 107,
        "total_cost": 0.5,
        "openhands_version": "0.40.0",
    }


# --- evaluation rows ----------------------------------------------------------------------


def test_eval_row_with_2024_action_observation_pairs():
    row = {
        "instance_id": "django__django-11099",
        "instruction": "Fix the validator",
        "metadata": {
            "agent_class": "CodeActAgent",
            "model_name": "gpt-4-turbo",
            "start_time": "2024-05-01 10:00:00",
        },
        "history": [
            [
                {
                    "id": 0,
                    "timestamp": "2024-05-01T10:00:01",
                    "source": "user",
                    "message": "Fix the validator",
                    "action": "message",
                    "args": {"content": "Fix the validator", "wait_for_response": False},
                },
                {"message": "No observation", "observation": "null", "content": "", "extras": {}},
            ],
            [
                {
                    "id": 1,
                    "timestamp": "2024-05-01T10:00:02",
                    "source": "agent",
                    "message": "Running command: grep",
                    "action": "run",
                    "args": {"command": "grep -r Validator", "thought": "search"},
                },
                {
                    "id": 2,
                    "timestamp": "2024-05-01T10:00:03",
                    "source": "agent",
                    "cause": 1,
                    "observation": "run",
                    "content": "validators.py",
                    "extras": {"exit_code": 0},
                },
            ],
        ],
        "test_result": {"resolved": True, "git_patch": "x" * 5000},
        "instance": {"problem_statement": "long" * 1000},
    }
    fmt, trajectory = one(row)
    assert fmt == "openhands_eval"
    assert shape(trajectory) == [
        ("user", "message", "message"),
        ("environment", "observation", "null"),
        ("agent", "action", "run"),
        ("agent", "observation", "run"),
    ]
    assert trajectory.model == "gpt-4-turbo"
    assert trajectory.agent == "CodeActAgent"
    assert trajectory.title == "django__django-11099"
    assert trajectory.metadata["test_result"] == {"resolved": True}  # the 5 KB patch is left out
    assert "instance" not in trajectory.metadata


def test_eval_rows_of_two_runs_are_two_sessions_and_a_reupload_is_the_same():
    def row(run_dir):
        return {
            "instance_id": "a__b-1",
            "metadata": {"eval_output_dir": run_dir},
            "history": [{"id": 0, "source": "user", "action": "message", "args": {"content": "t"}}],
        }

    first = one(row("outputs/gpt-4o"))[1].session_id
    assert first == one(row("outputs/gpt-4o"))[1].session_id
    assert first != one(row("outputs/claude"))[1].session_id


# --- OpenHands V1 -------------------------------------------------------------------------


def v1_events():
    return [
        {
            "kind": "SystemPromptEvent",
            "id": "s",
            "timestamp": "2025-10-01T00:00:00",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are helpful"},
            "tools": [{"name": "terminal", "description": "run"}],
        },
        {
            "kind": "MessageEvent",
            "id": "m",
            "timestamp": "2025-10-01T00:00:01",
            "source": "user",
            "llm_message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Fix the page"},
                    {"type": "image", "image_urls": ["data:image/png;base64,AA"]},
                ],
            },
        },
        {
            "kind": "ActionEvent",
            "id": "a1",
            "source": "agent",
            "thought": [{"type": "text", "text": "Look at it"}],
            "action": {"kind": "FileEditorAction", "command": "view", "path": "/w/page.html"},
            "tool_name": "file_editor",
            "tool_call_id": "c1",
            "tool_call": {"id": "c1", "name": "file_editor", "arguments": "{}"},
        },
        {
            "kind": "ObservationEvent",
            "id": "o1",
            "source": "environment",
            "tool_name": "file_editor",
            "tool_call_id": "c1",
            "action_id": "a1",
            "observation": {
                "kind": "FileEditorObservation",
                "content": [{"type": "text", "text": "<html>"}],
            },
        },
        {
            "kind": "ActionEvent",
            "id": "a2",
            "source": "agent",
            "thought": [],
            "action": {"kind": "BrowserClickAction", "index": 4},
            "tool_name": "browser_click",
            "tool_call_id": "c2",
            "tool_call": {"id": "c2", "name": "browser_click", "arguments": '{"index": 4}'},
        },
        {
            "kind": "AgentErrorEvent",
            "id": "e1",
            "source": "agent",
            "tool_name": "browser_click",
            "tool_call_id": "c2",
            "error": "no browser",
        },
        {
            "kind": "ActionEvent",
            "id": "a3",
            "source": "agent",
            "thought": [],
            "action": {"kind": "TerminalAction", "command": "rm -rf /"},
            "tool_name": "terminal",
            "tool_call_id": "c3",
        },
        {
            "kind": "UserRejectObservation",
            "id": "r1",
            "source": "user",
            "tool_name": "terminal",
            "tool_call_id": "c3",
            "action_id": "a3",
            "rejection_reason": "too dangerous",
        },
        {"kind": "PauseEvent", "id": "p", "source": "user"},
        {
            "kind": "Condensation",
            "id": "k",
            "source": "environment",
            "forgotten_event_ids": ["a1", "o1"],
            "llm_response_id": "r",
        },
        {
            "kind": "ConversationStateUpdateEvent",
            "id": "u",
            "source": "environment",
            "key": "full_state",
            "value": {"agent": {"kind": "Agent", "llm": {"model": "gpt-5"}}},
        },
        {"kind": "SomethingNewEvent", "id": "n", "source": "environment"},
        {
            "kind": "ActionEvent",
            "id": "a4",
            "source": "agent",
            "thought": [],
            "action": {"kind": "FinishAction", "message": "Fixed"},
            "tool_name": "finish",
            "tool_call_id": "c4",
        },
    ]


@pytest.mark.parametrize("wrap", [lambda e: e, lambda e: {"events": e}, lambda e: {"history": e}])
def test_v1_event_kinds(wrap):
    fmt, trajectory = one(wrap(v1_events()))
    assert fmt == "openhands_v1"
    assert shape(trajectory) == [
        ("agent", "system", "system"),
        ("user", "message", "message"),
        ("agent", "action", "read"),  # FileEditorAction with command "view"
        ("environment", "observation", "read"),
        ("agent", "action", "browse_interactive"),
        ("agent", "observation", "error"),
        ("agent", "action", "run"),
        ("user", "observation", "user_rejected"),
        ("user", "system", "pause"),
        ("environment", "system", "condensation"),
        ("environment", "system", "state_update"),
        ("environment", "system", "something_new"),
        ("agent", "action", "finish"),
    ]
    events = trajectory.events
    assert events[1].text == "Fix the page\n[image]"
    assert events[2].text == "Look at it\n\nview /w/page.html"
    assert events[3].cause == "a1" and events[3].text == "<html>"
    assert events[5].cause == "a2"  # found through its tool_call_id
    assert events[7].text == "too dangerous" and events[7].cause == "a3"
    assert events[9].text == "Forgetting 2 events"
    assert events[12].text == "Fixed"
    assert events[6].data["action"]["kind"] == "TerminalAction"  # the V1 kind is kept
    assert trajectory.model == "gpt-5"
    assert trajectory.title == "Fix the page [image]"


def test_v1_event_without_kind_is_an_error_that_says_where():
    events = v1_events()
    del events[3]["kind"]
    result = parse(dumps(events))
    assert result.errors[0].error.where == "event 3"
    assert "kind" in result.errors[0].error.message


# --- SWE-agent ----------------------------------------------------------------------------


def test_sweagent_skips_demonstrations_and_reads_string_replay_config():
    traj = {
        "environment": "main",
        "history": [
            {
                "role": "system",
                "content": "You are SWE-agent",
                "agent": "main",
                "message_type": "system_prompt",
            },
            {
                "role": "user",
                "content": "DEMO task",
                "agent": "main",
                "is_demo": True,
                "message_type": "demonstration",
            },
            {
                "role": "user",
                "content": "Fix bug 7",
                "agent": "main",
                "message_type": "observation",
            },
            {
                "role": "assistant",
                "content": "look",
                "thought": "look",
                "action": "ls",
                "agent": "main",
                "message_type": "action",
            },
            {"role": "user", "content": "a.py", "agent": "main", "message_type": "observation"},
        ],
        "trajectory": [
            {
                "action": "ls",
                "observation": "a.py",
                "response": "look\nls",
                "thought": "look",
                "state": "{}",
                "query": [{"role": "system", "content": "x" * 1000}],
            },
        ],
        "info": {
            "exit_status": "submitted",
            "swe_agent_version": "1.0.1",
            "model_stats": {"instance_cost": 0.25, "tokens_sent": 90, "tokens_received": 10},
        },
        "replay_config": orjson.dumps({"agent": {"model": {"name": "claude-3-7"}}}).decode(),
    }
    fmt, trajectory = one(traj)
    assert fmt == "sweagent"
    assert [e.text for e in trajectory.events] == [
        "You are SWE-agent",
        "Fix bug 7",
        "look\n\nls",
        "a.py",
    ]
    assert trajectory.model == "claude-3-7"
    assert trajectory.agent_version == "1.0.1"
    assert trajectory.metadata["total_cost"] == 0.25
    assert trajectory.metadata["total_tokens"] == 100
    assert trajectory.title == "Fix bug 7"


# --- ShareGPT -----------------------------------------------------------------------------


def test_sharegpt_system_and_speakers():
    conversation = {
        "system": "Be brief",
        "tools": '[{"name": "weather", "parameters": {}}]',
        "conversations": [
            {"from": "human", "value": "Weather in Paris?"},
            {
                "from": "function_call",
                "value": '{"name": "weather", "arguments": {"city": "Paris"}}',
            },
            {"from": "observation", "value": '{"temp": 21}'},
            {"from": "gpt", "value": "21 degrees"},
        ],
    }
    fmt, trajectory = one(conversation)
    assert fmt == "sharegpt"
    assert shape(trajectory) == [
        ("agent", "system", "system"),
        ("user", "message", "message"),
        ("agent", "action", "weather"),
        ("environment", "observation", "weather"),
        ("agent", "message", "message"),
    ]
    assert trajectory.events[0].text == "Be brief"
    assert trajectory.events[3].cause == trajectory.events[2].original_id
    assert trajectory.metadata["tools"] == conversation["tools"]


def test_sharegpt_site_items_and_unknown_speaker():
    _, trajectory = one(
        {
            "title": "Poems",
            "model": "gpt-4",
            "items": [{"from": "human", "value": "a poem"}, {"from": "gpt", "value": "ok"}],
        }
    )
    assert (trajectory.title, trajectory.model) == ("Poems", "gpt-4")
    result = parse(
        dumps(
            {"conversations": [{"from": "human", "value": "x"}, {"from": "narrator", "value": "y"}]}
        )
    )
    error = result.errors[0].error
    assert error.where == "message 1" and "narrator" in error.message


# --- OpenAI messages ----------------------------------------------------------------------


def test_openai_tool_calls_and_results():
    messages = [
        {"role": "system", "content": "You can use tools"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare"},
                {"type": "image_url", "image_url": {"url": "https://x/1.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Two lookups.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "a"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "fetch", "arguments": '{"url": "https://b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "content": "B"},
        {"role": "tool", "tool_call_id": "call_a", "content": "A"},
        {"role": "assistant", "content": "A beats B"},
    ]
    fmt, trajectory = one(
        {"messages": messages, "tools": [{"type": "function", "function": {"name": "search"}}]}
    )
    assert fmt == "openai_messages"
    assert shape(trajectory) == [
        ("agent", "system", "system"),
        ("user", "message", "message"),
        ("agent", "action", "search"),
        ("agent", "action", "fetch"),
        ("environment", "observation", "fetch"),
        ("environment", "observation", "search"),
        ("agent", "message", "message"),
    ]
    events = trajectory.events
    assert events[1].text == "Compare\n[image]"
    assert events[2].text == "Two lookups.\n\nsearch: a"
    assert events[3].text == "fetch: https://b"
    assert (events[2].original_id, events[4].cause, events[5].cause) == (
        "call_a",
        "call_b",
        "call_a",
    )
    assert trajectory.metadata["tools"][0]["function"]["name"] == "search"


def test_openai_bare_array_and_legacy_function_call():
    messages = [
        {"role": "user", "content": "time?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "clock", "arguments": "{}"},
        },
        {"role": "function", "name": "clock", "content": "12:00"},
    ]
    fmt, trajectory = one(messages)
    assert fmt == "openai_messages"
    assert shape(trajectory)[1:] == [
        ("agent", "action", "clock"),
        ("environment", "observation", "clock"),
    ]
    assert trajectory.events[2].cause == trajectory.events[1].original_id


def test_openai_unknown_role_says_where():
    result = parse(
        dumps({"messages": [{"role": "user", "content": "x"}, {"role": "wizard", "content": "y"}]})
    )
    assert result.errors[0].error.where == "message 1"


# --- detection and the format parameter ----------------------------------------------------


def test_registry_lists_every_format():
    assert set(FORMATS) == {
        "openhands_share",
        "openhands_v1",
        "sweagent",
        "openhands_eval",
        "openhands_v0",
        "sharegpt",
        "openai_messages",
        "claude_code",
        "codex_cli",
        "gemini_cli",
        "atif",
    }
    for module in FORMATS.values():
        assert module.LABEL and callable(module.detect) and callable(module.convert)


def test_explicit_format_overrides_detection():
    payload = websocket_payload()
    assert parse(dumps(payload)).format == "openhands_share"
    forced = parse(dumps(payload), format="openhands_v0")
    assert forced.format == "openhands_v0"
    trajectory = forced.trajectories[0]
    assert trajectory.source_format == "openhands_v0"
    assert trajectory.email == "" and trajectory.polarity == ""


def test_explicit_format_that_does_not_fit_says_what_is_wrong():
    result = parse(dumps({"messages": [{"role": "user", "content": "x"}]}), format="sweagent")
    assert result.format == "sweagent"
    assert result.trajectories == []
    assert "expected a SWE-agent .traj" in result.errors[0].error.message


def test_unknown_format_name_lists_known_formats():
    with pytest.raises(FormatError) as caught:
        parse(b"[]", format="chatml")
    assert caught.value.where == "format"
    assert "chatml" in caught.value.message
    for name in FORMATS:
        assert name in caught.value.message


def test_nothing_matches_says_so_and_names_the_formats():
    with pytest.raises(FormatError) as caught:
        parse(dumps({"hello": "world"}))
    assert "no known trajectory format matches an object with keys hello" in caught.value.message
    assert "SWE-agent" in caught.value.message


def test_parse_document_takes_decoded_values():
    result = parse_document(
        [{"id": 1, "action": "message", "source": "user", "args": {"content": "x"}}]
    )
    assert result.format == "openhands_v0"
    assert result.trajectories[0].events[0].text == "x"
