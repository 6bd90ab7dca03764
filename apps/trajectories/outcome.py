"""What a run came to, from the metadata its importer kept: the final patch, resolved or not, the
instance, cost, exit status and model stats (OpenHands evaluation rows, the resolver's output,
SWE-agent's `info`), and an Inspect AI sample's scores.

Pure Python, no Django: the trajectory page's Result card, the API, the exports and the compare
page all read it from here, so they agree. Callers pass metadata already redacted for the
reader (a patch is trajectory text like any other).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RunOutcome:
    """The outcome of one run; empty fields are unknown."""

    patch: str = ""
    resolved: bool | None = None
    instance_id: str = ""
    exit_status: str = ""
    cost: float | None = None
    tokens: int | None = None
    score: str = ""
    error: str = ""
    model_stats: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.patch
            or self.resolved is not None
            or self.exit_status
            or self.score
            or self.error
            or self.model_stats
        )

    def as_dict(self) -> dict[str, Any]:
        # A cost or token count recorded as 0 is unknown (known_amount): left out, like any
        # unknown field, rather than sent as 0.
        return {
            key: value
            for key, value in asdict(self).items()
            if value not in ("", None, {}) and not (key in AMOUNTS and not known_amount(value))
        }


AMOUNTS = ("cost", "tokens")
UNKNOWN = "unknown"


def known_amount(value: Any) -> bool:
    """Whether a recorded cost or token count says something. The formats write 0 where they
    do not know: SWE-agent's model_stats without a price list or token counts (0 tokens over 11
    API calls), OpenHands' accumulated_cost for a model it has no price for (0.0 next to 567,000
    tokens). No run that called a model used 0 tokens, and one whose model was free shows no
    cost either way, so 0 (or less) reads as unknown."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def cost_label(cost: Any) -> str:
    """A recorded cost as a page shows it: "" when none is recorded, "unknown" for 0, else
    dollars (never "$0.0000": a cost too small for four decimals says so)."""
    if cost is None:
        return ""
    if not known_amount(cost):
        return UNKNOWN
    return f"${cost:.4f}" if cost >= 0.0001 else "< $0.0001"


def count_label(count: Any) -> str:
    """A recorded token count as a page shows it: "", "unknown" for 0, else the number."""
    if count is None:
        return ""
    return f"{count:,}" if known_amount(count) else UNKNOWN


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _resolved(metadata: dict[str, Any]) -> bool | None:
    test_result = metadata.get("test_result")
    report = metadata.get("report")
    for holder in (test_result, report, metadata):
        if not isinstance(holder, dict):
            continue
        value = holder.get("resolved")
        if isinstance(value, bool):
            return value
        nested = holder.get("report")
        if isinstance(nested, dict) and isinstance(nested.get("resolved"), bool):
            return nested["resolved"]
    # The resolver's rows say "success" for the same thing.
    success = metadata.get("success")
    return success if isinstance(success, bool) else None


# Inspect AI's letter scores (inspect_ai.scorer: CORRECT, INCORRECT, PARTIAL, NOANSWER).
INSPECT_VALUES = {"C": "correct", "I": "incorrect", "P": "partial", "N": "no answer"}


def _score(metadata: dict[str, Any]) -> str:
    test_result = metadata.get("test_result")
    final = test_result.get("final_score") if isinstance(test_result, dict) else None
    if isinstance(final, dict) and "result" in final and "total" in final:
        return f"{final['result']} / {final['total']}"
    # An Inspect sample's scores, by scorer: {"includes": {"value": "C", ...}}.
    scores = metadata.get("scores")
    if isinstance(scores, dict) and scores:
        parts = []
        for scorer, score in list(scores.items())[:5]:
            value = score.get("value") if isinstance(score, dict) else score
            if isinstance(value, dict):
                value = ", ".join(f"{key} {item}" for key, item in list(value.items())[:5])
            shown = INSPECT_VALUES.get(value, str(value)) if isinstance(value, str) else value
            parts.append(f"{scorer}: {shown}")
        return "; ".join(parts)
    return ""


