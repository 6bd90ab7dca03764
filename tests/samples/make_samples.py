"""Writes the suite's own small trajectories, one file per format, into this folder.

They let import, page and upload tests run on any machine, including a fresh clone without the
shared real-world fixtures. Run `python tests/samples/make_samples.py` after changing this file;
tests/samples/test_samples.py checks what each file imports as.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
TASK = "Add a --verbose flag to greet.py and test it"
PATCH = (
    "diff --git a/greet.py b/greet.py\n"
    "--- a/greet.py\n"
    "+++ b/greet.py\n"
    "@@ -1,4 +1,7 @@\n"
    " import sys\n"
    "+VERBOSE = '--verbose' in sys.argv\n"
    " \n"
    " def main():\n"
    "+    if VERBOSE:\n"
    "+        print('starting')\n"
    "     print('hello')\n"
)


def ts(second: int) -> str:
    return f"2025-03-04T10:{second // 60:02d}:{second % 60:02d}.000000"


def v0_events() -> list[dict]:
    """An OpenHands V0 session: message, command, read, edit, test run, answer, finish."""
    events: list[dict] = []

    def action(kind: str, message: str, args: dict, source: str = "agent") -> int:
        events.append(
            {
                "id": len(events),
                "timestamp": ts(len(events) * 3),
                "source": source,
                "message": message,
                "action": kind,
                "args": args,
                "timeout": 120,
            }
        )
        return len(events) - 1

    def observation(kind: str, cause: int, content: str, extras: dict) -> None:
        events.append(
            {
                "id": len(events),
                "timestamp": ts(len(events) * 3),
                "source": "environment" if kind != "agent_state_changed" else "agent",
                "message": content[:60],
                "cause": cause,
                "observation": kind,
                "content": content,
                "extras": extras,
            }
        )

    action(
        "message", TASK, {"content": TASK, "image_urls": None, "wait_for_response": False}, "user"
    )
    ls = action(
        "run",
        "Running command: ls",
        {"command": "ls", "is_input": False, "thought": "Look around first."},
    )
    observation(
        "run",
        ls,
        "README.md\ngreet.py\ntest_greet.py",
        {"command": "ls", "metadata": {"exit_code": 0, "working_dir": "/workspace"}},
    )
    read = action(
        "read", "Reading file: /workspace/greet.py", {"path": "/workspace/greet.py", "thought": ""}
    )
    observation(
        "read",
        read,
        "import sys\n\ndef main():\n    print('hello')\n",
        {"path": "/workspace/greet.py"},
    )
    edit = action(
        "edit",
        "Editing /workspace/greet.py",
        {
            "path": "/workspace/greet.py",
            "command": "str_replace",
            "old_str": "def main():\n    print('hello')",
            "new_str": "def main():\n    if VERBOSE:\n        print('starting')\n    print('hello')",
            "thought": "Print a line first when --verbose is given.",
        },
    )
    observation(
        "edit",
        edit,
        "The file /workspace/greet.py has been edited.",
        {"path": "/workspace/greet.py"},
    )
    test = action(
        "run",
        "Running command: python -m pytest -q",
        {"command": "python -m pytest -q", "is_input": False, "thought": ""},
    )
    observation(
        "run",
        test,
        "..\n2 passed in 0.01s",
        {
            "command": "python -m pytest -q",
            "metadata": {"exit_code": 0, "working_dir": "/workspace"},
        },
    )
    action(
        "message",
        "greet.py now takes --verbose; both tests pass.",
        {
            "content": "greet.py now takes --verbose; both tests pass.",
            "image_urls": None,
            "wait_for_response": True,
        },
    )
    action(
        "finish", "Done.", {"outputs": {}, "thought": "The flag works.", "final_thought": "Done."}
    )
    return events


def share_payload() -> dict:
    return {
        "version": "1.0",
        "email": "",
        "polarity": "positive",
        "feedback": "positive",
        "permissions": "private",
        "trajectory": v0_events(),
    }


def eval_rows() -> list[dict]:
    rows = []
    for number, (instance, resolved) in enumerate(
        (("greet__greet-1", True), ("greet__greet-2", False))
    ):
        history = v0_events()
        if not resolved:
            history = history[:5]
        rows.append(
            {
                "instance_id": instance,
                "instruction": f"{TASK} (instance {number + 1})",
                "metadata": {
                    "agent_class": "CodeActAgent",
                    "llm_config": {"model": "sample/model-1"},
                    "max_iterations": 30,
                },
                "history": history,
                "metrics": {"accumulated_cost": 0.0125 * (number + 1)},
                "test_result": {"git_patch": PATCH if resolved else "", "resolved": resolved},
                "error": None,
            }
        )
    return rows


def v1_rows() -> list[dict]:
    """OpenHands agent-SDK events (`kind`), as its evaluation output.jsonl carries them."""
    history = [
        {
            "kind": "MessageEvent",
            "id": "m-1",
            "timestamp": ts(0),
            "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": TASK}]},
        },
        {
            "kind": "ActionEvent",
            "id": "a-1",
            "timestamp": ts(2),
            "source": "agent",
            "thought": [{"type": "text", "text": "Run the tests first."}],
            "action": {
                "kind": "ExecuteBashAction",
                "command": "python -m pytest -q",
                "is_input": False,
            },
            "tool_name": "execute_bash",
            "tool_call_id": "call_1",
            "tool_call": {
                "id": "call_1",
                "name": "execute_bash",
                "arguments": '{"command": "python -m pytest -q"}',
            },
        },
        {
            "kind": "ObservationEvent",
            "id": "o-1",
            "timestamp": ts(4),
            "source": "environment",
            "tool_name": "execute_bash",
            "tool_call_id": "call_1",
            "action_id": "a-1",
            "observation": {
                "kind": "ExecuteBashObservation",
                "output": "..\n2 passed in 0.01s",
                "command": "python -m pytest -q",
                "exit_code": 0,
            },
        },
        {
            "kind": "MessageEvent",
            "id": "m-2",
            "timestamp": ts(6),
            "source": "agent",
            "llm_message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "The tests pass."}],
            },
        },
    ]
    return [
        {
            "instance_id": "greet-v1",
            "instruction": TASK,
            "metadata": {"llm": {"model": "sample/model-2"}},
            "history": history,
        },
        {
            "instance_id": "greet-v1-short",
            "instruction": TASK,
            "metadata": {"llm": {"model": "sample/model-2"}},
            "history": history[:3],
        },
    ]


def sweagent_traj() -> dict:
    steps = [
        ("ls", "README.md\ngreet.py\ntest_greet.py", "Look at the files."),
        (
            "open greet.py",
            "[File: /repo/greet.py (4 lines total)]\n1:import sys\n2:\n3:def main():\n4:    print('hello')",
            "Open the script.",
        ),
        ("python -m pytest -q", "..\n2 passed in 0.01s", "Run the tests."),
        ("submit", PATCH, "Submit the change."),
    ]
    return {
        "environment": "swe_main",
        "trajectory": [
            {
                "action": a,
                "observation": o,
                "response": t,
                "thought": t,
                "execution_time": 0.1,
                "state": {"open_file": "/repo/greet.py", "working_dir": "/repo"},
            }
            for a, o, t in steps
        ],
        "history": [
            {
                "message_type": "system_prompt",
                "role": "system",
                "content": "You are an autonomous programmer.",
            },
            {"message_type": "observation", "role": "user", "content": TASK},
        ],
        "info": {
            "submission": PATCH,
            "exit_status": "submitted",
            "model_stats": {"instance_cost": 0.02, "api_calls": 4},
        },
    }


def sharegpt() -> list[dict]:
    return [
        {
            "conversations": [
                {"from": "human", "value": "What is the weather in Paris?"},
                {
                    "from": "function_call",
                    "value": json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}}),
                },
                {"from": "observation", "value": json.dumps({"temperature_c": 18, "sky": "clear"})},
                {"from": "gpt", "value": "It is 18 °C and clear in Paris."},
            ],
            "system": "You are a helpful assistant with a weather tool.",
            "tools": json.dumps(
                [
                    {
                        "name": "get_weather",
                        "description": "Current weather",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    }
                ]
            ),
        },
        {
            "conversations": [
                {"from": "human", "value": "Say hello in French."},
                {"from": "gpt", "value": "Bonjour !"},
            ]
        },
    ]


def openai_messages() -> dict:
    return {
        "messages": [
            {"role": "system", "content": "You are a coding assistant with a shell."},
            {"role": "user", "content": "How many lines does greet.py have?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "wc -l greet.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_9", "content": "4 greet.py"},
            {"role": "assistant", "content": "greet.py has 4 lines."},
        ]
    }


def claude_code_session() -> list[dict]:
    """A Claude Code transcript: a prompt, thinking, a Bash call, an Edit with its patch, a Task
    whose subagent streams its work as progress lines, a compaction, and bookkeeping lines."""
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/Users/alice/work/greet",
        "sessionId": "5f0c2a8e-1d3b-4c6a-9e7f-0a1b2c3d4e5f",
        "version": "2.1.41",
        "gitBranch": "main",
    }
    usage = {"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 100}

    def line(n: int, kind: str, parent: int | None, **fields) -> dict:
        return {
            **base,
            "parentUuid": f"u{parent}" if parent is not None else None,
            "type": kind,
            "uuid": f"u{n}",
            "timestamp": ts(n) + "Z",
            **fields,
        }

    def reply(n: int, parent: int, message_id: str, *blocks: dict) -> dict:
        message = {
            "model": "claude-sonnet-4-5",
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": list(blocks),
            "usage": usage,
        }
        return line(n, "assistant", parent, message=message)

    def result(n: int, parent: int, call: str, content: str, **extra) -> dict:
        block = {"type": "tool_result", "tool_use_id": call, "content": content}
        return line(n, "user", parent, message={"role": "user", "content": [block]}, **extra)

    subagent_call = {"type": "tool_use", "id": "toolu_grep", "name": "Grep",
                     "input": {"pattern": "print", "path": "."}}  # fmt: skip
    subagent = [
        {"type": "user", "uuid": "s1", "message": {"role": "user", "content": [
            {"type": "text", "text": "Find where greet.py prints"}]}},
        {"type": "assistant", "uuid": "s2", "message": {"role": "assistant", "id": "msg_s2",
            "model": "claude-haiku-4-5", "content": [subagent_call]}},
        {"type": "user", "uuid": "s3", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_grep", "content": "greet.py:4"}]}},
        {"type": "assistant", "uuid": "s4", "message": {"role": "assistant", "id": "msg_s4",
            "model": "claude-haiku-4-5", "content": [{"type": "text",
                                                      "text": "greet.py prints on line 4."}]}},
    ]  # fmt: skip
    edit = {"file_path": "greet.py", "old_string": "def main():\n",
            "new_string": "VERBOSE = '--verbose' in sys.argv\n\ndef main():\n"}  # fmt: skip
    return [
        {
            "type": "file-history-snapshot",
            "messageId": "u1",
            "snapshot": {},
            "isSnapshotUpdate": False,
        },
        line(1, "user", None, message={"role": "user", "content": TASK}),
        reply(
            2,
            1,
            "msg_2",
            {
                "type": "thinking",
                "thinking": "Look at the file first.",
                "signature": "c2lnbmF0dXJl",
            },
        ),
        reply(
            3,
            2,
            "msg_2",
            {
                "type": "tool_use",
                "id": "toolu_cat",
                "name": "Bash",
                "input": {"command": "cat greet.py", "description": "Show it"},
            },
        ),
        result(
            4,
            3,
            "toolu_cat",
            "import sys\n\ndef main():\n    print('hello')\n",
            toolUseResult={"stdout": "import sys\n...", "stderr": "", "interrupted": False},
        ),
        reply(
            5,
            4,
            "msg_5",
            {
                "type": "tool_use",
                "id": "toolu_task",
                "name": "Task",
                "input": {
                    "description": "Find the print",
                    "prompt": "Find where greet.py prints",
                    "subagent_type": "Explore",
                },
            },
        ),
        *[
            line(
                6 + i,
                "progress",
                5,
                parentToolUseID="toolu_task",
                toolUseID=f"agent_{i}",
                data={
                    "type": "agent_progress",
                    "agentId": "a1b2c3",
                    "prompt": "Find where greet.py prints",
                    "message": {**nested, "timestamp": ts(6 + i) + "Z"},
                },
            )
            for i, nested in enumerate(subagent)
        ],
        result(10, 5, "toolu_task", "greet.py prints on line 4."),
        reply(
            11,
            10,
            "msg_11",
            {"type": "tool_use", "id": "toolu_edit", "name": "Edit", "input": edit},
        ),
        result(
            12,
            11,
            "toolu_edit",
            "The file greet.py has been updated.",
            toolUseResult={
                "filePath": "greet.py",
                "structuredPatch": [
                    {"oldStart": 1, "lines": [" import sys", "+VERBOSE = '--verbose' in sys.argv"]}
                ],
            },
        ),
        reply(
            13,
            12,
            "msg_13",
            {
                "type": "tool_use",
                "id": "toolu_test",
                "name": "Bash",
                "input": {"command": "python -m pytest -q"},
            },
        ),
        result(
            14,
            13,
            "toolu_test",
            "Exit code 1\nno tests ran",
        ),
        line(
            15,
            "system",
            14,
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 150000},
            level="info",
        ),
        line(
            16,
            "user",
            15,
            isCompactSummary=True,
            message={
                "role": "user",
                "content": "This session is being continued from a previous conversation. Summary: the flag is added.",
            },
        ),
        line(
            17,
            "user",
            16,
            isMeta=True,
            message={
                "role": "user",
                "content": "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>",
            },
        ),
        line(
            18,
            "user",
            17,
            message={"role": "user", "content": "<command-name>/cost</command-name>"},
        ),
        reply(
            19,
            18,
            "msg_19",
            {"type": "text", "text": "Added --verbose; the tests need a test file."},
        ),
        line(20, "system", 19, subtype="turn_duration", durationMs=4000),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(21) + "Z"},
    ]


def codex_rollout() -> list[dict]:
    """A Codex CLI rollout: the session line, the injected environment context, a prompt, the
    model's reasoning, a shell call, a patch, the token count, and the answer."""

    def line(n: int, kind: str, **payload) -> dict:
        return {"timestamp": ts(n) + "Z", "type": kind, "payload": payload}

    patch = "*** Begin Patch\n*** Update File: greet.py\n@@\n import sys\n+VERBOSE = '--verbose' in sys.argv\n*** End Patch"
    return [
        line(0, "session_meta", id="0198c0de-0000-7000-8000-000000000001", cwd="/home/dev/greet",
             originator="codex_cli_rs", cli_version="0.60.1", instructions=None, source="cli"),
        line(1, "response_item", type="message", role="user", content=[{"type": "input_text",
             "text": "<environment_context>\n  <cwd>/home/dev/greet</cwd>\n</environment_context>"}]),
        line(2, "event_msg", type="user_message", message=TASK, images=[]),
        line(2, "response_item", type="message", role="user",
             content=[{"type": "input_text", "text": TASK}]),
        line(3, "turn_context", cwd="/home/dev/greet", approval_policy="on-request",
             model="gpt-5.1-codex", effort="high"),
        line(4, "response_item", type="reasoning", summary=[{"type": "summary_text",
             "text": "**Reading greet.py**"}], content=None, encrypted_content="gAAAAB..."),
        line(5, "response_item", type="function_call", name="shell_command",
             arguments='{"command":"cat greet.py","workdir":"."}', call_id="call_cat"),
        line(6, "response_item", type="function_call_output", call_id="call_cat",
             output="Exit code: 0\nOutput:\nimport sys\n\ndef main():\n    print('hello')\n"),
        line(7, "response_item", type="custom_tool_call", status="completed", call_id="call_patch",
             name="apply_patch", input=patch),
        line(8, "response_item", type="custom_tool_call_output", call_id="call_patch",
             output='{"output":"Success. Updated the following files:\\nM greet.py\\n","metadata":{"exit_code":0}}'),
        line(9, "response_item", type="ghost_snapshot", ghost_commit={"id": "d8b27b2e"}),
        line(10, "event_msg", type="token_count", info={"total_token_usage": {
             "input_tokens": 1200, "cached_input_tokens": 800, "output_tokens": 150,
             "total_tokens": 1350}}),
        line(11, "event_msg", type="agent_message", message="greet.py takes --verbose now."),
        line(11, "response_item", type="message", role="assistant",
             content=[{"type": "output_text", "text": "greet.py takes --verbose now."}]),
    ]  # fmt: skip


