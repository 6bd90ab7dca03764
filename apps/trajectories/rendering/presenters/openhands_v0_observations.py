"""Cards for OpenHands V0 observations (shared/OPENHANDS.md 2.4), one handler per observation."""

from __future__ import annotations

import re
from typing import Any

from apps.trajectories.importers.base import as_text
from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.values import as_str, humanize, lines_of

# Browser extras that are machine state, not something a reader looks at (they stay in the JSON).
BROWSER_NOISE = {
    "dom_object",
    "axtree_object",
    "extra_element_properties",
    "screenshot",
    "set_of_marks",
    "screenshot_path",
    "open_pages_urls",
    "active_page_index",
    "focused_element_bid",
    "goal_image_urls",
    "trigger_by_action",
    "url",
    "error",
    "last_browser_action",
    "last_browser_action_error",
    "filter_visible_only",
}
INLINE_IMAGE = re.compile(r"!\[[^\]]*\]\((?:data:[^)]*|trajhub-image:(?:[0-9a-f]{64}|removed))\)")


def exit_code_of(extras: dict) -> Any:
    metadata = extras.get("metadata")
    if isinstance(metadata, dict) and metadata.get("exit_code") is not None:
        return metadata.get("exit_code")
    return extras.get("exit_code")


def exit_badge(b: CardBuilder, code: Any) -> None:
    if isinstance(code, int) and not isinstance(code, bool):
        if code == -1:
            b.badge("still running / timed out", "warn")
        else:
            b.badge(f"exit {code}", "ok" if code == 0 else "bad")


def observation(b: CardBuilder, name: str, extras: dict) -> None:
    data = b.data
    content = as_text(data.get("content"), image="")
    message = as_str(data.get("message"))
    handler = OBSERVATIONS.get(name)
    if handler is not None:
        handler(b, extras, content, message)
    else:
        b.head(humanize(name or "observation"), "output")
        b.output(content or message)
        b.fields(extras, skip={"hidden"})


def _run_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    code = exit_code_of(extras)
    b.head("Output", "output")
    exit_badge(b, code)
    if b.data.get("success") is False and not isinstance(code, int):
        b.badge("failed", "bad")
    metadata = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
    if metadata.get("working_dir"):
        b.badge(f"in {as_str(metadata.get('working_dir'))}")
    if extras.get("hidden") is True:
        b.badge("hidden")
    b.output(content, tone="bad" if isinstance(code, int) and code not in (0, -1) else "")
    if not content.strip():
        b.note("(no output)")


def _ipython_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Python output", "output")
    b.output(INLINE_IMAGE.sub("[image]", content))
    b.images(extras.get("image_urls"), label="Plots", alt="Plot")


def _read_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    path = as_str(extras.get("path"))
    b.head("File content", "file", path, code=True)
    b.code(content, filename=path)


def _write_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Write result", "output", as_str(extras.get("path")), code=True)
    b.output(content or message)


def _edit_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    path = as_str(extras.get("path"))
    b.head("Edit result", "edit", path, code=True)
    diff = extras.get("diff")
    old, new = extras.get("old_content"), extras.get("new_content")
    # oh_aci reports a refused edit in the text, with the attempted old/new strings in extras.
    failed = content.lstrip().startswith("ERROR") or "No replacement was performed" in content[:500]
    if failed:
        b.badge("failed", "bad")
        b.output(content, tone="bad", tail=0)
    elif extras.get("prev_exist") is False and not old:
        b.badge("new file")
    label = "Attempted change" if failed else ""
    if isinstance(diff, str) and diff.strip():
        b.diff(diff, label=label)
    elif isinstance(old, str) and isinstance(new, str) and old != new:
        b.file_diff(old, new, path=path, label=label)
    elif not old and isinstance(new, str) and new and extras.get("prev_exist") is False:
        b.file_diff("", new, path=path)
    elif not failed and content.startswith("--- ") and "\n+++ " in content[:2000]:
        b.diff(content)
        return
    if not failed:
        shown_diff = bool(b.card.blocks)
        b.output(content or message, collapsed=shown_diff, summary="Tool output", tail=0)


