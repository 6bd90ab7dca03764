"""Cards for OpenHands V1 (agent SDK) events: actions, observations, messages, system prompts."""

from __future__ import annotations

from apps.trajectories.importers.base import as_text
from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.base import (
    chat_content,
    generic,
)
from apps.trajectories.rendering.presenters.openhands_v0 import edit_args
from apps.trajectories.rendering.presenters.openhands_v0_observations import exit_badge
from apps.trajectories.rendering.values import as_str, humanize, lines_of

V1_EVENT_NOISE = {
    "kind",
    "id",
    "timestamp",
    "source",
    "thought",
    "reasoning_content",
    "thinking_blocks",
    "responses_reasoning_item",
    "action",
    "observation",
    "tool_name",
    "tool_call_id",
    "tool_call",
    "llm_response_id",
    "security_risk",
    "action_id",
    "llm_message",
    "activated_skills",
    "extended_content",
    "system_prompt",
    "tools",
}


def _v1_reasoning(b: CardBuilder, data: dict) -> None:
    b.markdown(as_text(data.get("thought"), image=""))
    reasoning = as_str(data.get("reasoning_content"))
    if reasoning.strip():
        b.markdown(reasoning, collapsed=True, summary="Reasoning")
    blocks = data.get("thinking_blocks")
    if isinstance(blocks, list):
        text = "\n\n".join(
            as_str(block.get("thinking")) for block in blocks if isinstance(block, dict)
        )
        if text.strip():
            b.markdown(text, collapsed=True, summary="Thinking")


def present_v1(b: CardBuilder) -> None:
    data = b.data
    kind = as_str(data.get("kind"))
    if kind == "ActionEvent":
        _v1_action(b, data)
    elif kind == "ObservationEvent":
        _v1_observation(b, data)
    elif kind == "MessageEvent":
        _v1_message(b, data)
    elif kind == "SystemPromptEvent":
        prompt = as_text(data.get("system_prompt"), image="")
        b.head("System prompt", "system")
        b.output(prompt, collapsed=True, summary=f"System prompt ({lines_of(prompt)})", tail=0)
        tools = data.get("tools")
        if isinstance(tools, list) and tools:
            names = [
                as_str(tool.get("name") or (tool.get("function") or {}).get("name"))
                for tool in tools
                if isinstance(tool, dict)
            ]
            b.note("Tools: " + ", ".join(name for name in names if name))
    elif kind in ("AgentErrorEvent", "ConversationErrorEvent"):
        b.head("Error", "error", as_str(data.get("tool_name") or data.get("code")), code=True)
        b.output(as_str(data.get("error") or data.get("detail")), tone="bad", tail=0)
    elif kind == "UserRejectObservation":
        b.head("Rejected by the user", "error")
        b.markdown(as_str(data.get("rejection_reason")))
    elif kind in (
        "CondensationEvent",
        "CondensationSummaryEvent",
        "CondensationRequestEvent",
        "Condensation",
    ):
        b.head("Condensation", "meta")
        b.markdown(as_str(data.get("summary")), label="Summary")
        forgotten = data.get("forgotten_event_ids")
        if isinstance(forgotten, list) and forgotten:
            b.note(f"Forgets {len(forgotten)} events")
    elif kind == "PauseEvent":
        b.head("Pause", "state")
    elif kind == "ConversationStateUpdateEvent":
        b.head("State update", "state", as_str(data.get("key")), code=True)
        value = data.get("value")
        if isinstance(value, (str, int, float, bool)):
            b.badge(as_str(value))
        else:
            b.json(value, collapsed=True, summary="New state")
    else:
        generic(b)
        return
    b.fields(
        {
            k: v
            for k, v in data.items()
            if k not in V1_EVENT_NOISE
            and k
            not in (
                "error",
                "detail",
                "code",
                "rejection_reason",
                "summary",
                "forgotten_event_ids",
                "key",
                "value",
                "summary_offset",
                "llm_response_id",
            )
        },
        collapsed=True,
        summary="More fields",
    )