def gemini_session() -> list[dict]:
    """A Gemini CLI session in its JSON Lines layout: the metadata line, a prompt, a slash
    command, the model's turn written three times under one id (text, then its thoughts and tool
    calls, then its tokens), a failed call, an edit with its diff, a rewound answer, a tool answer
    recorded as a user message, an info line, `$set` updates and the final answer."""
    stamp = lambda n: ts(n) + "Z"  # noqa: E731
    shell = {
        "id": "run_shell_command-1-a",
        "name": "run_shell_command",
        "args": {"command": "cat greet.py", "description": "Show greet.py"},
        "status": "success",
        "timestamp": stamp(4),
        "displayName": "Shell",
        "result": [
            {
                "functionResponse": {
                    "id": "run_shell_command-1-a",
                    "name": "run_shell_command",
                    "response": {
                        "output": "Command: cat greet.py\nOutput: import sys\n\ndef main():\n    print('hello')\nExit Code: 0"
                    },
                }
            }
        ],
    }
    missing = {
        "id": "read_file-1-b",
        "name": "read_file",
        "args": {"file_path": "tests/test_greet.py"},
        "status": "error",
        "timestamp": stamp(5),
        "displayName": "ReadFile",
        "result": [
            {
                "functionResponse": {
                    "id": "read_file-1-b",
                    "name": "read_file",
                    "response": {"error": "File not found: tests/test_greet.py"},
                }
            }
        ],
        "resultDisplay": "File not found.",
    }
    edit = {
        "id": "replace-1-c",
        "name": "replace",
        "args": {
            "file_path": "greet.py",
            "old_string": "import sys\n",
            "new_string": "import sys\nVERBOSE = '--verbose' in sys.argv\n",
        },
        "status": "success",
        "timestamp": stamp(7),
        "displayName": "Edit",
        "result": [
            {
                "functionResponse": {
                    "id": "replace-1-c",
                    "name": "replace",
                    "response": {
                        "output": "Successfully modified file: greet.py (1 replacements)."
                    },
                }
            }
        ],
        "resultDisplay": {
            "fileDiff": PATCH,
            "fileName": "greet.py",
            "filePath": "greet.py",
            "originalContent": "import sys\n",
            "newContent": "import sys\nVERBOSE = ...\n",
            "diffStat": {"model_added_lines": 1, "model_removed_lines": 0},
        },
    }
    test = {
        "id": "run_shell_command-1-d",
        "name": "run_shell_command",
        "args": {"command": "python greet.py --verbose"},
        "status": "success",
        "timestamp": stamp(11),
    }
    thoughts = [
        {
            "subject": "Reading greet.py",
            "description": "I need to see how it prints.",
            "timestamp": stamp(3),
        }
    ]
    tokens = {"input": 1200, "output": 60, "cached": 800, "thoughts": 40, "tool": 0, "total": 1300}
    turn = {
        "id": "g-1",
        "timestamp": stamp(3),
        "type": "gemini",
        "model": "gemini-2.5-pro",
        "content": "I'll look at greet.py first.",
    }
    return [
        {"sessionId": "5f1c2a9e-0000-4000-8000-00000000beef", "projectHash": "a" * 64,
         "startTime": stamp(0), "lastUpdated": stamp(0), "kind": "main"},
        {"id": "u-0", "timestamp": stamp(1), "type": "user", "content": [{"text": "/stats"}]},
        {"id": "i-0", "timestamp": stamp(1), "type": "info", "content": "Session stats shown."},
        {"id": "u-1", "timestamp": stamp(2), "type": "user", "content": [{"text": TASK}]},
        {"$set": {"lastUpdated": stamp(2)}},
        turn,
        {**turn, "thoughts": thoughts, "toolCalls": [shell, missing]},
        {**turn, "thoughts": thoughts, "toolCalls": [shell, missing], "tokens": tokens},
        {"id": "g-2", "timestamp": stamp(6), "type": "gemini", "model": "gemini-2.5-pro",
         "content": "There is no test file yet.", "tokens": {**tokens, "total": 1400}},
        {"$rewindTo": "g-2"},
        {"id": "g-3", "timestamp": stamp(7), "type": "gemini", "model": "gemini-2.5-pro",
         "content": "", "toolCalls": [edit, test],
         "tokens": {"input": 1500, "output": 90, "cached": 1100, "thoughts": 0, "tool": 0, "total": 1590}},
        {"id": "u-2", "timestamp": stamp(12), "type": "user", "content": [
            {"functionResponse": {"id": "run_shell_command-1-d", "name": "run_shell_command",
                                  "response": {"output": "starting\nhello"}}}]},
        {"id": "g-4", "timestamp": stamp(13), "type": "gemini", "model": "gemini-2.5-pro",
         "content": "greet.py takes --verbose now; a test file is still missing.",
         "tokens": {"input": 1700, "output": 20, "cached": 1500, "thoughts": 0, "tool": 0, "total": 1720}},
        {"$set": {"lastUpdated": stamp(13), "summary": "Add a --verbose flag to greet.py"}},
    ]  # fmt: skip


