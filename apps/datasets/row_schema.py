"""The row schema of a release, in one place: every config's columns, the pyarrow schema and the
`datasets` features written from them, and the rows built from a trajectory's redacted events.

Pure Python plus pyarrow (no Django): the builder hands in the trajectory's fields and its
events already redacted; this module only shapes them.

The `default` config extends the OpenHands feedback dataset (`version, feedback, permissions,
timestamp, trajectory`, where `trajectory` holds OpenHands V0 steps with `args` and `extras` as
JSON text) with `id, polarity, feedback_text, agent, model, source_format, num_events, license`
and an `images` column (`datasets.Image`: the bytes, and as path the sha256 the steps refer to as
"trajhub-image:<sha256>"). `no_images` is the same without images, the light download. `openai`
is TRL's conversational format (`messages`, `tools`) and `sharegpt` LLaMA-Factory's
(`conversations` with from/value, `system`, `tools`); `atif` is Harbor's Agent Trajectory
Interchange Format (`schema_version`, `agent`, `steps` with tool calls, results and metrics,
`final_metrics`), its free-form objects (arguments, extras, subagent trajectories) as JSON text;
all three come from the site's own exporters.
Other apps add configs of their own after these (apps.datasets.configs.register: apps.learn's
synthesized examples); their rows come from those apps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from apps.datasets.row_formats import (
    ADP_ITEM,
    ATIF_FINAL_METRICS,
    ATIF_STEP,
    adp_row,
    atif_row,
)
from apps.datasets.row_formats import json_cell as _json
from apps.datasets.row_formats import text_cell as _text
from apps.trajectories.exporters import to_adp, to_atif, to_openai, to_openhands, to_sharegpt
from apps.trajectories.exporters.common import Conversation, conversation
from apps.trajectories.importers.base import CanonicalEvent

# --- column types: a tiny description both pyarrow and `datasets` features are written from ----

Type = Any  # "string" | "int64" | "float64" | "bool" | "image" | [Type] (a list) | {name: Type}

STEP: dict[str, Type] = {
    "id": "int64",
    "timestamp": "string",
    "source": "string",
    "message": "string",
    "action": "string",
    "observation": "string",
    "content": "string",
    "args": "string",
    "extras": "string",
}
MESSAGE: dict[str, Type] = {
    "role": "string",
    "content": "string",
    "tool_calls": [
        {
            "id": "string",
            "type": "string",
            "function": {"name": "string", "arguments": "string"},
        }
    ],
    "tool_call_id": "string",
}

_DEFAULT: dict[str, Type] = {
    "id": "string",
    "version": "string",
    "feedback": "string",
    "permissions": "string",
    "timestamp": "string",
    "trajectory": [STEP],
    "polarity": "string",
    "feedback_text": "string",
    "agent": "string",
    "model": "string",
    "source_format": "string",
    "num_events": "int64",
    "license": "string",
}
CONFIGS: dict[str, dict[str, Type]] = {
    "default": {**_DEFAULT, "images": ["image"]},
    "no_images": _DEFAULT,
    "openai": {"id": "string", "messages": [MESSAGE], "tools": "string", "license": "string"},
    "sharegpt": {
        "id": "string",
        "conversations": [{"from": "string", "value": "string"}],
        "system": "string",
        "tools": "string",
        "license": "string",
    },
    "atif": {
        "id": "string",
        "schema_version": "string",
        "agent": {
            "name": "string",
            "version": "string",
            "model_name": "string",
            "tool_definitions": "string",
        },
        "steps": [ATIF_STEP],
        "final_metrics": ATIF_FINAL_METRICS,
        "subagent_trajectories": "string",
        "license": "string",
    },
    "adp": {
        "id": "string",
        "schema_version": "string",
        "content": [ADP_ITEM],
        "details": "string",
        "license": "string",
    },
}
# The configs built here, from whole trajectories; the ones other apps register
# (apps.datasets.configs.register) follow them in CONFIGS, CONFIG_DIRS and CONFIG_DESCRIPTIONS.
TRAJECTORY_CONFIGS = tuple(CONFIGS)
# Top-level columns of free text (tool definitions, system prompts, feedback, and those a
# registered config names, such as instructions): no Parquet statistics for them
# (parquet.writer_options).
FREE_TEXT = {"feedback_text", "system", "tools", "subagent_trajectories"}
# Where each config's shards go, as `datasets.push_to_hub` lays them out.
CONFIG_DIRS = {
    "default": "data",
    "no_images": "no_images",
    "openai": "openai",
    "sharegpt": "sharegpt",
    "atif": "atif",
    "adp": "adp",
}
CONFIG_DESCRIPTIONS = {
    "default": "every column, with the screenshots and plots (`images`; those withheld are "
    "1x1 placeholders: see Screenshots and plots)",
    "no_images": "the same rows without images: the light download",
    "openai": "OpenAI messages with tool calls (TRL's conversational format: `messages`, `tools`)",
    "sharegpt": "ShareGPT conversations (LLaMA-Factory: `from`/`value`, `function_call`, `observation`)",
    "atif": "Harbor's Agent Trajectory Interchange Format (ATIF-v1.7: `agent`, `steps` with "
    "`tool_calls`, `observation.results` linked by `source_call_id`, `reasoning_content` and "
    "`metrics`, `final_metrics`); tool arguments, step extras and embedded subagent "
    "trajectories are JSON text",
    "adp": "Agent Data Protocol standardized trajectories (neulab/agent-data-protocol, schema "
    "1.3.1: `content` of actions and observations with `tool_call_id` links); each content item "
    "has every ADP field, null where its `class_` has none, and `kwargs` and `details` are JSON "
    "text (`apps.datasets.row_formats.adp_from_row` gives back the ADP document)",
}

_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _arrow(kind: Type) -> pa.DataType:
    if kind == "string":
        return pa.string()
    if kind == "int64":
        return pa.int64()
    if kind == "float64":
        return pa.float64()
    if kind == "bool":
        return pa.bool_()
    if kind == "image":
        return _IMAGE
    if isinstance(kind, list):
        return pa.list_(_arrow(kind[0]))
    return pa.struct([(name, _arrow(sub)) for name, sub in kind.items()])


def _feature(kind: Type) -> dict:
    """`datasets.Features.to_dict()` form (what `datasets` keeps in the schema metadata)."""
    if kind == "image":
        return {"_type": "Image"}
    if isinstance(kind, str):
        return {"dtype": kind, "_type": "Value"}
    if isinstance(kind, list):
        return {"feature": _feature(kind[0]), "_type": "List"}
    return {name: _feature(sub) for name, sub in kind.items()}


def _card_feature(name: str, kind: Type) -> dict:
    """The dataset card's `dataset_info.features` form of one column."""
    if kind == "image":
        return {"name": name, "dtype": "image"}
    if isinstance(kind, str):
        return {"name": name, "dtype": kind}
    if isinstance(kind, list):
        inner = kind[0]
        if inner == "image":
            return {"name": name, "list": "image"}
        if isinstance(inner, str):
            return {"name": name, "list": inner}
        if isinstance(inner, list):
            return {"name": name, "list": [_card_feature("item", inner)]}
        return {"name": name, "list": [_card_feature(k, v) for k, v in inner.items()]}
    return {"name": name, "struct": [_card_feature(k, v) for k, v in kind.items()]}


