"""Cards of the coding agents' own sessions: Claude Code transcripts, Codex CLI rollouts,
Gemini CLI sessions and ATIF trajectories (importers/claude_code.py, codex_cli.py,
gemini_cli.py, atif.py).

Their events carry the tool's name and its input (`tool`, `input` / `arguments`), results linked
by `tool_use_id` / `call_id`, thinking, context and compaction records. Laid out as a reader of
such a session expects:
- thinking and reasoning folded under a "Thinking" summary;
- file edits (`Edit`, `MultiEdit`, `Write`, `apply_patch`) as diffs;
- todo-list updates (`TodoWrite`, Codex's `update_plan`) as a checklist;
- a subagent's launch (`Task`) with its prompt, its own steps marked as nested under it;
- tool errors marked; each reply's token use on its card;
- compaction where the context was cut, its summary folded; injected context folded.
"""

from __future__ import annotations

from typing import Any

from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.tool_calls import tool_call
from apps.trajectories.rendering.values import as_str, humanize, parse_json_string

# Event types of these sessions that carry no fields of their own (`data` is {}).
TYPES = {"thinking", "compaction", "compaction_summary", "context", "instructions", "turn_aborted"}

_SHELL = {
    "bash",
    "shell",
    "shell_command",
    "local_shell_call",
    "exec_command",
    "container.exec",
    "run_shell_command",
}
# Gemini CLI's file tools, by what they do.
_GEMINI_EDITS = {"replace": "Edit", "write_file": "Write"}
_GEMINI_READS = {"read_file", "read_many_files"}
_TODO_STATUS = {"completed": "done", "in_progress": "in_progress", "pending": "todo"}
_RESULT_TITLES = {
    "Read": "File content",
    "Bash": "Output",
    "Grep": "Matches",
    "Glob": "Files",
    "Task": "Subagent's answer",
    "delegate": "Subagent's answer",
    "Agent": "Subagent's answer",
    "WebFetch": "Page",
    "WebSearch": "Search results",
}


def is_session_event(data: dict[str, Any]) -> bool:
    """The shape of these importers' events (shape_of asks this before the generic card)."""
    if isinstance(data.get("tool"), str) and ("input" in data or "arguments" in data):
        return True
    if any(isinstance(data.get(key), str) for key in ("tool_use_id", "call_id", "source_call_id")):
        return "observation" not in data and "action" not in data
    if data.get("subtype") == "compact_boundary" or isinstance(data.get("subagent"), dict):
        return "role" not in data
    return isinstance(data.get("message_id"), str) and "role" not in data


def present_session(b: CardBuilder) -> None:
    kind, type_ = b.card.kind, b.card.type
    if type_ in ("thinking", "reasoning"):
        b.head("Thinking", "think")
        b.markdown(b.text, collapsed=True, summary=_first_line(b.text) or "Thinking")
    elif type_ == "compaction":
        b.head("Context compacted", "system")
        compact = b.data.get("compact")
        if isinstance(compact, dict) and compact.get("trigger"):
            b.badge(as_str(compact.get("trigger")))
        b.note("The context was cut here: the agent went on from a summary of the turns before.")
    elif type_ == "compaction_summary":
        b.head("Summary of the earlier conversation", "system")
        b.markdown(b.text, collapsed=True, summary="The summary the agent continued from")
    elif type_ in ("context", "instructions"):
        b.head("Context" if type_ == "context" else "Instructions (AGENTS.md)", "system")
        b.output(b.text, collapsed=True, summary="Added by the agent, not typed by the user")
    elif type_ == "turn_aborted":
        b.head("Turn aborted", "system")
        b.note(b.text, tone="bad")
    elif kind == "action":
        _action(b)
    elif kind == "observation":
        _result(b)
    else:
        user = b.card.source == "user"
        if user and isinstance(b.data.get("subagent"), dict):
            b.head("Subagent's task", "user")
        else:
            b.head("User" if user else "Agent", "user" if user else "agent")
        b.markdown(b.text)
        images = b.data.get("images")
        if isinstance(images, list):
            b.images(*images, label="Images", alt="Attached image")
    _subagent(b)
    _usage(b)


