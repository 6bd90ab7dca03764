"""A dry run: what a synthesis run would spend, computed without spending anything.

The same choice of trajectories and windows as a run (selectors.trajectories_to_synthesize,
windows.choose_windows with the same settings and seed), less the windows a previous run has
finished; each window's prompts rendered as the run renders them; each instruction it would
write judged by every judge model. Nothing is written and no LLM is called. Tokens are counted
as characters / 4 (the usual rate for English and code under the GPT and Llama tokenizers):
an estimate of what the endpoint will count. The answers' tokens are not known before; each
instruction is taken as INSTRUCTION_CHARS characters in the judge's prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from apps.learn import prompts
from apps.learn.models import Example, ExampleState, Window, WindowState
from apps.learn.selectors import public_events, trajectories_to_synthesize
from apps.learn.windows import (
    Step,
    actions_in,
    build_steps,
    choose_windows,
    drop_repeats,
    window_steps,
)

CHARS_PER_TOKEN = 4
INSTRUCTION_CHARS = 300
# What stands in for an instruction in the judge's prompt while estimating.
_INSTRUCTION = "x" * INSTRUCTION_CHARS


@dataclass
class Estimate:
    trajectories: int = 0
    windows: int = 0  # windows a run would write (not finished by an earlier run)
    synthesis_calls: int = 0
    judge_calls: int = 0
    synthesis_tokens: int = 0  # prompt tokens
    judge_tokens: int = 0
    waiting_examples: int = 0  # written by earlier runs, not judged yet: judged by this one
    judges: int = 0

    @property
    def calls(self) -> int:
        return self.synthesis_calls + self.judge_calls

    @property
    def prompt_tokens(self) -> int:
        return self.synthesis_tokens + self.judge_tokens

    def describe(self) -> str:
        price = settings.TRAJHUB_LLM_PRICE_INPUT
        cost = (
            f"; at the input price about {self.prompt_tokens * price / 1_000_000:.4f} at most"
            if price
            else ""
        )
        judges = f"{self.judges} judge model{'s' if self.judges != 1 else ''}"
        return (
            f"Dry run, nothing spent: a run would make at most {self.calls} LLM calls "
            f"({self.synthesis_calls} to write instructions for {self.windows} windows of "
            f"{self.trajectories} trajectories, then up to {self.judge_calls} to {judges}, "
            f"{self.waiting_examples * self.judges} of them for {self.waiting_examples} examples "
            f"waiting from earlier runs; fewer when the filters before the judges drop an "
            f"example) and send at most {self.prompt_tokens} prompt tokens "
            f"({self.synthesis_tokens} + {self.judge_tokens}, counted as characters / "
            f"{CHARS_PER_TOKEN}){cost}, plus the tokens of the answers."
        )


def _tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def run_estimate(
    *, limit: int | None = None, trajectory_id: int | None = None, judges: int | None = None
) -> Estimate:
    """What `synthesize` with these arguments would spend now (module docstring)."""
    if judges is None:
        judges = len(settings.TRAJHUB_LLM_JUDGE_MODELS or []) or (
            1 if settings.TRAJHUB_LLM_MODEL else 0
        )
    estimate = Estimate(judges=judges)
    chosen_trajectories = trajectories_to_synthesize(limit=limit, trajectory_id=trajectory_id)
    for trajectory in chosen_trajectories.iterator(chunk_size=100):
        estimate.trajectories += 1
        finished = set(
            Window.objects.filter(
                trajectory=trajectory, state__in=[WindowState.DONE, WindowState.FAILED]
            ).values_list("start_step", "end_step")
        )
        steps, _repeats = drop_repeats(
            build_steps(public_events(trajectory), limit=settings.TRAJHUB_SYNTH_OBSERVATION_CHARS)
        )
        chosen = choose_windows(
            actions_in(steps),
            cap=settings.TRAJHUB_SYNTH_MAX_WINDOWS,
            short_max=settings.TRAJHUB_SYNTH_SHORT_STEPS,
            short_share=settings.TRAJHUB_SYNTH_SHORT_SHARE,
            seed=trajectory.share_id,
        )
        for i, j in chosen:
            if (i, j) in finished:
                continue
            estimate.windows += 1
            shown = prompts.render_steps(window_steps(steps, i, j))
            for prompt_type in prompts.PROMPT_TYPES:
                estimate.synthesis_calls += 1
                estimate.synthesis_tokens += _tokens(prompts.render(prompt_type, trajectory=shown))
                judge = prompts.render("judge", instruction=_INSTRUCTION, trajectory=shown)
                estimate.judge_calls += judges
                estimate.judge_tokens += judges * _tokens(judge)
    waiting = Example.objects.filter(state=ExampleState.CANDIDATE).select_related("window")
    for example in waiting.iterator(chunk_size=500):
        estimate.waiting_examples += 1
        estimate.judge_calls += judges
        shown = prompts.render_steps([_step(step) for step in example.window.steps])
        judge = prompts.render("judge", instruction=example.instruction, trajectory=shown)
        estimate.judge_tokens += judges * _tokens(judge)
    return estimate


def _step(step: dict) -> Step:
    """A stored window step as the filter renders it (services._steps_of)."""
    return Step(step["role"], step.get("text", ""), step.get("first", 0), step.get("last", 0))
