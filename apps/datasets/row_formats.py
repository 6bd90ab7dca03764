"""Rows of the two interchange configs of a release, `atif` (Harbor's ATIF) and `adp` (the
Agent Data Protocol): their column types and how an exported document becomes a row (and, for
ADP, a row a document again). row_schema.py holds the other configs and calls these.

Free-form objects (tool arguments, extras, ADP kwargs and details) are JSON text: Parquet wants
one type per column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from apps.trajectories.exporters.adp_schema import FIELDS as ADP_FIELDS

Type = Any  # as row_schema.Type: "string" | "int64" | "float64" | [Type] | {name: Type}

# Harbor's ATIF step (exporters/atif.py); objects of no fixed shape as JSON text.
ATIF_STEP: dict[str, Type] = {
    "step_id": "int64",
    "timestamp": "string",
    "source": "string",
    "model_name": "string",
    "message": "string",
    "reasoning_content": "string",
    "tool_calls": [{"tool_call_id": "string", "function_name": "string", "arguments": "string"}],
    "observation": {
        "results": [
            {"source_call_id": "string", "content": "string", "subagent_trajectory_ref": "string"}
        ]
    },
    "metrics": {
        "prompt_tokens": "int64",
        "completion_tokens": "int64",
        "cached_tokens": "int64",
        "cost_usd": "float64",
    },
    "extra": "string",
}
ATIF_FINAL_METRICS: dict[str, Type] = {
    "total_prompt_tokens": "int64",
    "total_completion_tokens": "int64",
    "total_cached_tokens": "int64",
    "total_cost_usd": "float64",
    "total_steps": "int64",
}

# One ADP content item (exporters/adp.py): every field of every class, null where the item's
# class has none; `kwargs`, `annotations` and `image_observation` (objects) as JSON text.
ADP_ITEM: dict[str, Type] = {
    "class_": "string",
    "content": "string",
    "source": "string",
    "name": "string",
    "language": "string",
    "description": "string",
    "function": "string",
    "kwargs": "string",
    "function_call": "string",
    "reasoning_content": "string",
    "reward": "float64",
    "tool_call_id": "string",
    "html": "string",
    "axtree": "string",
    "url": "string",
    "annotations": "string",
    "image_observation": "string",
    "viewport_size": ["int64"],
}
ADP_JSON_FIELDS = ("kwargs", "annotations", "image_observation")


def json_cell(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits: the standard library writes them exactly
        return json.dumps(value, ensure_ascii=False)


def text_cell(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json_cell(value)


_json = json_cell
_text = text_cell


def atif_row(doc: dict, *, share_id: str, license: str) -> dict:
    """The atif export of a trajectory (exporters/atif.py) as one row (ATIF_STEP's columns)."""
    agent = doc["agent"]
    subagents = doc.get("subagent_trajectories")
    return {
        "id": share_id,
        "schema_version": doc["schema_version"],
        "agent": {
            "name": agent["name"],
            "version": agent["version"],
            "model_name": agent.get("model_name"),
            "tool_definitions": _json(agent["tool_definitions"])
            if agent.get("tool_definitions")
            else None,
        },
        "steps": [_atif_step(step) for step in doc["steps"]],
        "final_metrics": {key: doc["final_metrics"].get(key) for key in ATIF_FINAL_METRICS},
        "subagent_trajectories": _json(subagents) if subagents else None,
        "license": license,
    }


def _atif_step(step: dict) -> dict:
    observation = step.get("observation")
    metrics = step.get("metrics")
    return {
        "step_id": step["step_id"],
        "timestamp": step.get("timestamp"),
        "source": step["source"],
        "model_name": step.get("model_name"),
        "message": _text(step.get("message")),
        "reasoning_content": step.get("reasoning_content"),
        "tool_calls": [
            {
                "tool_call_id": call["tool_call_id"],
                "function_name": call["function_name"],
                "arguments": _json(call["arguments"]),
            }
            for call in step["tool_calls"]
        ]
        if step.get("tool_calls")
        else None,
        "observation": {
            "results": [
                {
                    "source_call_id": result.get("source_call_id"),
                    "content": _text(result.get("content")),
                    "subagent_trajectory_ref": _json(result["subagent_trajectory_ref"])
                    if result.get("subagent_trajectory_ref")
                    else None,
                }
                for result in observation["results"]
            ]
        }
        if observation
        else None,
        "metrics": {
            key: (float(metrics[key]) if key == "cost_usd" else metrics[key])
            if metrics.get(key) is not None
            else None
            for key in ATIF_STEP["metrics"]
        }
        if metrics
        else None,
        "extra": _json(step["extra"]) if step.get("extra") else None,
    }


def adp_row(doc: dict, *, share_id: str, license: str) -> dict:
    """The adp export of a trajectory (exporters/adp.py) as one row (ADP_ITEM's columns)."""
    return {
        "id": share_id,
        "schema_version": doc["schema_version"],
        "content": [adp_item_row(item) for item in doc["content"]],
        "details": _json(doc["details"]),
        "license": license,
    }


def adp_item_row(item: dict) -> dict:
    """An ADP content item as an `adp` row's item (ADP_ITEM: every field, objects as JSON)."""
    row: dict[str, Any] = {}
    for name in ADP_ITEM:
        value = item.get(name)
        if name in ADP_JSON_FIELDS:
            row[name] = None if value is None else _json(value)
        elif name == "reward":
            row[name] = float(value) if isinstance(value, (int, float)) else None
        elif name == "viewport_size":
            row[name] = list(value) if isinstance(value, (list, tuple)) else None
        else:
            row[name] = _text(value)
    return row


def adp_from_row(row: Mapping[str, Any]) -> dict:
    """The ADP document of an `adp` row (as `datasets` loads it): each item with the fields of
    its class only, the optional ones that are null left out, the JSON text parsed."""
    content = []
    for item in row["content"]:
        fields = ADP_FIELDS.get(item["class_"], {})
        kept: dict[str, Any] = {"class_": item["class_"]}
        for name, (required, _) in fields.items():
            value = item.get(name)
            if name in ADP_JSON_FIELDS and value is not None:
                value = orjson.loads(value)
            if value is not None or required:
                kept[name] = value
        content.append(kept)
    details = orjson.loads(row["details"]) if row.get("details") else {}
    return {
        "schema_version": row["schema_version"],
        "id": row["id"],
        "content": content,
        "details": details,
    }
