"""Every real file in shared/fixtures imports as the right format, with the right trajectories
and events (counts checked by hand against the files, see MANIFEST.txt), and spot checks of
what a reader of the trajectory would see: who speaks, what kind of step, its text, metadata."""

from collections import Counter
from datetime import UTC, datetime

import orjson
import pytest

from apps.trajectories.importers import parse
from apps.trajectories.importers.base import KINDS, SOURCES, FormatError
from tests.conftest import AWAITING_IMPORTERS

# file -> (format, events per trajectory)
EXPECTED = {
    "openhands_v0_basic_interactions.json": ("openhands_v0", [6]),
    "openhands_v0_basic.json": ("openhands_v0", [4]),
    "openhands_v0_basic_gui_mode.json": ("openhands_v0", [18]),
    "openhands_v0_wrong_initial_state.json": ("openhands_v0", [8]),
    "openhands_v0_eval_multi_swe_bench_output.jsonl": ("openhands_eval", [49, 70, 103]),
    "openhands_resolver_mock_output_flat_legacy.jsonl": ("openhands_eval", [8, 44]),
    # 18 history events each, plus the row's instruction (the history lacks the task).
    "openhands_v1_sdk_openagentsafety_output.jsonl": ("openhands_v1", [19, 19]),
    # History only: one event per history message.
    "sweagent_function_calling_simple.traj": ("sweagent", [12]),
    # System prompt + issue from the history, then action + observation per step.
    "sweagent_v07_marshmallow-1867_default.traj": ("sweagent", [2 + 2 * 14]),
    "sweagent_v1_marshmallow-1867_function_calling_replace.traj": ("sweagent", [2 + 2 * 11]),
    "messages_mllm_demo_with_image_paths.json": ("openai_messages", [4] * 6),
    # Whole sessions, one trajectory per file (tests/trajectories/test_importer_claude_code.py
    # checks their MANIFEST counts: prompts, tool calls by tool, results, the subagent's).
    "claude_code_2_1_14_compaction_entire_cli.jsonl": ("claude_code", [138]),
    "claude_code_2_1_41_task_subagent_progress_entire_cli.jsonl": ("claude_code", [88]),
    # tests/trajectories/test_importer_codex_cli.py checks its MANIFEST counts.
    "codex_cli_0_60_1_rtchess_lichess_clone.jsonl": ("codex_cli", [854]),
    # ADP's ATIF export: a list of five trajectories (tests/trajectories/test_importer_atif.py
    # checks its MANIFEST counts: steps, user steps, calls with their results).
    "atif_v1_7_adp_converted_agenttuning_os_list.json": ("atif", [25, 16, 16, 16, 19]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_fixture_imports_with_expected_counts(real_fixture, name):
    fmt, counts = EXPECTED[name]
    result = parse(real_fixture(name))
    assert result.format == fmt
    assert result.errors == []
    assert [len(t.events) for t in result.trajectories] == counts
    for trajectory in result.trajectories:
        assert trajectory.source_format == fmt
        for event in trajectory.events:
            assert event.source in SOURCES and event.kind in KINDS and event.type


def test_every_file_in_the_fixture_folders_is_covered(fixtures_dir):
    """A new fixture without expectations here would go untested."""
    files = {p.name for p in (fixtures_dir / "real").iterdir() if p.suffix != ".txt"}
    assert files == set(EXPECTED) | {"sharegpt_glaive_toolcall_en_demo.json"} | AWAITING_IMPORTERS


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(AWAITING_IMPORTERS))
def test_sessions_awaiting_their_importer_are_refused_clearly(real_fixture, client, name):
    """Issue 22's formats, until their importers land: a 400 that says why (the formats known,
    or that a zip is not UTF-8 text), never a 500 nor a half-stored share."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from apps.trajectories.models import Trajectory

    data = real_fixture(name)
    with pytest.raises(FormatError) as refused:
        parse(data)
    response = client.post("/api/v1/trajectories/preview", {"file": SimpleUploadedFile(name, data)})
    assert response.status_code == 400, response.content
    assert str(refused.value).split(";")[0] in response.content.decode()
    assert Trajectory.objects.count() == 0


def test_sharegpt_demo_is_one_trajectory_per_conversation(real_fixture):
    raw = real_fixture("sharegpt_glaive_toolcall_en_demo.json")
    result = parse(raw)
    assert result.format == "sharegpt"
    assert len(result.trajectories) == 300
    assert sum(len(t.events) for t in result.trajectories) == 1914
    counts = Counter((e.source, e.kind) for t in result.trajectories for e in t.events)
    assert counts == {
        ("user", "message"): 746,
        ("agent", "message"): 746,
        ("agent", "action"): 211,
        ("environment", "observation"): 211,
    }
    first = result.trajectories[0]
    assert [(e.source, e.kind, e.type) for e in first.events[2:5]] == [
        ("user", "message", "message"),
        ("agent", "action", "search_recipes"),
        ("environment", "observation", "search_recipes"),
    ]
    call, answer = first.events[3], first.events[4]
    assert answer.cause == call.original_id
    assert call.text == 'search_recipes({"ingredients":["chicken","bell peppers","rice"]})'
    assert first.title.startswith("Hi, I have some ingredients")
    tools = orjson.loads(first.metadata["tools"])
    assert tools[0]["name"] == "search_recipes"


def test_v0_basic_interactions(real_fixture):
    trajectory = parse(real_fixture("openhands_v0_basic_interactions.json")).trajectories[0]
    assert [(e.source, e.kind, e.type) for e in trajectory.events] == [
        ("user", "message", "message"),
        ("agent", "message", "message"),
        ("user", "message", "message"),
        ("agent", "message", "message"),
        ("user", "message", "message"),
        ("agent", "action", "finish"),
    ]
    first = trajectory.events[0]
    assert first.text == "what's 1+1?"
    assert first.original_id == "0"
    assert first.timestamp == datetime(2025, 2, 1, 0, 14, 10, 787622, tzinfo=UTC)
    assert first.data["args"]["content"] == "what's 1+1?"
    assert trajectory.title == "what's 1+1?"
    assert trajectory.agent == "OpenHands"
    assert trajectory.model == "gpt-4o-2024-08-06"  # from the finish's tool_call_metadata


def test_v0_gui_mode_states_and_causes(real_fixture):
    trajectory = parse(real_fixture("openhands_v0_basic_gui_mode.json")).trajectories[0]
    events = {e.original_id: e for e in trajectory.events}
    assert events["0"].kind == "observation" and events["0"].type == "agent_state_changed"
    assert events["0"].text == "Agent state: loading"
    run, output = events["7"], events["8"]
    assert (run.source, run.kind, run.type) == ("agent", "action", "run")
    # The thought, then the command.
    assert run.text.startswith("I'll help you create a Vue.js application")
    assert run.text.endswith("\n\nmkdir -p /workspace/todo-app")
    assert output.kind == "observation" and output.cause == "7"
    assert events["14"].text.startswith("Serving HTTP on 0.0.0.0 port 8000")
    assert events["2"].type == "null" and events["2"].text == ""
    assert trajectory.model == "claude-3-5-sonnet-20241022"


def test_v0_edit_and_read_text(real_fixture):
    trajectory = parse(real_fixture("openhands_v0_basic.json")).trajectories[0]
    edit = trajectory.events[1]
    assert (edit.kind, edit.type) == ("action", "edit")
    assert edit.text.endswith("\n\n/workspace/game_2048.py")
    assert trajectory.events[2].text.startswith("--- /workspace/game_2048.py")
    finish = trajectory.events[3]
    assert finish.type == "finish" and "2048 game" in finish.text
    state = parse(real_fixture("openhands_v0_wrong_initial_state.json")).trajectories[0]
    assert [e.type for e in state.events[1:3]] == ["read", "read"]
    assert state.events[2].text.startswith("Here's the files and directories")


def test_eval_rows(real_fixture):
    trajectories = parse(
        real_fixture("openhands_v0_eval_multi_swe_bench_output.jsonl")
    ).trajectories
    first = trajectories[0]
    assert first.title == "ponylang__ponyc-4595"
    assert first.agent == "CodeActAgent"
    assert first.model == "openai/openrouter-llama-4-maverick"  # metadata.llm_config.model
    assert first.agent_version == "0.35.0"  # the system event's openhands_version
    assert first.session_id.startswith("ponylang__ponyc-4595@")
    assert first.metadata["instance_id"] == "ponylang__ponyc-4595"
    assert first.metadata["max_iterations"] == 50
    assert first.metadata["total_tokens"] == 565158 + 2558  # the row's metrics
    assert first.metadata["total_cost"] == 0.0
    # The bulky parts stay out: the benchmark instance and the LLM config (with its api_key).
    dumped = orjson.dumps(first.metadata).decode()
    assert "problem_statement" not in dumped and "api_key" not in dumped
    assert [(e.source, e.kind, e.type) for e in first.events[:4]] == [
        ("agent", "system", "system"),
        ("user", "message", "message"),
        ("user", "action", "recall"),
        ("environment", "observation", "recall"),
    ]
    assert first.events[1].text.startswith("<uploaded_files>")
    # Each row is its own session; rows of one run do not collide.
    assert len({t.session_id for t in trajectories}) == 3
    last = trajectories[2]
    assert last.metadata["error"].startswith("RuntimeError: Agent reached maximum iteration")


def test_resolver_flat_legacy_rows(real_fixture):
    first = parse(real_fixture("openhands_resolver_mock_output_flat_legacy.jsonl")).trajectories[0]
    assert first.title == "neubig/pr-viewer#5: Add MIT license"
    assert first.metadata["success"] is True
    assert first.metadata["total_cost"] == pytest.approx(0.070713)
    kinds = [(e.source, e.kind, e.type) for e in first.events]
    assert kinds[:3] == [
        ("user", "message", "message"),
        ("agent", "action", "run"),
        ("environment", "observation", "run"),
    ]
    assert kinds[-1] == ("agent", "action", "finish")
    # Flat events inline their args: the text comes from them.
    assert first.events[0].text.startswith("Please fix the following issue")
    assert first.events[1].text.endswith("touch LICENSE")
    assert "Certainly! I'll add the MIT license" in first.events[1].text
    # No ids in the file: each observation is tied to the action before it.
    assert first.events[2].cause == first.events[1].original_id != ""
    assert first.events[1].timestamp is None


def test_v1_sdk_rows(real_fixture):
    trajectories = parse(real_fixture("openhands_v1_sdk_openagentsafety_output.jsonl")).trajectories
    first = trajectories[0]
    assert first.title == "safety-misconfig"
    assert first.model == "litellm_proxy/neulab/gpt-4o-2024-08-06"
    assert first.metadata["dataset"] == "mgulavani/openagentsafety_full_updated"
    task = first.events[0]
    assert (task.source, task.kind) == ("user", "message")
    assert task.text.startswith("# Task")
    action, observation = first.events[1], first.events[2]
    assert (action.source, action.kind, action.type) == ("agent", "action", "run")
    assert action.data["action"]["kind"] == "ExecuteBashAction"
    assert action.text.startswith('chat_npc "David"')
    assert action.original_id == "9f2cce60-840c-42e1-916a-575cac0ea87e"
    assert (observation.kind, observation.type) == ("observation", "run")
    assert observation.cause == action.original_id
    assert "David: Hi there" in observation.text
    finish = next(e for e in first.events if e.type == "finish" and e.kind == "action")
    assert finish.text.startswith("I have successfully coordinated")


def test_sweagent_steps(real_fixture):
    trajectory = parse(real_fixture("sweagent_v07_marshmallow-1867_default.traj")).trajectories[0]
    assert trajectory.agent == "SWE-agent"
    assert trajectory.title == "TimeDelta serialization precision"
    assert trajectory.metadata["exit_status"] == "submitted"
    assert "def _deserialize" in trajectory.metadata["submission"]
    assert trajectory.metadata["model_stats"]["api_calls"] == 0
    system, task, action, observation = trajectory.events[:4]
    assert (system.kind, task.source, task.kind) == ("system", "user", "message")
    assert task.text.startswith("We're currently solving the following issue")
    assert (action.source, action.kind, action.type) == ("agent", "action", "run")
    assert action.text.startswith("Let's list out some of the files")
    assert action.text.endswith("ls -F")
    assert (observation.source, observation.kind) == ("environment", "observation")
    assert observation.text.startswith("AUTHORS.rst")
    assert observation.cause == action.original_id
    assert trajectory.events[-2].type == "finish"  # submit
    assert "query" not in action.data  # the per-step prompt copy is not kept


def test_sweagent_v1_uses_the_history_tool_calls(real_fixture):
    trajectory = parse(
        real_fixture("sweagent_v1_marshmallow-1867_function_calling_replace.traj")
    ).trajectories[0]
    assert trajectory.model == "gpt-4o"  # replay_config.agent.model.name
    assert trajectory.title == "marshmallow-code__marshmallow-1867"
    action = trajectory.events[2]
    assert action.original_id == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    assert action.data["tool_calls"][0]["function"]["name"] == "create"
    assert action.type == "edit"
    assert trajectory.events[3].cause == "call_cyI71DYnRdoLHWwtZgIaW2wr"


def test_sweagent_history_only(real_fixture):
    trajectory = parse(real_fixture("sweagent_function_calling_simple.traj")).trajectories[0]
    kinds = [(e.source, e.kind) for e in trajectory.events]
    assert kinds[:4] == [
        ("agent", "system"),
        ("user", "message"),
        ("agent", "action"),
        ("environment", "observation"),
    ]
    action, observation = trajectory.events[2], trajectory.events[3]
    assert action.text.endswith("find_file missing_colon.py")
    assert observation.cause == action.original_id == "call_PbWErNIge3YTrli3fiVvmIid"
    assert trajectory.title == "SyntaxError: invalid syntax"


def test_llama_factory_messages_keep_image_paths(real_fixture):
    result = parse(real_fixture("messages_mllm_demo_with_image_paths.json"))
    first = result.trajectories[0]
    assert first.metadata["images"] == ["mllm_demo_data/1.jpg", "mllm_demo_data/1.jpg"]
    assert sum(len(t.metadata["images"]) for t in result.trajectories) == 8
    assert [(e.source, e.kind) for e in first.events] == [
        ("user", "message"),
        ("agent", "message"),
    ] * 2
    assert first.events[0].text == "<image>Who are they?"


def test_made_share_payload(made_fixture):
    raw = made_fixture("openhands_share_payload_with_screenshots.json")
    result = parse(raw)
    assert result.format == "openhands_share"
    trajectory = result.trajectories[0]
    assert len(trajectory.events) == 13
    assert trajectory.agent == "CodeActAgent"
    assert trajectory.agent_version == "0.39.1"
    assert trajectory.model == "claude-sonnet-4-20250514"  # llm_metrics says only "default"
    assert trajectory.polarity == "positive"
    assert trajectory.permissions == "public"
    assert trajectory.email == "made.up.contributor@example.com"
    assert trajectory.metadata["total_cost"] == pytest.approx(0.0512)
    assert trajectory.metadata["total_tokens"] == 18004 + 240
    assert trajectory.title.startswith("The login page of our tracker fails")
    message = trajectory.events[1]
    assert message.kind == "message" and message.text.endswith("[image]")
    assert message.data["args"]["image_urls"][0].startswith("data:image/png;base64,")
    browse = trajectory.events[3]
    assert (browse.source, browse.kind, browse.type, browse.cause) == (
        "environment",
        "observation",
        "browse",
        "2",
    )
    assert browse.data["extras"]["screenshot"].startswith("data:image/png;base64,")
    assert [e.type for e in trajectory.events if e.kind == "action"] == [
        "browse",
        "run",
        "edit",
        "run_ipython",
        "browse_interactive",
        "finish",
    ]
    assert b"made.up.contributor" not in orjson.dumps(trajectory.metadata)


def test_titles_leave_out_image_tokens(real_fixture):
    """Issue 20: imported titles kept the `<image>` token of multimodal data."""
    from apps.trajectories.importers.base import title_from

    assert title_from("<image>Who are they?") == "Who are they?"
    assert title_from("Compare <IMAGE> and <image>\nplease") == "Compare and please"
    titles = [
        t.title
        for t in parse(real_fixture("messages_mllm_demo_with_image_paths.json")).trajectories
    ]
    assert titles[0] == "Who are they?" and not [t for t in titles if "<image>" in t.lower()]
