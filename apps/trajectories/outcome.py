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
