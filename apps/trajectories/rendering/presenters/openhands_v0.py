"""Cards for OpenHands V0 events (shared/OPENHANDS.md 2.3 and 2.4), including flat legacy events:
the actions here, the observations in openhands_v0_observations.py."""

from __future__ import annotations

import ast
import re

from apps.trajectories.importers.base import as_text
from apps.trajectories.importers.openhands_v0 import TOP_KEYS
from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.openhands_v0_observations import observation
from apps.trajectories.rendering.values import as_str, humanize, lines_of


def args_of(data: dict, key: str) -> dict:
    value = data.get(key)
    if isinstance(value, dict):
        return value
    # Flat legacy events (resolver output, 2024) carry their args/extras at the top level.
    return {k: v for k, v in data.items() if k not in TOP_KEYS}


def present(b: CardBuilder) -> None:
    data = b.data
    metrics = data.get("llm_metrics")
    if isinstance(metrics, dict):
        usage = metrics.get("accumulated_token_usage")
        tokens = None
        if isinstance(usage, dict):
            parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
            tokens = sum(p for p in parts if isinstance(p, int) and not isinstance(p, bool)) or None
        b.metrics(metrics.get("accumulated_cost"), tokens)
    if isinstance(data.get("action"), str):
        action(b, data["action"], args_of(data, "args"))
    else:
        observation(b, as_str(data.get("observation")), args_of(data, "extras"))


def thought(b: CardBuilder, args: dict, *, label: str = "") -> None:
    b.markdown(as_text(args.get("thought"), image=""), label=label)


def action(b: CardBuilder, name: str, args: dict) -> None:
    data = b.data
    message = as_str(data.get("message"))
    handler = ACTIONS.get(name)
    if handler is not None:
        handler(b, args, message)
    else:
        b.head(humanize(name), "tool")
        thought(b, args)
        b.fields(args, skip={"thought", "security_risk", "hidden"})
        if not args and message:
            b.markdown(message)
    risk = args.get("security_risk")
    if isinstance(risk, int) and not isinstance(risk, bool) and risk >= 1:
        b.badge(
            {1: "medium risk", 2: "high risk"}.get(risk, f"risk {risk}"),
            "bad" if risk >= 2 else "warn",
        )
    state = args.get("confirmation_state") or args.get("is_confirmed")
    if isinstance(state, str) and state not in ("confirmed", ""):
        b.badge(state.replace("_", " "), "warn")
    timeout = data.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        b.badge(f"timeout {timeout:g}s")


def _message(b: CardBuilder, args: dict, message: str) -> None:
    user = b.card.source == "user"
    b.head("User" if user else "Agent", "user" if user else "agent")
    # Flat legacy events keep `content` at the top level, where observations keep theirs.
    b.markdown(as_text(args.get("content") or b.data.get("content"), image="") or message)
    b.images(
        args.get("image_urls"),
        args.get("images_urls"),
        label="Attached images",
        alt="Attached image",
    )
    files = args.get("file_urls")
    if isinstance(files, list) and files:
        b.fields({"files": files})


def _system(b: CardBuilder, args: dict, message: str) -> None:
    version = as_str(args.get("openhands_version"))
    agent = as_str(args.get("agent_class"))
    b.head(
        "System prompt",
        "system",
        " ".join(part for part in (agent, version and f"v{version}") if part),
    )
    text = as_text(args.get("content"), image="") or message
    b.output(text, collapsed=True, summary=f"System prompt ({lines_of(text)})", tail=0)
    tools = args.get("tools")
    if isinstance(tools, list) and tools:
        names = []
        for tool in tools:
            if isinstance(tool, dict):
                function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
                names.append(as_str(function.get("name")) or "?")
        if names:
            b.note("Tools: " + ", ".join(names))