def _action(b: CardBuilder) -> None:
    name = as_str(b.data.get("tool")) or b.card.type
    raw = b.data.get("input") if "input" in b.data else b.data.get("arguments")
    arguments = parse_json_string(raw)
    args: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
    key = name.lower()
    name = _GEMINI_EDITS.get(name, name)
    if name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        _edit(b, name, args)
    elif key == "apply_patch" or (isinstance(arguments, str) and "*** Begin Patch" in arguments):
        patch = arguments if isinstance(arguments, str) else as_str(args.get("input"))
        b.head("Patch", "edit")
        b.diff(_as_unified(patch), label="apply_patch")
    elif name == "TodoWrite" or key in ("update_plan", "write_todos"):
        _todos(b, name, args)
    elif name in ("Task", "Agent") or key == "delegate":
        b.head("Subagent", "tool", as_str(args.get("description")))
        if args.get("subagent_type"):
            b.badge(as_str(args.get("subagent_type")))
        b.markdown(as_str(args.get("prompt") or args.get("task")), label="Its task")
    elif name == "Read" or key in _GEMINI_READS:
        path = args.get("file_path") or args.get("absolute_path") or args.get("paths")
        b.head("Read file", "file", as_str(path), code=True)
        if args.get("offset") or args.get("limit"):
            start = as_str(args.get("offset") or 1)
            b.badge(
                f"from line {start}"
                + (f", {as_str(args['limit'])} lines" if args.get("limit") else "")
            )
    elif name in ("Grep", "Glob"):
        b.head(
            "Search" if name == "Grep" else "Find files",
            "file",
            as_str(args.get("pattern")),
            code=True,
        )
        b.fields(args, skip={"pattern"}, collapsed=True, summary="Options")
    elif name in ("WebFetch", "WebSearch") or key == "web_search_call":
        b.head("Fetch a page" if name == "WebFetch" else "Web search", "browser")
        if args.get("url"):
            b.url(args.get("url"))
        query = args.get("query") or (b.data.get("action") or {}).get("query")
        if query:
            b.subtitle(as_str(query))
        b.markdown(as_str(args.get("prompt")))
    elif key in _SHELL or name == "Bash":
        command = args.get("command") if args else b.data.get("action")
        if isinstance(command, dict):
            command = command.get("command")
        if isinstance(command, list):
            # Codex runs ["bash", "-lc", "the command"]: the command is the last word.
            command = (
                command[-1]
                if command[:1] in (["bash"], ["sh"], ["zsh"])
                else " ".join(map(as_str, command))
            )
        b.head("Command", "command", as_str(args.get("description")))
        b.code(as_str(command) or b.text, language="bash")
        if args.get("workdir"):
            b.badge(f"in {as_str(args['workdir'])}")
    else:
        tool_call(b, name, args or raw)
        if b.card.title == "Tool call" and not b.card.subtitle:
            b.subtitle(name)


def _edit(b: CardBuilder, name: str, args: dict[str, Any]) -> None:
    path = as_str(args.get("file_path") or args.get("notebook_path"))
    if name == "Write":
        b.head("Write file", "edit", path, code=True)
        b.file_diff("", as_str(args.get("content")), path=path, label="New content")
    elif name == "MultiEdit":
        b.head("Edit file", "edit", path, code=True)
        edits = args.get("edits") if isinstance(args.get("edits"), list) else []
        b.badge(f"{len(edits)} edits")
        for index, edit in enumerate(edits[:50], start=1):
            if isinstance(edit, dict):
                b.file_diff(
                    as_str(edit.get("old_string")),
                    as_str(edit.get("new_string")),
                    path=path,
                    label=f"Edit {index}",
                )
    elif name == "NotebookEdit":
        b.head("Edit notebook", "edit", path, code=True)
        b.code(as_str(args.get("new_source")), label=as_str(args.get("edit_mode")) or "New cell")
    else:
        b.head("Edit file", "edit", path, code=True)
        if args.get("replace_all"):
            b.badge("every occurrence")
        b.file_diff(as_str(args.get("old_string")), as_str(args.get("new_string")), path=path)