def atif_trajectory() -> dict:
    """An ATIF (Harbor) trajectory: a system prompt, the task, reasoning, parallel tool calls and
    their results, a failed command, per-step metrics, final metrics, and a subagent embedded
    and referred to from its call's result."""
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "run-7f3a",
        "trajectory_id": "main",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "anthropic/claude-sonnet-4",
                  "tool_definitions": [{"type": "function", "function": {"name": "bash",
                      "description": "Run a command", "parameters": {"type": "object",
                      "properties": {"command": {"type": "string"}}}}}]},
        "steps": [
            {"step_id": 1, "timestamp": ts(0) + "Z", "source": "system",
             "message": "You are a careful engineer working in /app."},
            {"step_id": 2, "timestamp": ts(1) + "Z", "source": "user", "message": TASK},
            {"step_id": 3, "timestamp": ts(3) + "Z", "source": "agent", "model_name": "anthropic/claude-sonnet-4",
             "reasoning_content": "First see the file and whether tests exist.",
             "message": "Looking at greet.py and the tests.",
             "tool_calls": [
                 {"tool_call_id": "call_cat", "function_name": "bash", "arguments": {"command": "cat greet.py"}},
                 {"tool_call_id": "call_ls", "function_name": "bash", "arguments": {"command": "ls tests"}}],
             "observation": {"results": [
                 {"source_call_id": "call_cat", "content": "import sys\n\ndef main():\n    print('hello')\n"},
                 {"source_call_id": "call_ls", "content": "ls: cannot access 'tests': No such file or directory"}]},
             "metrics": {"prompt_tokens": 1200, "completion_tokens": 80, "cached_tokens": 900, "cost_usd": 0.0042}},
            {"step_id": 4, "timestamp": ts(6) + "Z", "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "call_sub", "function_name": "delegate",
                             "arguments": {"task": "Write tests/test_greet.py"}}],
             "observation": {"results": [{"source_call_id": "call_sub", "content": "Wrote the test.",
                 "subagent_trajectory_ref": [{"trajectory_id": "tests-writer"}]}]},
             "metrics": {"prompt_tokens": 1500, "completion_tokens": 40, "cost_usd": 0.0031}},
            {"step_id": 5, "timestamp": ts(9) + "Z", "source": "agent",
             "message": "greet.py takes --verbose now and has a test.",
             "metrics": {"prompt_tokens": 1700, "completion_tokens": 20, "cost_usd": 0.0012}},
        ],
        "final_metrics": {"total_prompt_tokens": 4400, "total_completion_tokens": 140,
                          "total_cached_tokens": 900, "total_cost_usd": 0.0085, "total_steps": 5},
        "subagent_trajectories": [{
            "schema_version": "ATIF-v1.7", "trajectory_id": "tests-writer",
            "agent": {"name": "terminus-2-subagent", "version": "2.0.0"},
            "steps": [
                {"step_id": 1, "source": "user", "message": "Write tests/test_greet.py"},
                {"step_id": 2, "source": "agent", "message": "",
                 "tool_calls": [{"tool_call_id": "call_1", "function_name": "bash",
                                 "arguments": {"command": "mkdir -p tests && echo ok"}}],
                 "observation": {"results": [{"source_call_id": "call_1", "content": "ok"}]}},
                {"step_id": 3, "source": "agent", "message": "Wrote the test."},
            ],
        }],
    }  # fmt: skip


SAMPLES = {
    "openhands_v0_events.json": v0_events,
    "openhands_share_payload.json": share_payload,
    "openhands_eval_output.jsonl": eval_rows,
    "openhands_v1_sdk_output.jsonl": v1_rows,
    "sweagent_run.traj": sweagent_traj,
    "sharegpt_conversations.json": sharegpt,
    "openai_messages.json": openai_messages,
    "claude_code_session.jsonl": claude_code_session,
    "codex_rollout.jsonl": codex_rollout,
    "gemini_cli_session.jsonl": gemini_session,
    "atif_trajectory.json": atif_trajectory,
}


def main() -> None:
    for name, make in SAMPLES.items():
        value = make()
        if name.endswith(".jsonl"):
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in value)
        else:
            text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
        (HERE / name).write_text(text)
        print(f"wrote {name} ({len(text.encode()):,} bytes)")


if __name__ == "__main__":
    main()