def _initialize(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Session settings", "system")
    b.fields(args)


def _run(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Command", "command")
    thought(b, args)
    b.code(as_str(args.get("command")), language="bash")
    if args.get("is_input") is True:
        b.badge("input to the running process")
    if args.get("cwd"):
        b.badge(f"in {as_str(args.get('cwd'))}")


def _ipython(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Python", "command")
    thought(b, args)
    b.code(as_str(args.get("code")), language="python")


def _read(b: CardBuilder, args: dict, message: str) -> None:
    path = as_str(args.get("path"))
    b.head("Read file", "file", path, code=True)
    thought(b, args)
    view_range = args.get("view_range")
    start, end = args.get("start"), args.get("end")
    if isinstance(view_range, list) and len(view_range) == 2:
        b.badge(f"lines {as_str(view_range[0])}–{as_str(view_range[1])}")
    elif isinstance(start, int) and isinstance(end, int) and (start > 0 or end > 0):
        b.badge(f"lines {start}–{end if end >= 0 else 'end'}")


def _write(b: CardBuilder, args: dict, message: str) -> None:
    path = as_str(args.get("path"))
    b.head("Write file", "edit", path, code=True)
    thought(b, args)
    b.file_diff("", as_str(args.get("content")), path=path, label="Written content")


def edit_args(b: CardBuilder, args: dict, *, path: str) -> None:
    """An edit from its arguments (OpenHands' str_replace_editor, and V1's FileEditorAction)."""
    command = as_str(args.get("command"))
    if command == "str_replace":
        b.file_diff(as_str(args.get("old_str")), as_str(args.get("new_str")), path=path)
    elif command == "create":
        b.file_diff("", as_str(args.get("file_text")), path=path, label="New file")
    elif command == "insert":
        line = as_str(args.get("insert_line"))
        b.note(f"Insert after line {line}" if line else "Insert")
        b.code(as_str(args.get("new_str")), filename=path)
    elif command == "view":
        view_range = args.get("view_range")
        if isinstance(view_range, list) and len(view_range) == 2:
            b.badge(f"lines {as_str(view_range[0])}–{as_str(view_range[1])}")
    elif command == "undo_edit":
        b.note("Undo the last edit")
    elif args.get("content"):
        # LLM-based edit: the new content of the range start..end.
        b.code(as_str(args.get("content")), filename=path, label="New content")
    else:
        b.fields(args, skip={"path", "thought", "security_risk", "impl_source", "command"})


TRANSLATED_EDIT = re.compile(r"file_editor\(\*\*(\{.*\})\)\)?\s*$", re.DOTALL)


def translated_edit_args(args: dict) -> dict:
    """Early-2025 oh_aci edits name their arguments only in `translated_ipython_code`
    (`print(file_editor(**{'command': 'create', ...}))`): read that dict literal, never run it."""
    code = args.get("translated_ipython_code")
    if args.get("command") or not isinstance(code, str) or len(code) > 2_000_000:
        return args
    found = TRANSLATED_EDIT.search(code)
    if not found:
        return args
    try:
        parsed = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return args
    if not isinstance(parsed, dict):
        return args
    return {**args, **{k: v for k, v in parsed.items() if isinstance(k, str)}}


def _edit(b: CardBuilder, args: dict, message: str) -> None:
    args = translated_edit_args(args)
    path = as_str(args.get("path"))
    command = as_str(args.get("command"))
    title = "View file" if command == "view" else "Edit file"
    b.head(title, "file" if command == "view" else "edit", path, code=True)
    if command and command not in ("view",):
        b.badge(command.replace("_", " "))
    thought(b, args)
    edit_args(b, args, path=path)


def _browse(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Browse", "browser")
    b.url(args.get("url"))
    thought(b, args)


def _browse_interactive(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Browser action", "browser")
    thought(b, args)
    b.code(as_str(args.get("browser_actions")), language="python")
    b.markdown(as_str(args.get("browsergym_send_msg_to_user")), label="Message to the user")


def _mcp(b: CardBuilder, args: dict, message: str) -> None:
    b.head("MCP tool", "tool", as_str(args.get("name")), code=True)
    thought(b, args)
    b.json(args.get("arguments"), label="Arguments")


def _delegate(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Delegate", "tool", as_str(args.get("agent")), code=True)
    thought(b, args)
    b.json(args.get("inputs"), label="Inputs")


def _think(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Thought", "think")
    b.markdown(as_text(args.get("thought"), image="") or message)


def _finish(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Finish", "finish")
    final = as_text(args.get("final_thought"), image="")
    b.markdown(final or as_text(args.get("thought"), image="") or message)
    if final and args.get("thought"):
        thought(b, args, label="Thought")
    b.json(args.get("outputs"), label="Outputs")
    completed = args.get("task_completed")
    if isinstance(completed, str) and completed:
        b.badge(f"task completed: {completed}", "ok" if completed == "true" else "")


def _reject(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Reject", "error")
    b.markdown(as_text(args.get("thought"), image="") or message)
    b.json(args.get("outputs"), label="Outputs")


def _agent_state(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Agent state", "state")
    b.badge(as_str(args.get("agent_state")).replace("_", " "))
    thought(b, args)


def _recall(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Recall", "tool", as_str(args.get("recall_type")).replace("_", " "))
    b.markdown(as_str(args.get("query")), label="Query")
    thought(b, args)


def _condensation(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Condensation", "meta")
    b.markdown(as_str(args.get("summary")), label="Summary")
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    ids = args.get("forgotten_event_ids")
    if start is not None and end is not None:
        b.note(f"Forgets events {as_str(start)}–{as_str(end)}")
    elif isinstance(ids, list) and ids:
        shown = ", ".join(as_str(i) for i in ids[:40]) + (" …" if len(ids) > 40 else "")
        b.note(f"Forgets {len(ids)} events: {shown}")
    if not args.get("summary") and not ids and start is None:
        b.note(message)


def _task_tracking(b: CardBuilder, args: dict, message: str) -> None:
    b.head("Task list", "tool", as_str(args.get("command")))
    thought(b, args)
    b.tasks(args.get("task_list"))


def _simple(title: str, family: str = "meta"):
    def handler(b: CardBuilder, args: dict, message: str) -> None:
        b.head(title, family)
        thought(b, args)
        b.note(message)
        rest = {k: v for k, v in args.items() if k not in ("thought", "security_risk", "hidden")}
        b.fields(rest)

    return handler


ACTIONS = {
    "message": _message,
    "system": _system,
    "initialize": _initialize,
    "run": _run,
    "run_ipython": _ipython,
    "read": _read,
    "write": _write,
    "edit": _edit,
    "browse": _browse,
    "browse_interactive": _browse_interactive,
    "call_tool_mcp": _mcp,
    "delegate": _delegate,
    "think": _think,
    "finish": _finish,
    "reject": _reject,
    "change_agent_state": _agent_state,
    "recall": _recall,
    "condensation": _condensation,
    "condensation_request": _simple("Condensation request"),
    "task_tracking": _task_tracking,
    "loop_recovery": _simple("Loop recovery"),
    "null": _simple("No action"),
    "pause": _simple("Pause", "state"),
    "resume": _simple("Resume", "state"),
    "stop": _simple("Stop", "state"),
    "start": _simple("Start", "state"),
}
