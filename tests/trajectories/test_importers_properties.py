"""Property tests: whatever arrives, parse() and every importer either import it or raise
FormatError, never anything else (which would be a 500). Besides arbitrary JSON, values are
drawn from the formats' own keys and words so that the importers' deep paths are reached."""

import json

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.trajectories.exporters import EXPORT_FORMATS, export_events
from apps.trajectories.importers import FORMATS, FormatError, Limits, parse, parse_document
from apps.trajectories.importers.base import KINDS, SOURCES, CanonicalTrajectory
from tests.samples.make_samples import atif_trajectory, gemini_session

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

KEYS = [
    # OpenHands V0 / share / eval
    "id",
    "timestamp",
    "source",
    "message",
    "cause",
    "action",
    "observation",
    "content",
    "args",
    "extras",
    "tool_call_metadata",
    "llm_metrics",
    "trajectory",
    "history",
    "instance_id",
    "instruction",
    "metadata",
    "metrics",
    "email",
    "polarity",
    "feedback",
    "permissions",
    "version",
    "token",
    "wait_for_response",
    "image_urls",
    "images_urls",
    "thought",
    "command",
    "agent_class",
    "llm_config",
    "model",
    "accumulated_token_usage",
    "accumulated_cost",
    "model_response",
    "choices",
    "function_name",
    "tool_call_id",
    "issue",
    "test_result",
    # V1
    "kind",
    "llm_message",
    "tool_call",
    "tool_name",
    "action_id",
    "system_prompt",
    "key",
    "value",
    "events",
    "error",
    "rejection_reason",
    "summary",
    "forgotten_event_ids",
    # SWE-agent
    "role",
    "message_type",
    "agent",
    "tool_calls",
    "tool_call_ids",
    "response",
    "state",
    "info",
    "environment",
    "replay_config",
    "model_stats",
    "submission",
    "is_demo",
    # ShareGPT / OpenAI
    "from",
    "conversations",
    "items",
    "messages",
    "tools",
    "system",
    "images",
    "function",
    "name",
    "arguments",
    "type",
    "text",
    "function_call",
    "title",
]
WORDS = [
    "message",
    "run",
    "edit",
    "read",
    "finish",
    "system",
    "initialize",
    "null",
    "think",
    "call_tool_mcp",
    "agent_state_changed",
    "user",
    "agent",
    "environment",
    "human",
    "gpt",
    "function_call",
    "observation",
    "assistant",
    "tool",
    "function",
    "developer",
    "ActionEvent",
    "ObservationEvent",
    "MessageEvent",
    "SystemPromptEvent",
    "AgentErrorEvent",
    "UserRejectObservation",
    "PauseEvent",
    "Condensation",
    "ConversationStateUpdateEvent",
    "ExecuteBashAction",
    "FileEditorAction",
    "FinishAction",
    "BrowserClickAction",
    "full_state",
    "positive",
    "negative",
    "public",
    "NOT_PROVIDED",
    "submit",
    "ls -la",
    "str_replace_editor",
    "view",
    "2025-01-01T00:00:00",
    "default",
    "text",
    "image_url",
    '{"name": "f", "arguments": {"a": 1}}',
    "[]",
    "{}",
    "",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(WORDS)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=40,
)
shaped_values = st.recursive(
    scalars | st.sampled_from(WORDS),
    lambda children: (
        st.lists(children, max_size=6)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=8)
    ),
    max_leaves=60,
)