def run_outcome(metadata: Any) -> RunOutcome:
    """The run's result from a trajectory's metadata (any format; empty when it has none)."""
    if not isinstance(metadata, dict):
        return RunOutcome()
    patch = metadata.get("git_patch")
    if not isinstance(patch, str) or not patch.strip():
        patch = metadata.get("submission")
    test_result = metadata.get("test_result")
    if (not isinstance(patch, str) or not patch.strip()) and isinstance(test_result, dict):
        patch = test_result.get("git_patch")  # rows stored before the patch was kept apart
    stats = metadata.get("model_stats")
    cost = _number(metadata.get("total_cost"))
    tokens = metadata.get("total_tokens")
    error = metadata.get("error")
    return RunOutcome(
        patch=patch if isinstance(patch, str) else "",
        resolved=_resolved(metadata),
        instance_id=str(metadata.get("instance_id") or ""),
        exit_status=str(metadata.get("exit_status") or ""),
        cost=cost,
        tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        score=_score(metadata),
        error=error if isinstance(error, str) else "",
        model_stats=stats if isinstance(stats, dict) else {},
    )


# --- The stored outcome (issue 23) -----------------------------------------------------------
# One verdict per trajectory, kept in columns (Trajectory.outcome, outcome_score,
# outcome_source) so that browse, the API's filter and stats can use it: made from the metadata
# above where the format records one, else from what the owner said.

RESOLVED = "resolved"
UNRESOLVED = "unresolved"
# (UNKNOWN, "unknown", is the third state.)
OUTCOMES = (RESOLVED, UNRESOLVED, UNKNOWN)
OUTCOME_LABELS = {RESOLVED: "Resolved", UNRESOLVED: "Not resolved", UNKNOWN: "Unknown"}
# Where a verdict came from, by the code stored in Trajectory.outcome_source.
SOURCE_LABELS = {
    "openhands_eval": "OpenHands evaluation report",
    "openhands_resolver": "OpenHands resolver",
    "swebench_report": "SWE-bench evaluation report",
    "file_report": "the file's evaluation result",
    "inspect_score": "Inspect score",
    "harbor_reward": "Harbor verifier reward",
    "owner": "the owner",
}
OWNER = "owner"
OPENHANDS_FORMATS = ("openhands_eval", "openhands_v0", "openhands_v1", "openhands_share")


@dataclass(frozen=True)
class Verdict:
    """A trajectory's outcome: resolved / unresolved / unknown, a score in [0, 1] where one is
    known, and the code of its source ("" when unknown)."""

    outcome: str = UNKNOWN
    score: float | None = None
    source: str = ""

    @property
    def known(self) -> bool:
        return self.outcome != UNKNOWN

    def columns(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "outcome_score": self.score,
            "outcome_source": self.source,
        }


def _fraction(value: Any) -> float | None:
    """A number in [0, 1], else None (a score on another scale says nothing we can compare)."""
    number = _number(value) if not isinstance(value, str) else None
    return number if number is not None and 0.0 <= number <= 1.0 else None


def _report_source(source_format: str) -> str:
    if source_format in OPENHANDS_FORMATS:
        return "openhands_eval"
    if source_format == "sweagent":
        return "swebench_report"
    return "file_report"


def _openhands_verdict(metadata: dict[str, Any], source_format: str) -> Verdict:
    test_result = metadata.get("test_result")
    for holder in (test_result, metadata.get("report"), metadata):
        if not isinstance(holder, dict):
            continue
        value = holder.get("resolved")
        nested = holder.get("report")
        if not isinstance(value, bool) and isinstance(nested, dict):
            value = nested.get("resolved")
        if isinstance(value, bool):
            return Verdict(
                RESOLVED if value else UNRESOLVED,
                1.0 if value else 0.0,
                _report_source(source_format),
            )
    # TheAgentCompany-style benchmarks (OpenHands V1 rows) score checkpoints: {result, total}.
    # Full marks is a resolved task, fewer is not; no checkpoints at all (total 0) says nothing.
    final = test_result.get("final_score") if isinstance(test_result, dict) else None
    if isinstance(final, dict):
        result, total = _number(final.get("result")), _number(final.get("total"))
        if result is not None and total is not None and total > 0 and 0 <= result <= total:
            return Verdict(
                RESOLVED if result >= total else UNRESOLVED, result / total, "openhands_eval"
            )
    # The resolver's own judgement of whether its change fixed the issue.
    success = metadata.get("success")
    if isinstance(success, bool) and source_format in OPENHANDS_FORMATS:
        return Verdict(
            RESOLVED if success else UNRESOLVED, 1.0 if success else 0.0, "openhands_resolver"
        )
    return Verdict()