def _todos(b: CardBuilder, name: str, args: dict[str, Any]) -> None:
    items = args.get("todos") if "todos" in args else args.get("plan")
    tasks = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            status = as_str(item.get("status"))
            tasks.append(
                {
                    "title": as_str(
                        item.get("content") or item.get("step") or item.get("description")
                    ),
                    "status": _TODO_STATUS.get(status, status or "todo"),
                }
            )
    done = sum(1 for task in tasks if task["status"] == "done")
    title = "Plan" if name == "update_plan" else "To-do list"
    b.head(title, "think", f"{done} of {len(tasks)} done")
    if args.get("explanation"):
        b.markdown(as_str(args.get("explanation")))
    b.tasks(tasks)


def _result(b: CardBuilder) -> None:
    name = b.card.type
    failed = b.data.get("is_error") is True or _exit_code(b.data) not in (None, 0)
    if name.lower() in _SHELL:
        title = "Output"
    elif name.lower() in _GEMINI_READS:
        title = "File content"
    elif name.lower() == "apply_patch":
        title = "Patch result"
    else:
        title = _RESULT_TITLES.get(name, f"{humanize(name)} result" if name else "Result")
    b.head(title, "output")
    if failed:
        b.badge("error", "bad")
    details = b.data.get("tool_use_result")
    patch = details.get("structuredPatch") if isinstance(details, dict) else None
    file_diff = b.data.get("file_diff")  # Gemini CLI's account of an edit
    if isinstance(file_diff, dict) and isinstance(file_diff.get("fileDiff"), str) and not failed:
        b.diff(file_diff["fileDiff"])
        b.note(b.text)
    elif isinstance(patch, list) and patch and not failed:
        b.note(b.text)  # the diff is on the edit's own card
    else:
        b.output(b.text, tone="bad" if failed else "")
    images = b.data.get("images")
    if isinstance(images, list):
        b.images(*images, label="Images", alt="Screenshot")


def _exit_code(data: dict[str, Any]) -> Any:
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
        return metadata["exit_code"]
    details = data.get("tool_use_result")
    if isinstance(details, dict) and isinstance(details.get("exitCode"), int):
        return details["exitCode"]
    return None


def _subagent(b: CardBuilder) -> None:
    subagent = b.data.get("subagent")
    if isinstance(subagent, dict):
        b.card.nested = as_str(subagent.get("agent_id")) or "subagent"
        b.badge("subagent")


def _usage(b: CardBuilder) -> None:
    """A turn's tokens: Claude's and Codex's `usage`, Gemini's `tokens` (with its own total),
    ATIF's `metrics` (prompt and completion tokens, and the step's cost)."""
    usage = b.data.get("usage") or b.data.get("tokens") or b.data.get("metrics")
    if not isinstance(usage, dict):
        return

    def number(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    if "total" in usage:
        total = number("total")
    elif "prompt_tokens" in usage or "completion_tokens" in usage:
        total = number("prompt_tokens") + number("completion_tokens")
    else:
        total = sum(number(key) for key in usage)
    if total > 0:
        b.metrics(tokens=total)
        b.badge(f"{_short(total)} tokens")
    cost = usage.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
        b.badge(f"${cost:.4f}")


def _short(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0].strip(" *#")
    return line if len(line) <= 100 else line[:99] + "…"


def _as_unified(patch: str) -> str:
    """apply_patch's envelope as a diff the page colours: file headers as `+++` lines, the rest
    as it is (its body is already `+`, `-` and ` ` lines under `@@`)."""
    out = []
    for line in patch.splitlines():
        if line.startswith(("*** Update File: ", "*** Add File: ", "*** Delete File: ")):
            verb, _, path = line[4:].partition(": ")
            out.append(f"+++ {path} ({verb.split()[0].lower()})")
        elif line.startswith(("*** Begin Patch", "*** End Patch", "*** End of File")):
            continue
        else:
            out.append(line)
    return "\n".join(out)
