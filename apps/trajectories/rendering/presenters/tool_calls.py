"""A tool call of a chat-shaped format (OpenAI, ShareGPT, SWE-agent) laid out as OpenHands' own
card for the same action: a shell call as a command, an editor call as an edit, Python as code."""

from __future__ import annotations

from typing import Any

from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.base import ACTION_TITLES
from apps.trajectories.rendering.presenters.openhands_v0 import edit_args
from apps.trajectories.rendering.values import as_str, parse_json_string

# Tool names as agents call them, laid out as OpenHands' own card for the same action.
SHELL_TOOLS = {"bash", "execute_bash", "shell", "terminal", "run", "run_command", "execute_command"}
EDIT_TOOLS = {
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "file_editor",
    "edit_file",
    "edit",
}
PYTHON_TOOLS = {"execute_ipython_cell", "ipython", "python", "run_ipython"}
EDIT_COMMANDS = {"view", "create", "str_replace", "insert", "undo_edit"}


def tool_call(b: CardBuilder, name: str, arguments: Any, *, only: bool = True) -> None:
    """A tool call as the matching OpenHands card: a shell call as a command, an editor call
    as an edit (diff), Python as code, think/finish as text, any other as readable arguments.

    `only`: the message holds just this call, so the card takes its title; otherwise (several
    calls in one message) each call gets a label under the message's title.
    """
    args = parse_json_string(arguments)
    key = name.strip().lower()
    label = "" if only else f"Tool call: {name[:60]}"

    def head(title: str, family: str, subtitle: str = "") -> None:
        if only and title == "Tool call" and b.card.type in ACTION_TITLES:
            # The importer already knew the kind of step (SWE-agent's "run"): keep its title.
            b.subtitle(subtitle, code=True)
        elif only:
            b.head(title, family, subtitle, code=bool(subtitle))
        elif subtitle:
            b.note(f"{title}: {subtitle}")

    if isinstance(args, dict):
        command, code, path = (
            args.get("command") or args.get("cmd"),
            args.get("code"),
            args.get("path"),
        )
        if (
            isinstance(path, str)
            and isinstance(command, str)
            and (key in EDIT_TOOLS or command in EDIT_COMMANDS)
        ):
            head(
                "View file" if command == "view" else "Edit file",
                "file" if command == "view" else "edit",
                path,
            )
            if command != "view":
                b.badge(command.replace("_", " "))
            edit_args(b, args, path=path)
            return
        if isinstance(command, str) and (key in SHELL_TOOLS or (len(args) <= 3 and not path)):
            head("Command", "command")
            b.code(command, language="bash", label=label)
            timeout = args.get("timeout")
            if (
                isinstance(timeout, (int, float, str))
                and not isinstance(timeout, bool)
                and timeout != ""
            ):
                b.badge(f"timeout {as_str(timeout)}s")
            if args.get("is_input") in (True, "true"):
                b.badge("input to the running process")
            return
        if isinstance(code, str) and (key in PYTHON_TOOLS or len(args) <= 2):
            head("Python", "command")
            b.code(code, language="python", label=label)
            return
        if key == "think" and isinstance(args.get("thought"), str):
            head("Thought", "think")
            b.markdown(args["thought"], label=label)
            return
        if key in ("finish", "submit"):
            head("Finish", "finish")
            b.markdown(
                as_str(args.get("message") or args.get("final_thought") or args.get("result"))
            )
            b.fields(args, skip={"message", "final_thought", "result"})
            return
        head("Tool call", "tool", name[:60])
        b.fields(args, label=label)
        return
    head("Tool call", "tool", name[:60])
    if isinstance(args, str):
        b.code(args, label=label or "Arguments")
    else:
        b.json(args, label=label or "Arguments")
