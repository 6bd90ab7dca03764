"""Exports of the kept examples of public trajectories, for training (SFT).

Each example becomes a conversation whose user turn is the written instruction and whose rest is
the window, built by the site's own exporters (apps.trajectories.exporters) from the events as
the public pages show them (redacted): tool calls, tool results and tool definitions come out
exactly as in a trajectory's own openai / sharegpt download. Every row carries `source_id` (the
trajectory's share id) and `window` ([first, last] event positions, inclusive).

- trl.jsonl: TRL conversational, {"messages": [...], "tools": [...]} (tool call arguments are
  JSON strings)
- sharegpt.jsonl + dataset_info.json: LLaMA-Factory ShareGPT (`conversations` of from/value with
  human, gpt, function_call, observation) and its dataset_info.json entry
- examples.jsonl and examples.parquet: one flat row per example (steps as the windows hold them)

Files are written under a temporary name and renamed, streaming in batches (bounded memory).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from apps.datasets.row_schema import message_row
from apps.datasets.services.build import release_redactor
from apps.learn.models import Example
from apps.learn.selectors import examples_public
from apps.trajectories import selectors as trajectory_selectors
from apps.trajectories.exporters import to_openai, to_sharegpt
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.models import Trajectory
from apps.trajectories.redaction import Redact, identity, redact_data
from apps.trajectories.selectors.redactions import map_digest

if TYPE_CHECKING:
    from apps.datasets.models import Release

FORMATS = ("trl", "sharegpt", "jsonl", "parquet")
DATASET_NAME = "trajhub_lbi"
BATCH = 500
PARQUET_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("source_id", pa.string()),
        ("window", pa.list_(pa.int64())),
        ("instruction", pa.string()),
        ("prompt_type", pa.string()),
        ("prompt_version", pa.int64()),
        ("model", pa.string()),
        ("num_actions", pa.int64()),
        ("steps", pa.string()),
        ("license", pa.string()),
    ]
)


def window_events(
    trajectory: Trajectory, start: int, end: int, redact: Redact | None = None
) -> list[tuple[int, CanonicalEvent]]:
    """The system events before the window (tool definitions, system prompt) and the window's
    events, redacted as the public pages show them (or by `redact`, a release's redactor)."""
    redact = redact or trajectory_selectors.redactor_for(trajectory, None)
    events = []
    for event in trajectory_selectors.event_queryset(trajectory).filter(position__lte=end):
        if event.position < start and event.kind != "system":
            continue
        view = trajectory_selectors.event_view(event, redact)
        events.append(
            (
                event.position,
                CanonicalEvent(
                    source=view.source,
                    kind=view.kind,
                    type=view.type,
                    text=view.text,
                    data=view.data,
                    original_id=view.original_id,
                    timestamp=view.timestamp,
                    cause=view.cause,
                ),
            )
        )
    return events


@dataclass
class Row:
    example: Example
    events: list[tuple[int, CanonicalEvent]]
    meta: dict
    redact: Redact = identity  # on top of the window's text (already redacted as public)

    @property
    def source(self) -> dict[str, Any]:
        window = self.example.window
        return {
            "source_id": self.example.trajectory.share_id,
            "window": [window.start_position, window.end_position],
        }

    def context(self) -> str:
        """The instruction, with the window's first observation when it is not the original
        task (a window from the middle of a session starts from what the agent saw there)."""
        first = (self.example.window.steps or [{}])[0]
        if self.example.window.start_step == 0 or not first.get("text"):
            return self.redact(self.example.instruction)
        return self.redact(f"{self.example.instruction}\n\nCurrent observation:\n{first['text']}")


def _without_first_observation(row: Row) -> list[CanonicalEvent]:
    # The window's o_i is given in the user turn (context()); its events are left out so the
    # conversation does not repeat it (and the original task does not contradict the new one).
    first = (row.example.window.steps or [{}])[0]
    end_of_first = first.get("last", -1)
    return [
        event for position, event in row.events if event.kind == "system" or position > end_of_first
    ]


def trl_row(row: Row) -> dict[str, Any]:
    payload = to_openai(_without_first_observation(row), row.meta)
    messages = [m for m in payload.get("messages", []) if m.get("role") == "system"]
    rest = [m for m in payload.get("messages", []) if m.get("role") != "system"]
    messages.append({"role": "user", "content": row.context()})
    messages.extend(rest)
    out: dict[str, Any] = {"messages": messages}
    if payload.get("tools"):
        out["tools"] = payload["tools"]
    return out | row.source


def sharegpt_row(row: Row) -> dict[str, Any]:
    payload = to_sharegpt(_without_first_observation(row), row.meta)
    turns = list(payload.get("conversations", []))
    while turns and turns[0].get("from") in ("human", "observation"):
        turns.pop(0)
    out: dict[str, Any] = {"conversations": [{"from": "human", "value": row.context()}, *turns]}
    for key in ("system", "tools"):
        if payload.get(key):
            out[key] = payload[key]
    return out | row.source


def flat_row(row: Row) -> dict[str, Any]:
    example = row.example
    return {
        "id": example.pk,
        **row.source,
        "instruction": example.instruction,
        "prompt_type": example.prompt_type,
        "prompt_version": example.prompt_version,
        "model": example.model,
        "num_actions": example.window.num_actions,
        "steps": example.window.steps,
        "license": example.trajectory.license,
    }


def dataset_info(file_name: str = "sharegpt.jsonl") -> dict[str, Any]:
    return {
        DATASET_NAME: {
            "file_name": file_name,
            "formatting": "sharegpt",
            "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
            "tags": {
                "role_tag": "from",
                "content_tag": "value",
                "user_tag": "human",
                "assistant_tag": "gpt",
                "observation_tag": "observation",
                "function_tag": "function_call",
                "system_tag": "system",
            },
        }
    }


def rows() -> Iterator[Row]:
    """Kept examples of trajectories in public() right now, in id order, in batches."""
    last = 0
    while True:
        batch = list(
            examples_public()
            .filter(pk__gt=last)
            .select_related("window", "trajectory")
            .order_by("pk")[:BATCH]
        )
        if not batch:
            return
        last = batch[-1].pk
        for example in batch:
            window = example.window
            trajectory = example.trajectory
            if window.redactions_hash != map_digest(trajectory.redactions):
                continue  # redacted again since the window was cut (the receiver drops it)
            redact = trajectory_selectors.redactor_for(trajectory, None)
            events = window_events(trajectory, window.start_position, window.end_position, redact)
            yield Row(example, events, _meta(trajectory, redact))


def release_example_rows(
    release: Release, *, first_id: int = 0, last_id: int | None = None
) -> Iterator[dict[str, dict[str, Any]]]:
    """The release's `examples_openai` and `examples_sharegpt` rows (release_configs) for
    the trajectories of one id range: kept examples whose source is one of the release's
    entries and in public() now, cut with the redactions the example was made with, in
    (trajectory, id) order. Text goes through the release's redactor (the contributor's own
    addresses too), like every other config of the release."""
    qs = (
        examples_public()
        .filter(trajectory__release_entries__release=release, trajectory_id__gte=first_id)
        .select_related("window", "trajectory", "trajectory__owner")
        .order_by("trajectory_id", "pk")
    )
    if last_id is not None:
        qs = qs.filter(trajectory_id__lte=last_id)
    redactors: dict[int, tuple[str, Redact]] = {}
    for example in qs.iterator(chunk_size=BATCH):
        trajectory = example.trajectory
        if trajectory.pk not in redactors:
            redactors.clear()  # id order: one trajectory's redactor at a time
            owner = trajectory.owner
            redactors[trajectory.pk] = (
                map_digest(trajectory.redactions),
                release_redactor(
                    {
                        "redactions": trajectory.redactions,
                        "contact_email": trajectory.contact_email,
                        "owner_email": owner.email if owner is not None else "",
                    }
                ),
            )
        digest, redact = redactors[trajectory.pk]
        window = example.window
        if window.redactions_hash != digest:
            continue  # redacted again since the window was cut: the receiver drops it soon
        events = window_events(trajectory, window.start_position, window.end_position, redact)
        row = Row(example, events, _meta(trajectory, redact), redact)
        trl, sharegpt = trl_row(row), sharegpt_row(row)
        common = {
            "id": example.pk,
            "source_id": trajectory.share_id,
            "window": [window.start_position, window.end_position],
            "instruction": redact(example.instruction),
            "prompt_type": example.prompt_type,
        }
        yield {
            "examples_openai": common
            | {
                "messages": [message_row(message) for message in trl["messages"]],
                "tools": orjson.dumps(trl["tools"]).decode() if trl.get("tools") else None,
                "license": trajectory.license,
            },
            "examples_sharegpt": common
            | {
                "conversations": sharegpt["conversations"],
                "system": sharegpt.get("system"),
                "tools": _text(sharegpt.get("tools")),
                "license": trajectory.license,
            },
        }


def _meta(trajectory: Trajectory, redact: Redact) -> dict[str, Any]:
    """What the exporters read besides the events, redacted like them: the metadata holds the
    tool definitions (OpenAI and ShareGPT files carry their schemas), which the rows repeat."""
    return {
        "metadata": redact_data(trajectory.metadata, redact),
        "source_format": trajectory.source_format,
    }


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def export_examples(
    *, out: Path, formats: tuple[str, ...] = FORMATS, on_row: Callable[[], None] | None = None
) -> dict[str, int]:
    """Write the chosen formats into `out`. Returns rows written per file."""
    out.mkdir(parents=True, exist_ok=True)
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(
            f"unknown export format {sorted(unknown)[0]!r}; known: {', '.join(FORMATS)}"
        )
    names = {"trl": "trl.jsonl", "sharegpt": "sharegpt.jsonl", "jsonl": "examples.jsonl"}
    temp = {fmt: out / f".{names[fmt]}.tmp" for fmt in formats if fmt in names}
    handles = {fmt: path.open("wb") for fmt, path in temp.items()}
    writer = None
    parquet_tmp = out / ".examples.parquet.tmp"
    batch: list[dict[str, Any]] = []
    count = 0
    try:
        if "parquet" in formats:
            writer = pq.ParquetWriter(parquet_tmp, PARQUET_SCHEMA, compression="zstd")
        for row in rows():
            count += 1
            if "trl" in handles:
                handles["trl"].write(orjson.dumps(trl_row(row)) + b"\n")
            if "sharegpt" in handles:
                handles["sharegpt"].write(orjson.dumps(sharegpt_row(row)) + b"\n")
            flat = flat_row(row)
            if "jsonl" in handles:
                handles["jsonl"].write(orjson.dumps(flat) + b"\n")
            if writer is not None:
                batch.append(flat | {"steps": json.dumps(flat["steps"], ensure_ascii=False)})
                if len(batch) >= BATCH:
                    writer.write_table(pa.Table.from_pylist(batch, schema=PARQUET_SCHEMA))
                    batch = []
            if on_row is not None:
                on_row()
        if writer is not None:
            if batch:
                writer.write_table(pa.Table.from_pylist(batch, schema=PARQUET_SCHEMA))
            writer.close()
            writer = None
            os.replace(parquet_tmp, out / "examples.parquet")
        for fmt, handle in handles.items():
            handle.close()
            os.replace(temp[fmt], out / names[fmt])
        if "sharegpt" in formats:
            (out / "dataset_info.json").write_text(json.dumps(dataset_info(), indent=2) + "\n")
    finally:
        for handle in handles.values():
            handle.close()
        if writer is not None:
            writer.close()
        for path in [*temp.values(), parquet_tmp]:
            path.unlink(missing_ok=True)
    return {"examples": count}
