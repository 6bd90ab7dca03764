"""Cards for chat messages (OpenAI style, SWE-agent history): system, user, agent, tool."""

from __future__ import annotations

from apps.trajectories.importers.base import as_text
from apps.trajectories.rendering.cards import CardBuilder
from apps.trajectories.rendering.presenters.base import (
    action_head,
    chat_content,
    observation_head,
)
from apps.trajectories.rendering.presenters.tool_calls import tool_call
from apps.trajectories.rendering.values import as_str, lines_of


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
