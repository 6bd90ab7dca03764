"""Answering /api/v1/retrieve (the paper's Algorithm 2) from the current index.

Retrievers, each asked for more than k so that hits filtered out below do not leave gaps:
instruction BM25 over the examples' instructions; observation BM25 over the windows'
observations (with the current observation, m1 = k by default); dense over the instructions
(dense extra); and, opt-in, model-based: an LLM writes a search query from instruction, history
and observation, and the dense retriever (BM25 without the extra) answers it, skipping what was
already retrieved. Results are interleaved by rank, duplicates (same example or same window)
removed, and every hit is checked against public() and the trajectory's current redactions in
one query, so an index built earlier can never serve what has left. Readers' accepted
corrections of the served windows' steps come with them (one more query, only when that one
says a served window may have some).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Case, CharField, F, JSONField, Q, QuerySet, Value, When
from django.db.models.fields.json import KeyTextTransform

from apps.feedback.consensus import accepted_corrections, corrections_exist
from apps.learn import prompts
from apps.learn.llm import LLMError
from apps.learn.retrieval import dense, index
from apps.learn.selectors import examples_public
from apps.learn.windows import OBSERVATION, Step, cut
from apps.trajectories.selectors.redactions import map_digest

FORMATS = ("text", "openai", "sharegpt")
OVERSAMPLE = 3
HEAD_STEPS = 2


@dataclass
class Query:
    instruction: str
    observation: str = ""
    history: list[str] = field(default_factory=list)
    k: int = 5
    format: str = "text"
    model_based: bool = False
    corrections: bool = True


class ModelQueryFailed(Exception):
    pass


def _model_query(query: Query) -> str:
    from apps.learn.services import llm_call, llm_config

    limit = settings.TRAJHUB_SYNTH_OBSERVATION_CHARS
    prompt = prompts.render(
        "query",
        instruction=cut(query.instruction, limit),
        history="\n".join(cut(h, limit) for h in query.history[-5:]) or "(none)",
        observation=cut(query.observation, limit) or "(none)",
    )
    try:
        answer = llm_call(llm_config(), [{"role": "user", "content": prompt}])
    except LLMError as error:
        raise ModelQueryFailed(str(error)) from None
    text = prompts.fenced(answer.text)
    if text is None:
        raise ModelQueryFailed("the LLM's answer had no fenced block with a query")
    return text


def _interleave(ranked: list[tuple[str, list[tuple[int, float]]]]) -> list[tuple[int, float, str]]:
    merged: list[tuple[int, float, str]] = []
    seen: set[int] = set()
    depth = max((len(hits) for _, hits in ranked), default=0)
    for rank in range(depth):
        for name, hits in ranked:
            if rank < len(hits) and hits[rank][0] not in seen:
                seen.add(hits[rank][0])
                merged.append((hits[rank][0], hits[rank][1], name))
    return merged


def retrieve(query: Query) -> dict[str, Any]:
    loaded = index.current()
    k = query.k
    want = k * OVERSAMPLE
    ranked: list[tuple[str, list[tuple[int, float]]]] = []
    model_query = ""
    if loaded is not None and len(loaded):
        ranked.append(
            (
                "instruction_bm25",
                index.bm25_search(loaded.instruction, loaded.ids, query.instruction, want),
            )
        )
        if query.observation:
            ranked.append(
                (
                    "observation_bm25",
                    index.bm25_search(loaded.observation, loaded.ids, query.observation, want),
                )
            )
        with_dense = loaded.dense is not None and dense.available()
        if with_dense and query.instruction.strip():
            # Encoding the query is most of a dense search's time: once per request, and not
            # again while the same instruction comes back (an agent's every step).
            vector = dense.encode_query(query.instruction)
            ranked.append(
                ("dense", index.dense_search(loaded, query.instruction, want, vector=vector))
            )
        if query.model_based:
            model_query = _model_query(query)
            already = {hit[0] for _, hits in ranked for hit in hits}
            if with_dense:
                hits = index.dense_search(loaded, model_query, want, exclude=already)
            else:
                hits = [
                    hit
                    for hit in index.bm25_search(
                        loaded.instruction, loaded.ids, model_query, want * 2
                    )
                    if hit[0] not in already
                ]
            ranked.append(("model", hits))
    merged = _interleave(ranked)
    served = _servable(merged, k, query.corrections)
    if query.corrections:
        _attach_corrections([hit for hit in served if hit.corrected])
    out = [_answer(hit, query.format) for hit in served]
    answer: dict[str, Any] = {"examples": out, "prompt": prompt_block(out)}
    return answer | ({"model_query": model_query} if model_query else {})


@dataclass
class _Hit:
    pk: int
    score: float
    retriever: str
    instruction: str
    start: int
    end: int
    share_id: str
    steps: list[dict[str, Any]] | None
    trajectory_id: int = 0
    digest: str = ""  # the trajectory's current map digest (what its window was cut with)
    corrected: bool = False  # readers may have corrected one of its steps (a hint)
    # (step index in the window, the correction's public id, page step, mode, redacted text)
    corrections: list[tuple[int, str, int, str, str]] = field(default_factory=list)


def _candidates(pks: list[int], head: list[int], corrections: bool) -> QuerySet:
    """The one query of _servable: each candidate's window, trajectory, current map digest (or
    whole map), steps (for the `head` ones) and whether readers may have corrected its steps."""
    # The current map's digest from the trajectory's redaction index where that is current
    # (a trigger clears `indexed_at` whenever the map changes); the whole map, to hash here,
    # only where it is not: a source with 300,000 redactions costs no 12 MB read per request.
    indexed = Q(trajectory__indexed_at__isnull=False, trajectory__redaction_index__has_key="map")
    # A hint only, so that most answers (no window with a correction) cost no second query;
    # what is served of them is read and checked by _attach_corrections.
    corrected = (
        corrections_exist(
            trajectory="trajectory_id", first="window__start_position", last="window__end_position"
        )
        if corrections
        else Value(False)
    )
    return (
        examples_public()
        .filter(pk__in=pks)
        .annotate(
            corrected=corrected,
            head_steps=Case(
                When(pk__in=head, then=F("window__steps")), default=None, output_field=JSONField()
            ),
            map_digest=Case(
                When(indexed, then=KeyTextTransform("map", "trajectory__redaction_index")),
                default=None,
                output_field=CharField(),
            ),
            full_map=Case(
                When(indexed, then=None),
                default=F("trajectory__redactions"),
                output_field=JSONField(),
            ),
        )
        .values_list(
            "pk",
            "window_id",
            "window__redactions_hash",
            "trajectory_id",
            "map_digest",
            "instruction",
            "window__start_position",
            "window__end_position",
            "trajectory__share_id",
            "head_steps",
            "full_map",
            "corrected",
        )
    )


def _servable(merged: list[tuple[int, float, str]], k: int, corrections: bool) -> list[_Hit]:
    """The first k hits that may be served now, one per window: kept, their trajectory in
    public(), and cut with the trajectory's current redactions. One query over every candidate
    checks that and reads what an answer shows; the windows' steps, the one large column, only
    for the first HEAD_STEPS * k candidates (a candidate further down is served only when more
    than that many above it were filtered out: then its steps are read in a second query)."""
    if not merged:
        return []
    head = [pk for pk, _, _ in merged[: HEAD_STEPS * k]]
    candidates = _candidates([pk for pk, _, _ in merged], head, corrections)
    found: dict[int, tuple] = {}
    current: dict[int, str] = {}
    for row in candidates:
        found[row[0]] = row
        trajectory, indexed_digest = row[3], row[4]
        if trajectory not in current:
            current[trajectory] = indexed_digest or map_digest(row[10])
    chosen: list[_Hit] = []
    windows: set[int] = set()
    for pk, score, retriever in merged:
        if pk not in found:
            continue
        _, window, digest, trajectory, _, instruction, start, end, share_id, steps, _, fixed = (
            found[pk]
        )
        if window in windows or digest != current.get(trajectory):
            continue  # a second example of one window, or redacted again since it was cut
        windows.add(window)
        chosen.append(
            _Hit(pk, score, retriever, instruction, start, end, share_id, steps, trajectory, digest)
        )
        chosen[-1].corrected = bool(fixed)
        if len(chosen) >= k:
            break
    missing = [hit.pk for hit in chosen if hit.steps is None]
    if missing:
        # public() again in this second query: a trajectory that left in between is not served.
        steps = dict(examples_public().filter(pk__in=missing).values_list("pk", "window__steps"))
        chosen = [hit for hit in chosen if hit.steps is not None or hit.pk in steps]
        for hit in chosen:
            if hit.steps is None:
                hit.steps = steps[hit.pk]
    return chosen


def _attach_corrections(hits: list[_Hit]) -> None:
    """Readers' accepted corrections (apps.feedback.consensus) next to the window step each
    corrects: the action step whose events hold the corrected one. One query for all hits; a
    correction of a step the window does not show (a repeat folded away) is left out."""
    if not hits:
        return
    limit = settings.TRAJHUB_SYNTH_OBSERVATION_CHARS
    digests = {hit.trajectory_id: hit.digest for hit in hits}
    spans = [(hit.trajectory_id, hit.start, hit.end) for hit in hits]
    for correction in accepted_corrections(spans, digests=digests):
        for hit in hits:
            if hit.trajectory_id != correction.trajectory_id:
                continue
            for number, step in enumerate(hit.steps or []):
                first, last = step.get("first", -1), step.get("last", -1)
                if step.get("role") == OBSERVATION or not first <= correction.position <= last:
                    continue
                hit.corrections.append(
                    (
                        number,
                        correction.id,
                        correction.step,
                        correction.mode,
                        cut(correction.text, limit),
                    )
                )


def _steps(hit: _Hit) -> list[Step]:
    return [
        Step(s["role"], s.get("text", ""), s.get("first", 0), s.get("last", 0))
        for s in hit.steps or []
    ]


def _format_steps(steps: list[Step], instruction: str, fmt: str) -> list[dict[str, Any]]:
    if fmt == "openai":
        messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
        for step in steps:
            if step.role == OBSERVATION:
                messages.append({"role": "user", "content": f"Observation:\n{step.text}"})
            else:
                messages.append({"role": "assistant", "content": step.text})
        return messages
    if fmt == "sharegpt":
        turns = [{"from": "human", "value": instruction}]
        for step in steps:
            if step.role == OBSERVATION:
                turns.append(
                    {"from": "observation" if len(turns) > 1 else "human", "value": step.text}
                )
            else:
                turns.append({"from": "gpt", "value": step.text})
        return turns
    return [{"role": s.role, "text": s.text, "first": s.first, "last": s.last} for s in steps]


def _answer(hit: _Hit, fmt: str) -> dict[str, Any]:
    steps = _steps(hit)
    # In the openai and sharegpt formats the instruction is the first message: one further on.
    offset = 0 if fmt == "text" else 1
    rendered: dict[int, list[tuple[str, str]]] = {}
    for number, _id, _step, mode, text in hit.corrections:
        rendered.setdefault(number, []).append((mode, text))
    return {
        "id": hit.pk,
        "instruction": hit.instruction,
        "trajectory_id": hit.share_id,
        "url": f"{settings.SITE_URL}/t/{hit.share_id}/#step-{hit.start + 1}",
        "window": [hit.start, hit.end],
        "score": round(hit.score, 4),
        "retriever": hit.retriever,
        "steps": _format_steps(steps, hit.instruction, fmt),
        "corrections": [
            {"id": public_id, "at": number + offset, "step": step, "mode": mode, "text": text}
            for number, public_id, step, mode, text in hit.corrections
        ],
        "_text": prompts.render_steps(steps, rendered),
    }


def prompt_block(examples: list[dict[str, Any]]) -> str:
    """Demonstrations to paste into an agent's prompt (and drop the private `_text` helper)."""
    texts = [example.pop("_text") for example in examples]
    if not examples:
        return ""
    parts = [
        "Here are demonstrations of similar tasks, each an instruction and the steps that "
        "carried it out:"
    ]
    for number, (example, text) in enumerate(zip(examples, texts, strict=True), start=1):
        parts.append(f"## Demonstration {number}\nInstruction: {example['instruction']}\n\n{text}")
    return "\n\n".join(parts)