def _v1_action(b: CardBuilder, data: dict) -> None:
    action = data.get("action") if isinstance(data.get("action"), dict) else {}
    kind = as_str(action.get("kind"))
    tool = as_str(data.get("tool_name"))
    if kind in ("ExecuteBashAction", "TerminalAction", "BashAction"):
        b.head("Command", "command")
        _v1_reasoning(b, data)
        b.code(as_str(action.get("command")), language="bash")
        if action.get("is_input") is True:
            b.badge("input to the running process")
        if isinstance(action.get("timeout"), (int, float)) and not isinstance(
            action.get("timeout"), bool
        ):
            b.badge(f"timeout {action['timeout']:g}s")
    elif kind in ("FileEditorAction", "StrReplaceEditorAction"):
        path = as_str(action.get("path"))
        command = as_str(action.get("command"))
        b.head(
            "View file" if command == "view" else "Edit file",
            "file" if command == "view" else "edit",
            path,
            code=True,
        )
        if command and command != "view":
            b.badge(command.replace("_", " "))
        _v1_reasoning(b, data)
        edit_args(b, action, path=path)
    elif kind == "FinishAction":
        b.head("Finish", "finish")
        _v1_reasoning(b, data)
        b.markdown(as_str(action.get("message")))
    elif kind == "ThinkAction":
        b.head("Thought", "think")
        _v1_reasoning(b, data)
        b.markdown(as_str(action.get("thought")))
    elif kind == "TaskTrackerAction":
        b.head("Task list", "tool", as_str(action.get("command")))
        _v1_reasoning(b, data)
        b.tasks(action.get("task_list"))
    elif kind.startswith("Browser"):
        b.head(humanize(kind.removesuffix("Action")), "browser")
        b.url(action.get("url"))
        _v1_reasoning(b, data)
        b.fields(action, skip={"kind", "url"})
    else:
        b.head(
            humanize(kind.removesuffix("Action")) if kind else "Tool call", "tool", tool, code=True
        )
        _v1_reasoning(b, data)
        if action:
            b.fields(action, skip={"kind"})
        else:
            call = data.get("tool_call") if isinstance(data.get("tool_call"), dict) else {}
            b.json(call.get("arguments"), label="Arguments")
    if tool and not b.card.subtitle:
        b.subtitle(tool, code=True)
    risk = as_str(data.get("security_risk"))
    if risk in ("MEDIUM", "HIGH"):
        b.badge(f"{risk.lower()} risk", "bad" if risk == "HIGH" else "warn")


def _v1_observation(b: CardBuilder, data: dict) -> None:
    obs = data.get("observation") if isinstance(data.get("observation"), dict) else {}
    kind = as_str(obs.get("kind"))
    output = as_text(obs.get("output"), image="") or as_text(obs.get("content"), image="")
    if kind in ("ExecuteBashObservation", "TerminalObservation", "BashObservation"):
        b.head("Output", "output")
        metadata = obs.get("metadata") if isinstance(obs.get("metadata"), dict) else {}
        code = (
            obs.get("exit_code") if obs.get("exit_code") is not None else metadata.get("exit_code")
        )
        exit_badge(b, code)
        if metadata.get("working_dir"):
            b.badge(f"in {as_str(metadata.get('working_dir'))}")
        if obs.get("timeout") is True:
            b.badge("timed out", "warn")
        if obs.get("error") is True:
            b.badge("error", "bad")
        b.output(output, tone="bad" if isinstance(code, int) and code not in (0, -1) else "")
    elif kind in ("FileEditorObservation", "StrReplaceEditorObservation"):
        path = as_str(obs.get("path"))
        b.head("Edit result", "edit", path, code=True)
        old, new = obs.get("old_content"), obs.get("new_content")
        if isinstance(old, str) and isinstance(new, str) and old != new:
            b.file_diff(old, new, path=path)
        b.output(output, collapsed=bool(b.card.blocks), summary="Tool output", tail=0)
    elif kind == "FinishObservation":
        b.head("Finish result", "finish")
        b.markdown(as_str(obs.get("message")) or output)
    elif kind == "ThinkObservation":
        b.head("Thought logged", "think")
        b.markdown(output or as_str(obs.get("message")))
    elif kind.startswith("Browser"):
        b.head("Browser", "browser")
        b.images(
            obs.get("screenshot_data"), obs.get("screenshot"), label="Screenshot", alt="Screenshot"
        )
        b.output(output, collapsed=bool(b.card.blocks), summary="Page text", tail=0)
    else:
        b.head(
            humanize(kind.removesuffix("Observation")) if kind else "Observation",
            "output",
            as_str(data.get("tool_name")),
            code=True,
        )
        b.output(
            output or as_str(obs.get("message")), tone="bad" if obs.get("error") is True else ""
        )
        b.fields(obs, skip={"kind", "output", "content", "message"})
    if obs.get("error") is True and kind not in ("ExecuteBashObservation", "TerminalObservation"):
        b.badge("error", "bad")


def _v1_message(b: CardBuilder, data: dict) -> None:
    message = data.get("llm_message") if isinstance(data.get("llm_message"), dict) else {}
    role = as_str(message.get("role")) or b.card.source
    user = role == "user" or b.card.source == "user"
    b.head(
        "User" if user else ("System" if role == "system" else "Agent"), "user" if user else "agent"
    )
    chat_content(b, message.get("content"))
    reasoning = as_str(message.get("reasoning_content"))
    if reasoning.strip():
        b.markdown(reasoning, collapsed=True, summary="Reasoning")
    extended = data.get("extended_content")
    if isinstance(extended, list) and extended:
        b.markdown(as_text(extended, image=""), collapsed=True, summary="Extended content")
    skills = data.get("activated_skills")
    if isinstance(skills, list) and skills:
        b.note("Skills: " + ", ".join(as_str(s) for s in skills))
