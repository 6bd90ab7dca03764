"""Exports: every fixture survives import -> export -> import, and each export is what its
consumer accepts: OpenHands reads V0 event arrays, TRL / Axolotl want OpenAI messages whose
tool results answer the preceding tool calls, LLaMA-Factory drops ShareGPT conversations that
do not alternate human|observation with gpt|function_call."""

import json

import orjson
import pytest

from apps.trajectories.exporters import EXPORT_FORMATS, export_events
from apps.trajectories.importers import parse
from apps.trajectories.importers.base import CanonicalEvent

FIXTURES = [
    ("real", "openhands_v0_basic_interactions.json"),
    ("real", "openhands_v0_basic.json"),
    ("real", "openhands_v0_basic_gui_mode.json"),
    ("real", "openhands_v0_wrong_initial_state.json"),
    ("real", "openhands_v0_eval_multi_swe_bench_output.jsonl"),
    ("real", "openhands_resolver_mock_output_flat_legacy.jsonl"),
    ("real", "openhands_v1_sdk_openagentsafety_output.jsonl"),
    ("real", "sweagent_function_calling_simple.traj"),
    ("real", "sweagent_v07_marshmallow-1867_default.traj"),
    ("real", "sweagent_v1_marshmallow-1867_function_calling_replace.traj"),
    ("real", "sharegpt_glaive_toolcall_en_demo.json"),
    ("real", "messages_mllm_demo_with_image_paths.json"),
    ("made", "openhands_share_payload_with_screenshots.json"),
]


@pytest.fixture
def trajectories_of(fixtures_dir):
    def load(folder: str, name: str):
        result = parse((fixtures_dir / folder / name).read_bytes())
        assert result.errors == []
        return result.trajectories

    return load


def export(fmt, trajectory):
    return export_events(fmt, trajectory.events, meta={"metadata": trajectory.metadata})


def reimport(data: bytes):
    result = parse(data)
    assert result.errors == [], [str(item.error) for item in result.errors]
    assert len(result.trajectories) == 1
    return result.trajectories[0]


def sequence(events):
    """Kinds in order, and who speaks for messages (chat formats make every observation the
    environment's and every action the agent's)."""
    return [(e.kind, e.source == "agent" if e.kind == "message" else None) for e in events]


# --- what the training formats keep (OPENHANDS exports keep everything) ---------------------


def conversational(events):
    """The events a chat transcript holds: the leading system prompt, messages, the agent's
    actions and the observations that answer them (by cause, or by following them)."""
    kept, open_actions, started = [], [], False
    system = False
    for event in events:
        if event.kind == "system":
            system = system or (not started and bool(event.text))
            continue
        started = True
        if event.kind == "message":
            kept.append(event)
            open_actions = []
        elif event.kind == "action" and event.source == "agent":
            kept.append(event)
            open_actions.append(event.original_id)
        elif event.kind == "observation":
            if event.cause in open_actions:
                open_actions.remove(event.cause)
                kept.append(event)
            elif not event.cause and open_actions and kept[-1].kind in ("action", "observation"):
                open_actions.pop(0)
                kept.append(event)
    head = [("system", None)] if system else []
    return head + sequence(kept)


def trimmed_for_sharegpt(kinds):
    """LLaMA-Factory wants the human side first and the model's side last."""
    body = [k for k in kinds if k[0] != "system"]
    head = [k for k in kinds if k[0] == "system"]

    def model_side(item):
        return item[0] == "action" or item == ("message", True)

    while body and model_side(body[0]):
        body.pop(0)
    while body and not model_side(body[-1]):
        body.pop()
    return head + body


# --- consumers' rules -----------------------------------------------------------------------