def arrow_schema(config: str) -> pa.Schema:
    """The config's pyarrow schema, with the `datasets` features in its metadata (so that
    `datasets` decodes `images` as Image even without the card)."""
    columns = CONFIGS[config]
    features = {name: _feature(kind) for name, kind in columns.items()}
    metadata = {"huggingface": json.dumps({"info": {"features": features}})}
    return pa.schema([(name, _arrow(kind)) for name, kind in columns.items()], metadata=metadata)


def card_features(config: str) -> list[dict]:
    return [_card_feature(name, kind) for name, kind in CONFIGS[config].items()]


def add_config(
    name: str,
    columns: dict[str, Type],
    *,
    directory: str,
    description: str,
    free_text: frozenset[str] = frozenset(),
) -> None:
    """One more config after the trajectory configs (apps.datasets.configs.register calls it):
    its columns, folder and line on the card, and its columns of free text. Adding a name again
    replaces it in place."""
    if name in TRAJECTORY_CONFIGS:
        raise ValueError(f"{name!r} is a trajectory config of every release")
    CONFIGS[name] = columns
    CONFIG_DIRS[name] = directory
    CONFIG_DESCRIPTIONS[name] = description
    FREE_TEXT.update(free_text)


# --- rows -----------------------------------------------------------------------------------


@dataclass
class TrajectoryFields:
    """What a row takes from the trajectory itself, already redacted."""

    share_id: str
    feedback_version: str
    polarity: str
    feedback_text: str
    agent: str
    model: str
    source_format: str
    num_events: int
    license: str
    timestamp: str
    tools_meta: Mapping[str, Any]  # the exporters' `meta` (metadata with tool definitions)
    agent_version: str = ""


# Top-level fields of an OpenHands event that the step columns do not name: kept inside
# args (actions) or extras (observations) so that nothing the event said is lost.
_STEP_KEYS = {"id", "timestamp", "source", "message", "action", "observation", "content"}
_NAMED_KEYS = frozenset(_STEP_KEYS | {"args", "extras"})


