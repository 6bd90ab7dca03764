"""OpenHands evaluation rows (`output.jsonl`): {instance_id, instruction, metadata, history, ...}.

`history` comes in three shapes over the years (shared/OPENHANDS.md 2.1, 2.5): a list of V0
events (2025), a list of [action, observation] pairs (2024 OpenDevin) and flat legacy events
with args/extras inlined and no id or timestamp (2024 resolver output). One row is one
trajectory. The row's small fields (ids, scores, totals) go to metadata; the bulky ones
(the benchmark instance, the LLM config with its keys) do not.
"""

from __future__ import annotations

import hashlib
from typing import Any

from apps.trajectories.importers import openhands_v0
from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    json_type,
    mostly,
    number,
    small_value,
    text_of,
    title_from,
)

NAME = "openhands_eval"
LABEL = "OpenHands evaluation output row"

ROW_KEYS = {"instance_id", "instruction", "metadata", "test_result", "metrics", "instance"}


def is_pair(item: Any) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 2
        and all(isinstance(part, dict) for part in item)
        and any(openhands_v0.is_event(part) for part in item)
    )


def looks_like_history(history: list) -> bool:
    return mostly(history, lambda i: is_pair(i) or openhands_v0.is_event(i), sample=50)


def detect(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        return False
    history = doc["history"]
    if not history:
        # An empty run is still recognisably a row (it then fails with "no events").
        return bool(ROW_KEYS & doc.keys())
    return looks_like_history(history)


def flatten(history: list) -> list:
    """The events of a history, with [action, observation] pairs unpacked."""
    items: list = []
    for entry in history:
        if isinstance(entry, list) and len(entry) == 2:
            items.extend(entry)
        else:
            items.append(entry)
    return items


def convert(doc: Any) -> CanonicalTrajectory:
    if not isinstance(doc, dict):
        raise FormatError(f"expected an evaluation row object, got {json_type(doc)}")
    history = doc.get("history")
    if not isinstance(history, list):
        raise FormatError(
            f"'history' is {json_type(history)}, expected an array of events", "history"
        )
    trajectory = openhands_v0.build_trajectory(flatten(history), source_format=NAME)
    apply_row(trajectory, doc)
    return trajectory


def apply_row(trajectory: CanonicalTrajectory, row: dict) -> None:
    """Fill agent, model, title, session and metadata from an evaluation row (V0 and V1)."""
    meta = obj if isinstance(obj := row.get("metadata"), dict) else {}
    llm = obj if isinstance(obj := meta.get("llm_config"), dict) else None
    if llm is None and isinstance(meta.get("llm"), dict):
        llm = meta["llm"]
    configured = text_of(llm.get("model")) if llm else ""
    trajectory.model = configured or text_of(meta.get("model_name")) or trajectory.model
    agent = text_of(meta.get("agent_class"))
    if agent:
        trajectory.agent = agent

    instance_id = text_of(row.get("instance_id")) or (
        str(row["instance_id"]) if number(row.get("instance_id")) is not None else ""
    )
    issue = obj if isinstance(obj := row.get("issue"), dict) else None
    if instance_id:
        trajectory.title = instance_id
    elif issue:
        where = "/".join(text_of(issue.get(key)) for key in ("owner", "repo") if issue.get(key))
        ref = f"{where}#{issue['number']}" if where and number(issue.get("number")) else where
        trajectory.title = ": ".join(part for part in (ref, text_of(issue.get("title"))) if part)
    if not trajectory.title:
        trajectory.title = title_from(text_of(row.get("instruction")))

    if instance_id:
        # The same instance in another run (another model, another day) is another trajectory;
        # the same row uploaded again is the same one.
        run = (
            text_of(meta.get("eval_output_dir"))
            or text_of(meta.get("start_time"))
            or trajectory.model
        )
        digest = hashlib.sha256(run.encode()).hexdigest()[:12] if run else ""
        trajectory.session_id = f"{instance_id}@{digest}" if digest else instance_id

    metadata = trajectory.metadata
    if instance_id:
        metadata["instance_id"] = instance_id
    for key in ("dataset", "dataset_split", "max_iterations", "start_time", "git_commit"):
        value = small_value(meta.get(key), max_chars=300, depth=0)
        if value is not None:
            metadata[key] = value
    metrics = row.get("metrics")
    if isinstance(metrics, dict):
        # The row's totals are the whole run's; they beat the last event's.
        metadata.pop("total_tokens", None)
        metadata.pop("total_cost", None)
        openhands_v0.add_totals(metadata, metrics)
    # The run's final patch, whole: the Result card shows it and exports keep it (a patch cut
    # at 2,000 characters is no patch). The rest of the result stays small.
    test_result = row.get("test_result")
    patch = test_result.get("git_patch") if isinstance(test_result, dict) else None
    if not isinstance(patch, str):
        patch = row.get("git_patch")
    if isinstance(patch, str) and patch.strip():
        metadata["git_patch"] = patch
    for key in ("test_result", "report", "success", "issue_type", "result_explanation", "error"):
        if key in row and row[key] is not None:
            value = row[key]
            if key == "test_result" and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k != "git_patch"}
            value = small_value(value, max_chars=2000, depth=2)
            if value not in (None, {}, []):
                metadata[key] = value
    if issue:
        metadata["issue"] = small_value(issue, max_chars=300, depth=1)
    add_instruction(trajectory, row)


def add_instruction(trajectory: CanonicalTrajectory, row: dict) -> None:
    """Rows whose history lacks the task (V1 benchmark outputs) get it as the first message."""
    instruction = text_of(row.get("instruction"))
    if not instruction.strip() or not trajectory.events:
        return
    if any(event.source == "user" and event.kind == "message" for event in trajectory.events):
        return
    position = 1 if trajectory.events and trajectory.events[0].kind == "system" else 0
    first = trajectory.events[position] if position < len(trajectory.events) else None
    trajectory.events.insert(
        position,
        CanonicalEvent(
            source="user",
            kind="message",
            type="message",
            text=instruction,
            data={"instruction": instruction},
            timestamp=first.timestamp if first is not None else None,
        ),
    )