def assert_valid_openai(payload):
    messages = payload["messages"]
    # "result" (the run's final patch and outcome) is a column the trainers' loaders leave alone.
    assert set(payload) <= {"messages", "tools", "images", "result"}
    assert all(m["role"] in ("system", "user", "assistant", "tool") for m in messages)
    assert all(m["role"] != "system" for m in messages[1:])
    seen_ids = set()
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending, "a tool result must answer an open call"
            pending.discard(message["tool_call_id"])
            assert isinstance(message["content"], str)
            continue
        # Calls stay open until the next user/assistant message (finish may stay unanswered).
        pending = set()
        if message["role"] == "assistant":
            assert isinstance(message["content"], str)
        for call in message.get("tool_calls", []):
            assert call["type"] == "function"
            assert call["id"] and call["id"] not in seen_ids
            seen_ids.add(call["id"])
            pending.add(call["id"])
            assert call["function"]["name"]
            assert isinstance(orjson.loads(call["function"]["arguments"]), dict)
    for tool in payload.get("tools", []):
        assert tool["type"] == "function" and tool["function"]["name"]


def assert_valid_sharegpt(payload):
    """LLaMA-Factory's SharegptDatasetConverter checks, plus its function formatter's."""
    conversation = payload["conversations"]
    assert conversation, "an empty conversation is dropped"
    for index, turn in enumerate(conversation):
        assert set(turn) == {"from", "value"} and isinstance(turn["value"], str)
        expected = ("human", "observation") if index % 2 == 0 else ("gpt", "function_call")
        assert turn["from"] in expected, f"turn {index} is {turn['from']}"
        if turn["from"] == "function_call":
            calls = orjson.loads(turn["value"])
            for call in calls if isinstance(calls, list) else [calls]:
                assert isinstance(call["name"], str) and isinstance(call["arguments"], dict)
    assert len(conversation) % 2 == 0
    if "system" in payload:
        assert isinstance(payload["system"], str)
    if "tools" in payload:
        assert all(isinstance(tool["name"], str) for tool in orjson.loads(payload["tools"]))


def assert_valid_openhands(events):
    assert isinstance(events, list)
    ids = set()
    for event in events:
        assert isinstance(event.get("action"), str) != isinstance(event.get("observation"), str)
        # Old OpenHands events may lack a source (and are reproduced as they were).
        assert event.get("source", "agent") in ("user", "agent", "environment")
        if "id" in event:
            assert event["id"] not in ids
            ids.add(event["id"])
        if "action" in event:
            assert isinstance(event.get("args", {}), dict)
        else:
            assert isinstance(event.get("extras", {}), dict)
            assert isinstance(event.get("content", ""), str)


# --- round trips over every fixture ---------------------------------------------------------


@pytest.mark.parametrize("folder,name", FIXTURES)
def test_openhands_round_trip_keeps_every_event(trajectories_of, folder, name):
    for trajectory in trajectories_of(folder, name):
        data = export("openhands", trajectory)
        assert_valid_openhands(orjson.loads(data))
        again = reimport(data)
        assert again.source_format == "openhands_v0"
        assert [(e.source, e.kind) for e in again.events] == [
            (e.source, e.kind) for e in trajectory.events
        ]
        assert [e.text for e in again.events if e.kind == "message"] == [
            e.text for e in trajectory.events if e.kind == "message"
        ]


@pytest.mark.parametrize("folder,name", FIXTURES)
def test_openai_round_trip(trajectories_of, folder, name):
    for trajectory in trajectories_of(folder, name):
        data = export("openai", trajectory)
        assert_valid_openai(orjson.loads(data))
        again = reimport(data)
        assert again.source_format == "openai_messages"
        assert sequence(again.events) == conversational(trajectory.events)


@pytest.mark.parametrize("folder,name", FIXTURES)
def test_sharegpt_round_trip(trajectories_of, folder, name):
    for trajectory in trajectories_of(folder, name):
        data = export("sharegpt", trajectory)
        assert_valid_sharegpt(orjson.loads(data))
        again = reimport(data)
        assert again.source_format == "sharegpt"
        assert sequence(again.events) == trimmed_for_sharegpt(conversational(trajectory.events))


# --- fidelity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "openhands_v0_basic_interactions.json",
        "openhands_v0_basic.json",
        "openhands_v0_basic_gui_mode.json",
        "openhands_v0_wrong_initial_state.json",
    ],
)
def test_openhands_export_of_an_openhands_file_is_the_file(real_fixture, name):
    raw = real_fixture(name)
    trajectory = parse(raw).trajectories[0]
    assert orjson.loads(export("openhands", trajectory)) == orjson.loads(raw)