def _browse_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Browser", "browser")
    b.url(extras.get("url"))
    error = extras.get("error")
    if error is True:
        b.badge("error", "bad")
    b.note(as_str(extras.get("last_browser_action_error")), tone="bad")
    b.images(
        extras.get("screenshot"),
        label="Screenshot",
        alt=f"Screenshot of {as_str(extras.get('url'))}",
    )
    b.images(
        extras.get("set_of_marks"),
        alt="Set-of-marks screenshot",
        collapsed=True,
        summary="Set-of-marks screenshot",
    )
    b.output(content, collapsed=True, summary=f"Page text ({lines_of(content)})", tail=0)
    rest = {k: v for k, v in extras.items() if k not in BROWSER_NOISE}
    b.fields(rest)


def _error(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Error", "error")
    b.output(content or message, tone="bad", tail=0)


def _agent_state_changed(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Agent state", "state")
    state = as_str(extras.get("agent_state")).replace("_", " ")
    b.badge(state, "bad" if state in ("error", "rejected") else "")
    b.markdown(as_str(extras.get("reason")) or content)


def _delegate_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Delegate result", "output")
    b.json(extras.get("outputs"), label="Outputs")
    b.markdown(content)


def _recall_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Recall result", "output", as_str(extras.get("recall_type")).replace("_", " "))
    b.fields(
        {
            k: extras.get(k)
            for k in (
                "repo_name",
                "repo_directory",
                "repo_branch",
                "date",
                "working_dir",
                "runtime_hosts",
                "custom_secrets_descriptions",
            )
        }
    )
    for key, title in (
        ("repo_instructions", "Repository instructions"),
        ("additional_agent_instructions", "Additional instructions"),
        ("conversation_instructions", "Conversation instructions"),
    ):
        text = as_str(extras.get(key))
        b.markdown(text, collapsed=True, summary=title)
    knowledge = extras.get("microagent_knowledge")
    if isinstance(knowledge, list):
        for item in knowledge[:50]:
            if isinstance(item, dict):
                name = as_str(item.get("name")) or "knowledge"
                trigger = as_str(item.get("trigger"))
                summary = f"Microagent {name}" + (f" (trigger: {trigger})" if trigger else "")
                b.markdown(as_str(item.get("content")), collapsed=True, summary=summary[:200])
    b.markdown(content)


def _mcp_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("MCP result", "output", as_str(extras.get("name")), code=True)
    b.json(content)


def _task_output(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Task list", "output", as_str(extras.get("command")))
    b.tasks(extras.get("task_list"))
    b.output(content, collapsed=bool(extras.get("task_list")), summary="Tool output")


def _download(b: CardBuilder, extras: dict, content: str, message: str) -> None:
    b.head("Download", "output", as_str(extras.get("file_path")), code=True)
    b.output(content or message)


def _text_observation(
    title: str, family: str = "output", *, markdown: bool = False, tone: str = ""
):
    def handler(b: CardBuilder, extras: dict, content: str, message: str) -> None:
        b.head(title, family)
        if markdown:
            b.markdown(content or message)
        else:
            b.output(content or message, tone=tone)
        b.fields(extras, skip={"hidden"})

    return handler


OBSERVATIONS = {
    "run": _run_output,
    "run_ipython": _ipython_output,
    "read": _read_output,
    "write": _write_output,
    "edit": _edit_output,
    "browse": _browse_output,
    "error": _error,
    "agent_state_changed": _agent_state_changed,
    "delegate": _delegate_output,
    "recall": _recall_output,
    "mcp": _mcp_output,
    "task_tracking": _task_output,
    "download": _download,
    "success": _text_observation("Success"),
    "null": _text_observation("No observation", "meta"),
    "think": _text_observation("Thought logged", "think", markdown=True),
    "user_rejected": _text_observation("Rejected by the user", "error", tone="bad"),
    "condense": _text_observation("Condensed", "meta", markdown=True),
    "loop_detection": _text_observation("Loop detected", "error", tone="bad"),
    "chat": _text_observation("Chat", "agent", markdown=True),
    "message": _text_observation("Message", "agent", markdown=True),
}