def step_row(event: dict) -> dict:
    get = event.get
    action = get("action")
    args = get("args")
    extras = get("extras")
    if not isinstance(args, dict):
        args = None
    if not isinstance(extras, dict):
        extras = None
    # Most events have no other keys (a subset test allocates nothing); when they do, in the
    # event's own order, so that the JSON is the same in every process.
    if not _NAMED_KEYS.issuperset(event):
        rest = {k: v for k, v in event.items() if k not in _NAMED_KEYS}
        if isinstance(action, str):
            args = {**rest, **(args or {})}
        else:
            extras = {**rest, **(extras or {})}
    ident = get("id")
    if ident.__class__ is not int:  # bool is an int subclass, and no step id
        ident = ident if isinstance(ident, int) and not isinstance(ident, bool) else None
    # 200,000 steps at 10,000 trajectories: plain strings (nearly all) pass without a call.
    timestamp, source, message = get("timestamp"), get("source"), get("message")
    observation, content = get("observation"), get("content")
    return {
        "id": ident,
        "timestamp": timestamp
        if timestamp is None or timestamp.__class__ is str
        else _text(timestamp),
        "source": source if source is None or source.__class__ is str else _text(source),
        "message": message if message is None or message.__class__ is str else _text(message),
        "action": action if action is None or action.__class__ is str else _text(action),
        "observation": (
            observation
            if observation is None or observation.__class__ is str
            else _text(observation)
        ),
        "content": content if content is None or content.__class__ is str else _text(content),
        "args": _json(args) if args is not None else None,
        "extras": _json(extras) if extras is not None else None,
    }


def message_row(message: dict) -> dict:
    content = message.get("content")
    if isinstance(content, list):
        # Content parts (a user message with images): the text parts; images are in `default`.
        content = "\n\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    calls = message.get("tool_calls")
    return {
        "role": message.get("role"),
        "content": _text(content),
        "tool_calls": calls if isinstance(calls, list) else None,
        "tool_call_id": message.get("tool_call_id"),
    }


_FEEDBACK = {"positive": "positive", "negative": "negative"}


def rows(
    fields: TrajectoryFields,
    events: list[CanonicalEvent],
    images: list[dict],
    talk: Conversation | None = None,
) -> dict[str, dict]:
    """One row per config for one trajectory. `images`: [{"bytes", "path"}], sorted; `talk`:
    conversation(events), when the caller has it (it hands it to other configs too)."""
    base = {
        "id": fields.share_id,
        "version": fields.feedback_version,
        "feedback": _FEEDBACK.get(fields.polarity, ""),
        "permissions": "public",
        "timestamp": fields.timestamp,
        "trajectory": [step_row(event) for event in to_openhands(events)],
        "polarity": fields.polarity,
        "feedback_text": fields.feedback_text,
        "agent": fields.agent,
        "model": fields.model,
        "source_format": fields.source_format,
        "num_events": fields.num_events,
        "license": fields.license,
    }
    meta = dict(fields.tools_meta)
    if talk is None:
        talk = conversation(events)  # read, not changed, by both chat formats
    openai = to_openai(events, meta, talk)
    sharegpt = to_sharegpt(events, meta, talk)
    adp = to_adp(
        events,
        {
            **meta,
            "id": fields.share_id,
            "agent": fields.agent,
            "model": fields.model,
            "source_format": fields.source_format,
        },
    )
    return {
        "default": {**base, "images": images},
        "no_images": base,
        "openai": {
            "id": fields.share_id,
            "messages": [message_row(message) for message in openai["messages"]],
            "tools": _json(openai["tools"]) if openai.get("tools") else None,
            "license": fields.license,
        },
        "sharegpt": {
            "id": fields.share_id,
            "conversations": sharegpt["conversations"],
            "system": sharegpt.get("system"),
            "tools": sharegpt.get("tools"),
            "license": fields.license,
        },
        "atif": atif_row(
            to_atif(
                events,
                {
                    **meta,
                    "id": fields.share_id,
                    "agent": fields.agent,
                    "model": fields.model,
                    "agent_version": fields.agent_version,
                    "license": fields.license,
                },
            ),
            share_id=fields.share_id,
            license=fields.license,
        ),
        "adp": adp_row(adp, share_id=fields.share_id, license=fields.license),
    }


def row_bytes(row: dict) -> int:
    """About what a `default` / `no_images` row takes in Arrow memory, images apart: its
    steps' text columns dominate (a full walk of the row cost a twentieth of the build)."""
    return 64 * len(row["trajectory"]) + sum(
        len(step["message"] or "")
        + len(step["content"] or "")
        + len(step["args"] or "")
        + len(step["extras"] or "")
        for step in row["trajectory"]
    )