# Small but complete documents of every format; mutants replace some of their parts with
# random values, which reaches the code that reads each field.
TEMPLATES = [
    [
        {
            "id": 0,
            "timestamp": "2025-01-01T00:00:00",
            "source": "agent",
            "action": "system",
            "args": {"content": "sys", "tools": [], "openhands_version": "1", "agent_class": "A"},
        },
        {
            "id": 1,
            "source": "user",
            "message": "hi",
            "action": "message",
            "args": {"content": "hi", "image_urls": ["data:image/png;base64,AA"]},
        },
        {
            "id": 2,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls", "thought": "t"},
            "tool_call_metadata": {
                "function_name": "execute_bash",
                "tool_call_id": "c",
                "model_response": {
                    "id": "r",
                    "model": "m",
                    "choices": [
                        {
                            "message": {
                                "tool_calls": [
                                    {
                                        "id": "c",
                                        "function": {"name": "execute_bash", "arguments": "{}"},
                                    }
                                ]
                            }
                        }
                    ],
                },
            },
            "llm_metrics": {
                "accumulated_cost": 1.5,
                "accumulated_token_usage": {
                    "model": "m",
                    "prompt_tokens": 1,
                    "completion_tokens": 2,
                },
            },
        },
        {
            "id": 3,
            "source": "agent",
            "cause": 2,
            "observation": "run",
            "content": "out",
            "extras": {"command": "ls", "metadata": {"exit_code": 0}},
            "success": True,
        },
        {"id": 4, "source": "agent", "action": "finish", "args": {"outputs": {}, "thought": ""}},
    ],
    {
        "version": "1.0",
        "email": "a@example.org",
        "polarity": "positive",
        "feedback": "positive",
        "permissions": "public",
        "token": "t",
        "trajectory": [
            {"token": "t", "status": "ok"},
            {"action": "initialize", "args": {"LLM_MODEL": "m"}},
            {"action": "message", "args": {"content": "hi"}},
            {"command": "ls", "action": "run", "thought": "x"},
            {"observation": "run", "content": "o", "exit_code": 0},
        ],
    },
    {
        "instance_id": "i",
        "instruction": "do",
        "metadata": {"agent_class": "A", "llm_config": {"model": "m"}, "eval_output_dir": "d"},
        "metrics": {"accumulated_cost": 1},
        "test_result": {"ok": True},
        "issue": {"owner": "o", "repo": "r", "number": 1},
        "history": [
            [
                {"id": 1, "action": "run", "args": {"command": "ls"}},
                {"id": 2, "cause": 1, "observation": "run", "content": "x", "extras": {}},
            ]
        ],
    },
    {
        "instance_id": "i",
        "instruction": "do",
        "metadata": {"llm": {"model": "m"}},
        "history": [
            {
                "kind": "SystemPromptEvent",
                "id": "s",
                "source": "agent",
                "system_prompt": {"type": "text", "text": "sys"},
                "tools": [],
            },
            {
                "kind": "MessageEvent",
                "id": "m",
                "source": "user",
                "llm_message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            },
            {
                "kind": "ActionEvent",
                "id": "a",
                "source": "agent",
                "thought": [{"text": "t"}],
                "action": {"kind": "ExecuteBashAction", "command": "ls"},
                "tool_name": "terminal",
                "tool_call_id": "c",
                "tool_call": {"id": "c", "name": "terminal", "arguments": "{}"},
                "llm_response_id": "r",
            },
            {
                "kind": "ObservationEvent",
                "id": "o",
                "source": "environment",
                "tool_call_id": "c",
                "action_id": "a",
                "observation": {
                    "kind": "ExecuteBashObservation",
                    "output": "x",
                    "screenshot_data": "AA",
                },
            },
            {"kind": "AgentErrorEvent", "id": "e", "tool_call_id": "c", "error": "bad"},
            {
                "kind": "ConversationStateUpdateEvent",
                "id": "u",
                "key": "full_state",
                "value": {"agent": {"llm": {"model": "m"}}},
            },
            {"kind": "Condensation", "id": "k", "forgotten_event_ids": ["a"], "summary": None},
        ],
    },
    {
        "environment": "main",
        "info": {
            "exit_status": "submitted",
            "submission": "diff",
            "model_stats": {"instance_cost": 1, "tokens_sent": 2, "tokens_received": 3},
        },
        "replay_config": '{"agent": {"model": {"name": "m"}}, "problem_statement": {"id": "p"}}',
        "history": [
            {"role": "system", "content": "sys", "agent": "main", "message_type": "system_prompt"},
            {"role": "user", "content": "ISSUE:\nbug", "agent": "main"},
            {
                "role": "assistant",
                "content": "c",
                "thought": "t",
                "action": "ls",
                "agent": "main",
                "tool_calls": [{"id": "c", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "tool", "content": "x", "agent": "main", "tool_call_ids": ["c"]},
        ],
        "trajectory": [
            {
                "action": "ls",
                "observation": "x",
                "response": "r",
                "thought": "t",
                "state": {},
                "query": [],
            }
        ],
    },
    {
        "system": "s",
        "tools": '[{"name": "f"}]',
        "conversations": [
            {"from": "human", "value": "hi"},
            {"from": "function_call", "value": '[{"name": "f", "arguments": {"a": 1}}]'},
            {"from": "observation", "value": "o"},
            {"from": "gpt", "value": "ok"},
        ],
    },
    {
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "images": ["a.jpg"],
        "messages": [
            {"role": "system", "content": "s"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "u"}},
                ],
            },
            {
                "role": "assistant",
                "content": "c",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "o"},
            {"role": "assistant", "content": None, "function_call": {"name": "g", "arguments": {}}},
            {"role": "function", "name": "g", "content": "o"},
        ],
    },
]