# Inspect AI's score values (inspect_ai.scorer: CORRECT "C", INCORRECT "I", PARTIAL "P",
# NOANSWER "N"; value_to_float also reads "yes"/"no" and "true"/"false"). Partial credit and no
# answer are not a solved task; a score of 1 or 0 is a match scorer's verdict.
INSPECT_STATES = {
    "c": (RESOLVED, 1.0),
    "correct": (RESOLVED, 1.0),
    "yes": (RESOLVED, 1.0),
    "true": (RESOLVED, 1.0),
    "i": (UNRESOLVED, 0.0),
    "incorrect": (UNRESOLVED, 0.0),
    "no": (UNRESOLVED, 0.0),
    "false": (UNRESOLVED, 0.0),
    "p": (UNRESOLVED, 0.5),
    "partial": (UNRESOLVED, 0.5),
    "n": (UNRESOLVED, 0.0),
    "noanswer": (UNRESOLVED, 0.0),
}


def _inspect_value(value: Any) -> tuple[str, float | None]:
    if isinstance(value, bool):
        return (RESOLVED, 1.0) if value else (UNRESOLVED, 0.0)
    if isinstance(value, str):
        return INSPECT_STATES.get(value.strip().lower(), (UNKNOWN, None))
    number = _number(value)
    if number == 1.0:
        return RESOLVED, 1.0
    if number == 0.0:
        return UNRESOLVED, 0.0
    # Any other number (a model-graded 0.7, a 1-10 scale) cannot be read as solved or not.
    return UNKNOWN, _fraction(value)


def _inspect_verdict(metadata: dict[str, Any]) -> Verdict:
    """All of the sample's scorers, read as above: their verdict where they agree, else
    unknown (a dict of several values, one per metric, is unknown too)."""
    scores = metadata.get("scores")
    if not isinstance(scores, dict) or not scores:
        return Verdict()
    states, numbers = set(), []
    for score in scores.values():
        value = score.get("value") if isinstance(score, dict) else score
        state, number = _inspect_value(value)
        states.add(state)
        numbers.append(number)
    if len(states) != 1 or UNKNOWN in states:
        return Verdict()
    return Verdict(states.pop(), sum(n or 0.0 for n in numbers) / len(numbers), "inspect_score")


def _harbor_verdict(metadata: dict[str, Any]) -> Verdict:
    """The verifier's reward from the trial's result.json ({"reward": 1.0}): full reward is
    resolved, less is not; a reward outside [0, 1], or several without a "reward", is unknown."""
    rewards = metadata.get("verifier_rewards")
    if not isinstance(rewards, dict) or not rewards:
        return Verdict()
    value = (
        rewards.get("reward")
        if "reward" in rewards or len(rewards) != 1
        else next(iter(rewards.values()))
    )
    reward = _fraction(value) if not isinstance(value, bool) else None
    if reward is None:
        return Verdict()
    return Verdict(RESOLVED if reward >= 1.0 else UNRESOLVED, reward, "harbor_reward")


def format_verdict(metadata: Any, source_format: str) -> Verdict:
    """The outcome the trajectory's own file records (unknown where it records none)."""
    if not isinstance(metadata, dict):
        return Verdict()
    if source_format == "inspect_log":
        return _inspect_verdict(metadata)
    if source_format == "atif":
        found = _harbor_verdict(metadata)
        if found.known:
            return found
    # SWE-agent's exit status "submitted" says the run ended with a patch, not that the patch
    # works: only an evaluation report's "resolved" counts, as for OpenHands' rows.
    return _openhands_verdict(metadata, source_format)


def stored_verdict(metadata: Any, source_format: str, owner_outcome: str) -> Verdict:
    """What Trajectory's outcome columns hold: the format's verdict where it has one (it wins
    over the owner's), else the owner's "it worked" / "it did not", else unknown."""
    found = format_verdict(metadata, source_format)
    if found.known:
        return found
    if owner_outcome in (RESOLVED, UNRESOLVED):
        return Verdict(owner_outcome, None, OWNER)
    return Verdict()
