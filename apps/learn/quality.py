"""Quality filters (the paper's section 2.3): a registry of checks over (instruction, window),
plus one the paper could not have: what human readers said about the source's steps.

Each filter looks at the examples still standing and answers, for each, kept or dropped and why;
an example dropped by one is not shown to the next. They run cheapest first, so the LLM committee
only judges what survived the rest. Consecutive identical (action, observation) steps are removed
before any of them, when windows are built (windows.drop_repeats, counted as "repeats").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from apps.learn import prompts
from apps.learn.guard import UnreadableGuard
from apps.learn.llm import Answer, LLMConfig, LLMError
from apps.learn.windows import OBSERVATION, Step


@dataclass
class Candidate:
    id: int
    instruction: str
    steps: list[Step]
    num_actions: int
    # Where the window is in its source (event positions, inclusive): what readers' feedback on
    # the source's steps is matched against.
    trajectory_id: int = 0
    start_position: int = 0
    end_position: int = 0


@dataclass
class Verdict:
    filter: str
    kept: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"filter": self.filter, "kept": self.kept, "reason": self.reason}
        if self.details:
            out["details"] = self.details
        return out


class Filter(Protocol):
    name: str

    def check(self, candidates: list[Candidate]) -> list[Verdict]: ...


class ScanFilter:
    """What the LLM wrote is scanned like shared text: an instruction with a finding is dropped
    (it must never reach an export or /retrieve)."""

    name = "scan"

    def __init__(self, scan: Callable[[str], list]):
        self.scan = scan

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        verdicts = []
        for candidate in candidates:
            found = self.scan(candidate.instruction)
            if found:
                kinds = sorted({getattr(d, "kind", "finding") for d in found})
                verdicts.append(
                    Verdict(self.name, False, f"the instruction contains {', '.join(kinds)}")
                )
            else:
                verdicts.append(Verdict(self.name, True))
        return verdicts


class LengthFilter:
    name = "length"

    def __init__(self, *, min_actions: int, max_actions: int, min_chars: int, max_chars: int):
        self.min_actions, self.max_actions = min_actions, max_actions
        self.min_chars, self.max_chars = min_chars, max_chars

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        verdicts = []
        for c in candidates:
            size = len(c.instruction)
            if c.num_actions < self.min_actions:
                verdicts.append(
                    Verdict(
                        self.name,
                        False,
                        f"too short: {c.num_actions} actions (minimum {self.min_actions})",
                    )
                )
            elif c.num_actions > self.max_actions:
                verdicts.append(
                    Verdict(
                        self.name,
                        False,
                        f"too long: {c.num_actions} actions (maximum {self.max_actions})",
                    )
                )
            elif size < self.min_chars:
                verdicts.append(
                    Verdict(
                        self.name,
                        False,
                        f"instruction too short: {size} characters (minimum {self.min_chars})",
                    )
                )
            elif size > self.max_chars:
                verdicts.append(
                    Verdict(
                        self.name,
                        False,
                        f"instruction too long: {size} characters (maximum {self.max_chars})",
                    )
                )
            else:
                verdicts.append(Verdict(self.name, True))
        return verdicts


ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b(?:error|exception|failed|fatal)\b|exit code [1-9]"
    r"|command not found|no such file or directory|permission denied",
    re.IGNORECASE,
)


def looks_like_error(text: str) -> bool:
    return bool(ERROR.search(text or ""))


class ErrorsOnlyFilter:
    """Windows where everything the agent's actions got back is an error teach failure."""

    name = "errors_only"

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        verdicts = []
        for c in candidates:
            answers = [s for s in c.steps[1:] if s.role == OBSERVATION and s.text]
            if answers and all(looks_like_error(s.text) for s in answers):
                verdicts.append(
                    Verdict(self.name, False, f"all {len(answers)} observations are errors")
                )
            else:
                verdicts.append(Verdict(self.name, True))
        return verdicts


class FlaggedByReadersFilter:
    """Windows that readers' majority holds wrong teach the mistake: dropped when one of the
    window's agent steps is rated wrong (more bad than good ratings), or when the window holds or
    comes after the step that most readers who marked one marked as where the run first went
    wrong (everything from there on is the wrong track; a window that ends before it is kept).
    The verdicts are apps.feedback.consensus's, read once per batch through `verdicts`."""

    name = "flagged_by_readers"

    def __init__(self, verdicts: Callable[[list[int]], dict[int, Any]]):
        self.verdicts = verdicts

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        found = self.verdicts(sorted({c.trajectory_id for c in candidates}))
        out = []
        for c in candidates:
            verdict = found.get(c.trajectory_id)
            reason = self._reason(c, verdict) if verdict is not None else ""
            out.append(Verdict(self.name, not reason, reason))
        return out

    @staticmethod
    def _reason(c: Candidate, verdict: Any) -> str:
        for rated in verdict.rated_wrong:
            if c.start_position <= rated.position <= c.end_position:
                return f"readers rated step {rated.step} wrong ({rated.bad} bad, {rated.good} good)"
        first = verdict.first_wrong
        if first is not None and c.end_position >= first.position:
            where = "holds" if c.start_position <= first.position else "comes after"
            return (
                f"the window {where} step {first.step}, where {first.votes} of the "
                f"{first.markers} readers who marked one say the run first went wrong"
            )
        return ""


WORD = re.compile(r"[a-z0-9_]+")