def test_openhands_export_of_a_share_payload_is_its_trajectory(made_fixture):
    payload = orjson.loads(made_fixture("openhands_share_payload_with_screenshots.json"))
    trajectory = parse(orjson.dumps(payload)).trajectories[0]
    assert orjson.loads(export("openhands", trajectory)) == payload["trajectory"]


def test_openhands_export_nests_flat_legacy_events(real_fixture):
    trajectory = parse(
        real_fixture("openhands_resolver_mock_output_flat_legacy.jsonl")
    ).trajectories[0]
    events = orjson.loads(export("openhands", trajectory))
    assert events[1]["action"] == "run"
    assert events[1]["args"]["command"] == "touch LICENSE"
    assert events[2]["observation"] == "run" and events[2]["extras"]["exit_code"] == 0
    assert "command" not in events[1]


def test_openhands_export_maps_other_formats(real_fixture):
    trajectory = parse(real_fixture("openhands_v1_sdk_openagentsafety_output.jsonl")).trajectories[
        0
    ]
    events = orjson.loads(export("openhands", trajectory))
    assert [e["id"] for e in events] == list(range(len(events)))
    task, run, output = events[:3]
    assert task["action"] == "message" and task["source"] == "user"
    assert task["args"]["content"].startswith("# Task")
    assert run["action"] == "run" and run["args"]["command"].startswith('chat_npc "David"')
    assert run["timestamp"] == "2025-10-30T03:50:30.915175"
    assert output["observation"] == "run" and output["cause"] == run["id"]
    assert output["extras"]["command"] == run["args"]["command"]
    sharegpt = parse(real_fixture("sharegpt_glaive_toolcall_en_demo.json")).trajectories[0]
    call = orjson.loads(export("openhands", sharegpt))[3]
    assert call["action"] == "call_tool_mcp"
    assert call["args"]["name"] == "search_recipes"
    assert call["args"]["arguments"] == {"ingredients": ["chicken", "bell peppers", "rice"]}


def test_openai_export_of_an_openhands_share_reuses_the_models_tool_calls(made_fixture):
    trajectory = parse(made_fixture("openhands_share_payload_with_screenshots.json")).trajectories[
        0
    ]
    payload = orjson.loads(export("openai", trajectory))
    messages = payload["messages"]
    assert messages[0]["role"] == "system"
    user = messages[1]
    assert user["role"] == "user"
    assert user["content"][0]["text"].startswith("The login page of our tracker")
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    browse = messages[2]
    assert browse["content"] == "Let me open the issue first."
    assert browse["tool_calls"][0]["id"] == "toolu_01"
    assert browse["tool_calls"][0]["function"] == {
        "name": "browser",
        "arguments": '{"code": "goto(\'http://localhost:8080/issues/42\')"}',
    }
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "toolu_01",
        "content": trajectory.events[3].text,
    }
    # Without the model's response, the call is rebuilt from the args, minus runtime noise.
    run = messages[4]["tool_calls"][0]
    assert run["function"]["name"] == "execute_bash"
    arguments = orjson.loads(run["function"]["arguments"])
    assert arguments["command"] == 'grep -rn "email=raw" app/'
    assert "security_risk" not in arguments and "thought" not in arguments
    assert [t["function"]["name"] for t in payload["tools"]] == ["execute_bash", "browser"]
    assert messages[-1]["tool_calls"][0]["function"]["name"] == "finish"


def test_openai_export_of_v1_events_keeps_their_calls(real_fixture):
    trajectory = parse(real_fixture("openhands_v1_sdk_openagentsafety_output.jsonl")).trajectories[
        0
    ]
    messages = orjson.loads(export("openai", trajectory))["messages"]
    assert messages[0]["role"] == "user" and messages[0]["content"].startswith("# Task")
    call = messages[1]["tool_calls"][0]
    assert call["id"] == "call_lqJrV0ubSCxJ29dCiALU4n30"
    assert call["function"]["name"] == "execute_bash"
    assert orjson.loads(call["function"]["arguments"])["command"].startswith('chat_npc "David"')
    assert messages[2]["tool_call_id"] == call["id"]


