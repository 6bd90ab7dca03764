"""The prompts, as versioned template files in prompts/ (`<name>.v<N>.txt`, string.Template).

A new wording is a new file with the next version number, never an edit: every example records
the version it was written with. The answer is taken from the last fenced block the prompt asks
for; an answer without one is no answer (the example is not made up from free text).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from string import Template

from apps.learn.windows import OBSERVATION, Step

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
VERSION = 1
TASK = "task"  # "a reasonable task instruction that is completed by the trajectory"
REPLICATE = "replicate"  # a summary, stored as "Replicate the following: <summary>"
PROMPT_TYPES = (TASK, REPLICATE)
REPLICATE_PREFIX = "Replicate the following: "
FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)\n?```", re.DOTALL)


@cache
def template(name: str, version: int = VERSION) -> Template:
    return Template((PROMPT_DIR / f"{name}.v{version}.txt").read_text(encoding="utf-8"))


CORRECTION_LABELS = {
    "message": "what the agent should have done instead",
    "action": "the action as it should have been",
}


def render_steps(
    steps: list[Step], corrections: dict[int, list[tuple[str, str]]] | None = None
) -> str:
    """A window as the prompts show it (and the retrieval prompt block): numbered, by role.
    `corrections` (retrieval only): readers' (mode, text) corrections by step index, each shown
    right after the step it corrects."""
    lines = []
    for number, step in enumerate(steps):
        label = "Observation" if step.role == OBSERVATION else "Action"
        lines.append(f"[{label} {number // 2}]\n{step.text or '(none)'}")
        for mode, text in (corrections or {}).get(number, []):
            said = CORRECTION_LABELS.get(mode, CORRECTION_LABELS["message"])
            lines.append(f"[A reader's correction of {label} {number // 2}: {said}]\n{text}")
    return "\n\n".join(lines)


def render(name: str, **values: str) -> str:
    return template(name).substitute(**values)


def fenced(answer: str) -> str | None:
    """The content of the last fenced block of an answer, stripped; None when there is none."""
    blocks = FENCE.findall(answer or "")
    if not blocks:
        return None
    text = blocks[-1].strip()
    return text or None


def instruction_from(prompt_type: str, answer: str) -> str | None:
    text = fenced(answer)
    if text is None:
        return None
    return REPLICATE_PREFIX + text if prompt_type == REPLICATE else text
