"""Cards for the other formats: OpenHands V1 (agent SDK), chat messages (OpenAI style, SWE-agent
history), ShareGPT turns, SWE-agent steps, and anything else (its fields, never nothing)."""

from __future__ import annotations

import shlex
from typing import Any

from apps.trajectories.importers.base import as_text
from apps.trajectories.rendering import openhands
from apps.trajectories.rendering.cards import (
    CardBuilder,
    as_str,
    humanize,
    lines_of,
    parse_json_string,
)

# ---- OpenHands V1 --------------------------------------------------------------------------------

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
        openhands.edit_args(b, action, path=path)
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
        openhands.exit_badge(b, code)
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


# ---- chat messages (OpenAI style, SWE-agent history, ShareGPT) -----------------------------------


def image_placeholders(text: str, files: Any) -> str:
    """`<image>` tokens named after the file each stood for (LLaMA-Factory's `images` list):
    the bytes are not in the upload, so the page says which picture was there."""
    if not isinstance(files, list) or "<image>" not in text:
        return text
    names = iter(files)

    def name() -> str:
        file = next(names, "")
        return f"[image: {as_str(file)} (not in the upload)]" if file else "[image]"

    parts = text.split("<image>")
    return parts[0] + "".join(name() + part for part in parts[1:])


def chat_content(b: CardBuilder, content: Any) -> None:
    """Message content: a string, or parts (text as Markdown, images from our storage)."""
    files = b.data.get("image_files")
    if isinstance(content, str) and files:
        content = image_placeholders(content, files)
        for file in files:
            b.badge(f"image: {as_str(file).rsplit('/', 1)[-1]}")
    if isinstance(content, list):
        texts: list[str] = []
        images: list[Any] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = as_str(part.get("type"))
                if isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif kind in ("image_url", "image", "input_image"):
                    images.append(
                        part.get("image_url")
                        or part.get("url")
                        or part.get("source")
                        or part.get("data")
                        or part.get("image_urls")
                    )
        b.markdown("\n\n".join(texts))
        b.images(*images, label="Images", alt="Attached image")
    else:
        b.markdown(as_str(content))


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
            openhands.edit_args(b, args, path=path)
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


# Canonical types the importers give tool steps of chat-shaped formats (SWE-agent, OpenAI).
ACTION_TITLES = {
    "run": ("Command", "command"),
    "run_ipython": ("Python", "command"),
    "read": ("Read file", "file"),
    "edit": ("Edit file", "edit"),
    "write": ("Write file", "edit"),
    "browse": ("Browse", "browser"),
    "think": ("Thought", "think"),
    "finish": ("Finish", "finish"),
    "submit": ("Submit", "finish"),
}
OBSERVATION_TITLES = {
    "run": "Output",
    "run_ipython": "Python output",
    "read": "File content",
    "edit": "Edit result",
    "write": "Write result",
    "browse": "Browser",
    "finish": "Result",
}


def action_head(b: CardBuilder, default: str, family: str) -> None:
    title, fam = ACTION_TITLES.get(b.card.type, (default, family))
    b.head(title, fam)


def observation_head(b: CardBuilder, default: str) -> None:
    b.head(OBSERVATION_TITLES.get(b.card.type, default), "output")


def present_chat(b: CardBuilder) -> None:
    data = b.data
    role = as_str(data.get("role"))
    message_type = as_str(data.get("message_type"))
    if role == "system" or message_type == "system_prompt":
        text = as_text(data.get("content"), image="")
        b.head("System prompt", "system")
        b.output(text, collapsed=True, summary=f"System prompt ({lines_of(text)})", tail=0)
        return
    if data.get("is_demo") or message_type == "demonstration":
        b.head("Demonstration", "meta")
        b.output(
            as_text(data.get("content"), image=""), collapsed=True, summary="Demonstration", tail=0
        )
        return
    observed = role in ("tool", "function") or (message_type == "observation" and role != "user")
    if observed or (role == "user" and b.card.kind == "observation"):
        # SWE-agent sends the environment's observations as user messages.
        observation_head(b, "Tool result")
        name = as_str(data.get("name"))
        if name:
            b.subtitle(name, code=True)
        output = as_text(data.get("content"), image="")
        b.output(output)
        if not output.strip():
            b.note("(no output)")
        return
    if role == "user":
        b.head("User", "user")
        chat_content(b, data.get("content"))
        return
    if b.card.kind == "action":
        action_head(b, "Agent", "agent")
    else:
        b.head("Agent", "agent")
    reasoning = as_str(data.get("reasoning_content") or data.get("reasoning"))
    if reasoning.strip():
        b.markdown(reasoning, collapsed=True, summary="Reasoning")
    calls = data.get("tool_calls")
    if message_type == "action" and isinstance(data.get("action"), str) and not calls:
        b.markdown(as_str(data.get("thought")) or as_text(data.get("content"), image=""))
        b.code(as_str(data.get("action")), language="bash", label="Action")
        return
    chat_content(b, data.get("content"))
    functions = [
        call.get("function") if isinstance(call.get("function"), dict) else call
        for call in (calls if isinstance(calls, list) else [])[:50]
        if isinstance(call, dict)
    ]
    if isinstance(data.get("function_call"), dict):
        functions.append(data["function_call"])
    # The OpenAI importer stores each call of a message as its own action event ("tool_call").
    if isinstance(data.get("tool_call"), dict):
        call = data["tool_call"]
        functions.append(call.get("function") if isinstance(call.get("function"), dict) else call)
    for function in functions:
        tool_call(
            b,
            as_str(function.get("name")) or "tool",
            function.get("arguments"),
            only=len(functions) == 1,
        )