def test_openai_export_of_sweagent_uses_its_function_calls(real_fixture):
    trajectory = parse(
        real_fixture("sweagent_v1_marshmallow-1867_function_calling_replace.traj")
    ).trajectories[0]
    messages = orjson.loads(export("openai", trajectory))["messages"]
    call = messages[2]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("call_cyI71DYnRdoLHWwtZgIaW2wr", "create")
    assert messages[2]["content"].startswith("Let's first start by reproducing")


def test_openai_export_of_openai_messages_is_the_original(real_fixture):
    raw = orjson.loads(real_fixture("messages_mllm_demo_with_image_paths.json"))
    trajectories = parse(real_fixture("messages_mllm_demo_with_image_paths.json")).trajectories
    for record, trajectory in zip(raw, trajectories, strict=True):
        assert orjson.loads(export("openai", trajectory)) == {
            "messages": [{"role": m["role"], "content": m["content"]} for m in record["messages"]],
            "images": record["images"],
        }


def test_sharegpt_export_of_sharegpt_is_the_original(real_fixture):
    raw = orjson.loads(real_fixture("sharegpt_glaive_toolcall_en_demo.json"))
    trajectories = parse(real_fixture("sharegpt_glaive_toolcall_en_demo.json")).trajectories
    for record, trajectory in zip(raw, trajectories, strict=True):
        exported = orjson.loads(export("sharegpt", trajectory))
        expected = record["conversations"]
        while expected and expected[-1]["from"] in ("human", "observation"):
            expected = expected[:-1]  # LLaMA-Factory cannot use a final unanswered turn
        assert [t["from"] for t in exported["conversations"]] == [t["from"] for t in expected]
        for mine, theirs in zip(exported["conversations"], expected, strict=True):
            if theirs["from"] == "function_call":
                assert orjson.loads(mine["value"]) == orjson.loads(theirs["value"])
            else:
                assert mine["value"] == theirs["value"]
        assert orjson.loads(exported.get("tools", "[]")) == orjson.loads(record["tools"])


# --- repairs for LLaMA-Factory, on made-up sequences -----------------------------------------


def ev(source, kind, type_="message", text="", original_id="", cause="", data=None):
    return CanonicalEvent(
        source=source,
        kind=kind,
        type=type_,
        text=text,
        data=data or {},
        original_id=original_id,
        cause=cause,
    )


def call(original_id, command, response=""):
    meta = {"model_response": {"id": response}} if response else None
    data = {
        "id": int(original_id),
        "source": "agent",
        "action": "run",
        "args": {"command": command, "thought": ""},
    }
    if meta:
        data["tool_call_metadata"] = meta | {
            "function_name": "execute_bash",
            "tool_call_id": f"t{original_id}",
        }
    return ev("agent", "action", "run", command, original_id, data=data)


def result(original_id, cause, text):
    return ev("environment", "observation", "run", text, original_id, cause)


def test_sharegpt_merges_what_llama_factory_cannot_alternate():
    events = [
        ev("agent", "message", text="Hello, I am your agent"),  # before any human turn
        ev("user", "message", text="list files"),
        ev("agent", "message", text="Sure, listing."),  # right before a call: no place for it
        call("1", "ls"),
        result("2", "1", "a.txt"),
        ev("user", "message", text="and hidden ones"),  # after a result: joins it
        call("3", "ls -a", response="r"),
        call("4", "ls -la", response="r"),  # same model response: parallel calls
        result("5", "3", ".git"),
        result("6", "4", "total 0"),
        ev("agent", "message", text="Done"),
        ev("user", "message", text="thanks"),  # unanswered at the end
    ]
    payload = orjson.loads(export_events("sharegpt", events, meta={}))
    assert_valid_sharegpt(payload)
    turns = payload["conversations"]
    assert [t["from"] for t in turns] == [
        "human",
        "function_call",
        "human",
        "function_call",
        "observation",
        "gpt",
    ]
    assert turns[0]["value"] == "list files"
    assert turns[2]["value"] == "a.txt\n\nand hidden ones"
    assert orjson.loads(turns[3]["value"]) == [
        {"name": "execute_bash", "arguments": {"command": "ls -a"}},
        {"name": "execute_bash", "arguments": {"command": "ls -la"}},
    ]
    assert turns[4]["value"] == ".git\n\ntotal 0"