# Issue 22's formats, from the suite's samples: Gemini CLI's single-JSON chat file (the JSON
# Lines sample's metadata and messages) and an ATIF trajectory.
_GEMINI = gemini_session()
TEMPLATES += [
    {**_GEMINI[0], "messages": [line for line in _GEMINI[1:] if "id" in line]},
    atif_trajectory(),
]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, prefix + (index,))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [_replace(v, rest, new) if i == head else v for i, v in enumerate(value)]


@st.composite
def mutants(draw):
    value = draw(st.sampled_from(TEMPLATES))
    paths = list(_paths(value))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths))
        value = _replace(value, path, draw(json_values | st.sampled_from(WORDS)))
        paths = list(_paths(value))
    return value


values = json_values | shaped_values | mutants()


def check_result(result) -> None:
    for item in result.items:
        assert isinstance(item.where, str)
        assert (item.trajectory is None) != (item.error is None)
        if item.error is not None:
            assert isinstance(item.error, FormatError)
            # These two would mean an importer crashed or produced nonsense.
            assert not item.error.message.startswith("cannot read this"), item.error
            assert not item.error.message.startswith("cannot place an event"), item.error
        else:
            assert item.trajectory.events
            for event in item.trajectory.events:
                assert event.source in SOURCES and event.kind in KINDS
                assert isinstance(event.text, str) and isinstance(event.data, dict)


@SETTINGS
@given(values)
def test_parse_document_only_raises_format_error(value):
    try:
        result = parse_document(value, limits=Limits(max_depth=50))
    except FormatError:
        return
    check_result(result)


@SETTINGS
@given(mutants() | values)
def test_each_importer_only_raises_format_error(value):
    for module in FORMATS.values():
        assert module.detect(value) in (True, False)
        try:
            trajectory = module.convert(value)
        except FormatError as exc:
            assert isinstance(exc.message, str) and isinstance(exc.where, str)
            continue
        assert isinstance(trajectory, CanonicalTrajectory)
        for event in trajectory.events:
            assert event.source in SOURCES and event.kind in KINDS


@SETTINGS
@given(st.binary(max_size=300))
def test_parse_of_arbitrary_bytes_only_raises_format_error(data):
    try:
        result = parse(data)
    except FormatError:
        return
    check_result(result)


@SETTINGS
@given(st.lists(values, min_size=1, max_size=4))
def test_parse_of_json_and_json_lines_only_raises_format_error(records):
    # The standard library writes integers of any size (orjson stops at 64 bits).
    for data in (
        json.dumps(records).encode(),
        b"\n".join(json.dumps(record).encode() for record in records),
    ):
        try:
            result = parse(data)
        except FormatError:
            continue
        check_result(result)


@SETTINGS
@given(mutants() | shaped_values)
def test_whatever_imports_also_exports(value):
    try:
        result = parse_document(value)
    except FormatError:
        return
    for trajectory in result.trajectories:
        for fmt in EXPORT_FORMATS:
            out = export_events(fmt, trajectory.events, meta={"metadata": trajectory.metadata})
            assert isinstance(orjson.loads(out), (list, dict))
