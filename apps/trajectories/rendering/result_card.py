"""Sections of the trajectory page above the steps: the Result card (what the run came to,
apps/trajectories/outcome.py, with the final patch as a highlighted diff) and the tools the
conversation offered the model. Safe HTML, redacted for visitors like the cards."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from apps.trajectories.outcome import (
    OUTCOME_LABELS,
    RESOLVED,
    SOURCE_LABELS,
    RunOutcome,
    Verdict,
    cost_label,
    count_label,
    run_outcome,
)
from apps.trajectories.redaction import redact_data
from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.cards import CardBuilder, ViewContext
from apps.trajectories.rendering.values import as_str, parse_json_string, pretty_json

# Model stats worth a line of their own (SWE-agent's info.model_stats).
STAT_LABELS = {
    "api_calls": "API calls",
    "tokens_sent": "Tokens sent",
    "tokens_received": "Tokens received",
    "instance_cost": "Instance cost",
}


def result_for(metadata: object, ctx: ViewContext) -> RunOutcome:
    """The run's result as this reader may see it (placeholders for visitors)."""
    marks = ctx.marks
    if not marks.show_original and marks.active:
        metadata = redact_data(metadata, marks.plain)
    return run_outcome(metadata)


def stored_verdict_of(trajectory: Any) -> Verdict:
    """The outcome a Trajectory's columns hold."""
    return Verdict(trajectory.outcome, trajectory.outcome_score, trajectory.outcome_source)


def outcome_facts(verdict: Verdict) -> tuple[str, str]:
    """The stored outcome's badge and its line ("from the OpenHands evaluation report, score
    0.50"), both "" when unknown."""
    if not verdict.known:
        return "", ""
    tone = "tone-ok" if verdict.outcome == RESOLVED else "tone-bad"
    badge = f'<span class="badge {tone}">{t.escape(OUTCOME_LABELS[verdict.outcome])}</span>'
    source = SOURCE_LABELS.get(verdict.source, "")
    said = "said by the owner" if verdict.source == "owner" else f"from the {source}"
    if verdict.score is not None:
        said += f", score {verdict.score:.2f}"
    return badge, said


def result_html(
    result: RunOutcome,
    ctx: ViewContext,
    *,
    verdict: Verdict,
    controls: str = "",
) -> SafeString:
    """<section> of the Result card, or "" when the run has no result to show. `verdict` is the
    stored outcome (Trajectory.outcome*): the card's badge, where it came from; `controls`
    the owner's form to set it (safe markup), shown even where the run recorded nothing."""
    if not result and not verdict.known and not controls:
        return mark_safe("")
    # The patch is rendered whole (up to the "full text" limits): it is the point of the card.
    full = dataclasses.replace(ctx, started_at=None, full_block=0)
    placeholder = SimpleNamespace(
        data={},
        text="",
        position=0,
        kind="system",
        source="environment",
        type="result",
        timestamp=None,
        original_id="",
        cause="",
    )
    b = CardBuilder(full, placeholder)
    b.diff(result.patch, label="Final patch")
    facts: list[tuple[str, str]] = []
    if result.instance_id:
        facts.append(("Instance", result.instance_id))
    if result.exit_status:
        facts.append(("Exit status", result.exit_status))
    if result.score:
        facts.append(("Score", result.score))
    if result.cost is not None:
        facts.append(("Cost", cost_label(result.cost)))
    if result.tokens is not None:
        facts.append(("Tokens", count_label(result.tokens)))
    for key, label in STAT_LABELS.items():
        value = result.model_stats.get(key)
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and key != "instance_cost"
        ):
            # SWE-agent writes 0 for each stat it did not count (0 tokens over 11 API calls).
            facts.append((label, count_label(value)))
    badge, said = outcome_facts(verdict)
    if said:
        facts.insert(0, ("Outcome", f"{OUTCOME_LABELS[verdict.outcome]}, {said}"))
    rows = "".join(
        f"<div><dt>{t.escape(label)}</dt><dd>{t.inline(value, ctx.marks)}</dd></div>"
        for label, value in facts
    )
    error = (
        f'<p class="result-error">{t.inline(result.error[:500], ctx.marks)}</p>'
        if result.error
        else ""
    )
    patch = '<h3 class="blk-label">Final patch</h3>' + "".join(
        block.html for block in b.card.blocks
    )
    if not result.patch:
        # Only where the format records a result at all: an outcome alone has no patch to miss.
        patch = '<p class="muted">The run left no patch.</p>' if result else ""
    return mark_safe(
        '<section class="card result-card" id="result" aria-labelledby="result-h">'
        f'<h2 id="result-h">Result {badge}</h2>'
        f'<dl class="facts">{rows}</dl>{error}{controls}'
        f'<div class="result-patch">{patch}</div></section>'
    )


def _tool_definitions(metadata: object) -> list[dict]:
    tools = metadata.get("tools") if isinstance(metadata, dict) else None
    tools = parse_json_string(tools) if isinstance(tools, str) else tools
    found = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            tool = tool["function"]  # OpenAI's {"type": "function", "function": {...}}
        if isinstance(tool, dict) and (tool.get("name") or tool.get("description")):
            found.append(tool)
    return found


def tools_html(metadata: object, ctx: ViewContext) -> SafeString:
    """The tools the conversation offered the model (ShareGPT and OpenAI files carry their
    schemas next to the messages): a folded list with each tool's description and parameters."""
    marks = ctx.marks
    if not marks.show_original and marks.active:
        metadata = redact_data(metadata, marks.plain)
    tools = _tool_definitions(metadata)
    if not tools:
        return mark_safe("")
    items = []
    for tool in tools[:200]:
        name = t.inline(as_str(tool.get("name")), marks)
        description = t.inline(as_str(tool.get("description"))[:1000], marks)
        parameters = tool.get("parameters")
        schema = (
            f'<pre class="json">{t.finish(t.escape(marks.mark(pretty_json(parameters, hide_secrets=not marks.show_original))))}</pre>'
            if parameters not in (None, {}, [])
            else ""
        )
        items.append(f"<li><code>{name}</code> <span>{description}</span>{schema}</li>")
    count = len(tools)
    return mark_safe(
        f'<details class="card tools-card" id="tools-offered"><summary>Tools offered to the model '
        f'({count})</summary><ul class="tool-list">{"".join(items)}</ul></details>'
    )