def words(text: str) -> frozenset[str]:
    return frozenset(WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicateFilter:
    """An instruction whose words overlap one kept before (earlier runs included) by at least
    `threshold` (Jaccard) adds nothing. Candidates come from an inverted index of words, so each
    check compares against the few kept instructions sharing its rarest words, not all of them."""

    name = "near_duplicate"

    def __init__(self, *, threshold: float, kept: list[tuple[int, str]]):
        self.threshold = threshold
        self.sets: dict[int, frozenset[str]] = {}
        self.index: dict[str, set[int]] = {}
        for example_id, instruction in kept:
            self._add(example_id, words(instruction))

    def _add(self, example_id: int, ws: frozenset[str]) -> None:
        self.sets[example_id] = ws
        for word in ws:
            self.index.setdefault(word, set()).add(example_id)

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        verdicts = []
        for c in candidates:
            ws = words(c.instruction)
            # Jaccard >= t needs |A & B| >= t * |A|: any such B shares one of A's
            # (1 - t) * |A| + 1 rarest words.
            rare = sorted(ws, key=lambda w: len(self.index.get(w, ())))
            probe = rare[: int((1 - self.threshold) * len(rare)) + 1]
            others = set().union(*(self.index.get(w, set()) for w in probe)) if probe else set()
            best, best_id = 0.0, None
            for other in others:
                score = jaccard(ws, self.sets[other])
                if score > best:
                    best, best_id = score, other
            if best_id is not None and best >= self.threshold:
                verdicts.append(
                    Verdict(
                        self.name,
                        False,
                        f"near-duplicate of example {best_id} (similarity {best:.2f})",
                        {"of": best_id},
                    )
                )
            else:
                self._add(c.id, ws)
                verdicts.append(Verdict(self.name, True))
        return verdicts


CRITERIA = ("aligned", "coherent", "natural", "reasonable")


def parse_judgement(answer: str) -> dict[str, bool] | None:
    text = prompts.fenced(answer)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    out = {}
    for criterion in CRITERIA:
        said = str(value.get(criterion, "")).strip().lower()
        if said not in ("yes", "no"):
            return None
        out[criterion] = said == "yes"
    return out


class CommitteeFilter:
    """Each judge model answers yes/no to the four criteria; kept only if every judge says yes to
    all four. A judge whose answer cannot be read counts as a no (nothing is kept unjudged);
    an endpoint failure leaves the example a candidate for the next run (LLMError propagates
    per example as a verdict with `error`)."""

    name = "committee"

    def __init__(
        self,
        *,
        config: LLMConfig,
        call: Callable[[list[dict], str], Answer],
        on_answer: Callable[[Answer], None],
        on_failure: Callable[[LLMError], None],
        guard: UnreadableGuard | None = None,
    ):
        self.config, self.call = config, call
        self.on_answer, self.on_failure = on_answer, on_failure
        # Counts each answer as it comes (in the thread that asked), and once a judge's first
        # answers could not be read no more are asked (apps/learn/guard.py).
        self.guard = guard

    def _judge(self, candidate: Candidate, model: str) -> Answer | LLMError | None:
        """The judge's answer, its failure, or None: not asked (the run stops)."""
        if self.guard is not None and self.guard.stopped:
            return None
        prompt = prompts.render(
            "judge",
            instruction=candidate.instruction,
            trajectory=prompts.render_steps(candidate.steps),
        )
        try:
            answer = self.call([{"role": "user", "content": prompt}], model)
        except LLMError as error:
            return error
        if self.guard is not None:
            self.guard.watch(model, readable=parse_judgement(answer.text) is not None)
        return answer

    def check(self, candidates: list[Candidate]) -> list[Verdict]:
        models = self.config.judge_models or [self.config.model]
        jobs = [(c, m) for c in candidates for m in models]
        # Only the HTTP calls run in threads; the callbacks (which write) run here.
        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            replies = list(pool.map(lambda job: self._judge(*job), jobs))
        by_candidate: dict[int, list[tuple[str, dict[str, bool] | None, str]]] = {}
        for (candidate, model), answer in zip(jobs, replies, strict=True):
            result: tuple[str, dict[str, bool] | None, str]
            if answer is None:
                continue
            if isinstance(answer, LLMError):
                self.on_failure(answer)
                result = (model, None, str(answer))
            else:
                self.on_answer(answer)
                result = (model, parse_judgement(answer.text), "")
            by_candidate.setdefault(candidate.id, []).append(result)
        if self.guard is not None:
            self.guard.check()  # after accounting what was spent; no verdict is written
        verdicts = []
        for c in candidates:
            judged = by_candidate[c.id]
            failed = [error for _, _, error in judged if error]
            answers = {model: answer for model, answer, _ in judged}
            details: dict[str, Any] = dict(answers)
            if failed:
                verdicts.append(
                    Verdict(
                        self.name, False, f"not judged: {failed[0]}", {"error": True, **details}
                    )
                )
                continue
            noes = [
                f"{model}: not {criterion}" if answer is not None else f"{model}: unreadable answer"
                for model, answer in answers.items()
                for criterion in (CRITERIA if answer is not None else CRITERIA[:1])
                if answer is None or not answer[criterion]
            ]
            if noes:
                verdicts.append(Verdict(self.name, False, "; ".join(noes), details))
            else:
                verdicts.append(Verdict(self.name, True, "", details))
        return verdicts