SHAREGPT_USER = {"human", "user"}
SHAREGPT_AGENT = {"gpt", "assistant", "bot", "chatgpt", "model"}


def present_sharegpt(b: CardBuilder) -> None:
    data = b.data
    if "from" not in data and isinstance(data.get("system"), str):
        # The conversation's top-level `system` (the importer's first event).
        speaker, value = "system", data["system"]
    else:
        speaker = as_str(data.get("from")).lower()
        value = data.get("value")
    if speaker in SHAREGPT_USER:
        b.head("User", "user")
        chat_content(b, value)
    elif speaker in SHAREGPT_AGENT:
        b.head("Agent", "agent")
        chat_content(b, value)
    elif speaker == "system":
        text = as_str(value)
        b.head("System prompt", "system")
        b.output(text, collapsed=True, summary=f"System prompt ({lines_of(text)})", tail=0)
    elif speaker in ("function_call", "tool_call"):
        call = parse_json_string(value)
        name = as_str(call.get("name")) if isinstance(call, dict) else ""
        tool_call(b, name or "tool", call.get("arguments") if isinstance(call, dict) else value)
    elif speaker in ("observation", "tool", "function"):
        b.head("Tool result", "output")
        parsed = parse_json_string(value)
        if isinstance(parsed, (dict, list)):
            b.json(parsed)
        else:
            b.output(as_str(value))
    else:
        b.head(humanize(speaker or "message"), "meta")
        b.markdown(as_str(value))


# ---- SWE-agent steps -----------------------------------------------------------------------------


SWE_EDITOR_FLAGS = {"--old_str", "--new_str", "--file_text", "--insert_line", "--view_range"}


def swe_editor_call(action: str, open_file: str = "") -> dict[str, Any] | None:
    """`str_replace_editor str_replace /p --old_str 'a' --new_str 'b'` as the tool's arguments
    ({"command", "path", "old_str", ...}), or None when the action is another command. The
    windowed tools' `edit 'search' 'replace'` and `insert 'text'` edit the open file."""
    if not action.startswith(("str_replace_editor ", "edit ", "insert ")):
        return None
    try:
        words = shlex.split(action)
    except ValueError:
        return None
    if words[0] in ("edit", "insert"):
        if not open_file:
            return None
        if words[0] == "edit" and len(words) == 3:
            return {
                "command": "str_replace",
                "path": open_file,
                "old_str": words[1],
                "new_str": words[2],
            }
        if words[0] == "insert" and len(words) == 2:
            return {"command": "insert", "path": open_file, "new_str": words[1]}
        return None
    if len(words) < 3 or words[1] not in EDIT_COMMANDS:
        return None
    args: dict[str, Any] = {"command": words[1], "path": words[2]}
    rest = words[3:]
    while rest:
        flag = rest.pop(0)
        if flag not in SWE_EDITOR_FLAGS or not rest:
            return None
        value = rest.pop(0)
        if flag == "--view_range":
            numbers = [value, *rest[:1]]
            rest = rest[1:]
            args["view_range"] = numbers
        else:
            args[flag[2:]] = value
    return args


def present_swe_step(b: CardBuilder) -> None:
    data = b.data
    state = data.get("state")
    state = parse_json_string(state.strip()) if isinstance(state, str) else state
    if b.card.kind == "observation" or ("observation" in data and "action" not in data):
        observation_head(b, "Observation")
        if isinstance(state, dict) and state.get("working_dir"):
            b.badge(f"in {as_str(state.get('working_dir'))}")
        if isinstance(state, dict) and state.get("open_file") not in (None, "", "n/a"):
            b.badge(f"open: {as_str(state.get('open_file'))}")
        output = as_str(data.get("observation"))
        b.output(output)
        if not output.strip():
            b.note("(no output)")
        return
    action = as_str(data.get("action")).rstrip("\n")
    open_file = as_str(state.get("open_file")) if isinstance(state, dict) else ""
    edit = swe_editor_call(action, "" if open_file in ("", "n/a") else open_file)
    if edit is not None:
        # SWE-agent's editor tool, written as a command line: shown as OpenHands' edit card.
        b.markdown(as_str(data.get("thought") or data.get("response")))
        tool_call(b, "str_replace_editor", edit)
    else:
        action_head(b, "Action", "command")
        b.markdown(as_str(data.get("thought") or data.get("response")))
        b.code(action, language="bash")
    elapsed = data.get("execution_time")
    if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool):
        b.badge(f"{elapsed:.2f}s")


# ---- anything else -------------------------------------------------------------------------------


def generic(b: CardBuilder) -> None:
    """An event of a type this page does not know: its text and every field, not nothing."""
    if b.card.kind == "message" and b.card.source in ("user", "agent") and b.text.strip():
        user = b.card.source == "user"
        b.head("User" if user else "Agent", "user" if user else "agent")
        b.markdown(b.text)
        rest = {
            k: v
            for k, v in b.data.items()
            if not (isinstance(v, str) and v.strip() == b.text.strip())
        }
        b.fields(rest, collapsed=True, summary="More fields")
        return
    b.head(
        humanize(b.card.type),
        {"message": "agent", "observation": "output", "system": "system"}.get(b.card.kind, "tool"),
    )
    b.output(b.text, tail=0)
    b.fields(b.data)