def test_openai_groups_parallel_calls_and_links_results():
    events = [
        ev("user", "message", text="go"),
        call("3", "ls -a", "r"),
        call("4", "ls", "r"),
        result("5", "4", "b"),
        result("6", "3", "a"),
    ]
    messages = orjson.loads(export_events("openai", events, meta={}))["messages"]
    assert_valid_openai({"messages": messages})
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_3", "call_4"]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:]] == [
        ("call_4", "b"),
        ("call_3", "a"),
    ]


def test_exports_leave_out_bookkeeping_events():
    events = [
        ev("agent", "system", "system", "You are an agent"),
        ev("user", "message", text="hi"),
        ev("user", "action", "recall", "hi", "1"),  # not the agent's action
        ev("environment", "observation", "recall", "context", "2", "1"),
        ev("environment", "observation", "agent_state_changed", "Agent state: running", "3"),
        ev("environment", "system", "state_update", "execution_status: running", "4"),
        ev("agent", "message", text="hello"),
    ]
    payload = orjson.loads(export_events("openai", events, meta={}))
    assert payload["messages"] == [
        {"role": "system", "content": "You are an agent"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    openhands = orjson.loads(export_events("openhands", events, meta={}))
    assert len(openhands) == len(events)


def test_tools_and_images_from_metadata():
    events = [
        ev("user", "message", text="<image>what is it?"),
        ev("agent", "message", text="a cat"),
    ]
    meta = {
        "metadata": {
            "tools": '[{"name": "f", "description": "d", "parameters": {}}]',
            "images": ["cat.jpg"],
        }
    }
    openai = orjson.loads(export_events("openai", events, meta=meta))
    assert openai["tools"] == [
        {"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}
    ]
    assert openai["images"] == ["cat.jpg"]
    sharegpt = orjson.loads(export_events("sharegpt", events, meta=meta))
    assert orjson.loads(sharegpt["tools"]) == [{"name": "f", "description": "d", "parameters": {}}]
    assert sharegpt["images"] == ["cat.jpg"]


def test_events_may_come_from_a_generator_and_meta_may_be_empty():
    events = [ev("user", "message", text="hi"), ev("agent", "message", text="yo")]
    for fmt in EXPORT_FORMATS:
        assert export_events(fmt, iter(events), meta={}) == export_events(fmt, events, meta={})


def test_export_is_utf8_json():
    events = [ev("user", "message", text="héllo ☃ \u2028"), ev("agent", "message", text="ok")]
    for fmt in EXPORT_FORMATS:
        data = export_events(fmt, events, meta={})
        assert "héllo ☃".encode() in data
        orjson.loads(data)


def test_unknown_export_format():
    with pytest.raises(
        ValueError, match="unknown export format 'csv'; known: openhands, openai, sharegpt"
    ):
        export_events("csv", [], meta={})


def test_v1_events_export_with_their_arguments_images_and_outcomes():
    from tests.trajectories.test_importers_formats import v1_events

    trajectory = parse(orjson.dumps(v1_events())).trajectories[0]
    openhands = orjson.loads(export("openhands", trajectory))
    view = openhands[2]
    assert (view["action"], view["args"]["path"], view["args"]["command"]) == (
        "read",
        "/w/page.html",
        "view",
    )
    assert openhands[3]["observation"] == "read" and openhands[3]["cause"] == 2
    assert openhands[7]["observation"] == "user_rejected"
    assert openhands[5]["observation"] == "error"
    messages = orjson.loads(export("openai", trajectory))["messages"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Fix the page"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
    ]


def test_ids_beyond_64_bits_export_exactly():
    """JSON allows any integer; orjson writes only 64-bit ones, so the export falls back."""
    from apps.trajectories.exporters import EXPORT_FORMATS, export_events
    from apps.trajectories.importers.base import CanonicalEvent

    big = 2**70
    data = {"id": big, "source": "user", "action": "message", "args": {"content": "hi", "n": big}}
    events = [CanonicalEvent(source="user", kind="message", type="message", text="hi", data=data)]
    for fmt in EXPORT_FORMATS:
        out = export_events(fmt, events, meta={})
        assert json.loads(out)  # valid JSON in every format
    assert str(big).encode() in export_events("openhands", events, meta={})
