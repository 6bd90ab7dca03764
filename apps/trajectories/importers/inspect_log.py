"""Inspect AI eval logs: the `.json` log and the `.eval` log (a zip of the same parts).

A log is `{version, status, eval{task, model, packages, dataset}, plan, results, stats,
samples[]}`; the `.eval` zip holds `header.json` (all but the samples; `_journal/start.json`
while the run is under way) and one `samples/<id>_epoch_<n>.json` per sample and epoch. Each
sample (and epoch) is one trajectory: `unpack` cuts a log into one-sample logs, so that each
is stored, re-imported and downloaded as the Inspect log it came from, with its own sample.

A sample's `messages` are chat messages: `system` -> a system event; `user` -> a user message;
`assistant` -> its `reasoning` parts as thinking, then one action per `tool_calls` entry
(`{id, function, arguments}`; the text is the first call's thought) or, without calls, an
agent message; `tool` -> an observation caused by its `tool_call_id` (`error` marks it
failed). Long strings the log moved to `attachments` (`attachment://<hash>`) are put back.
The task, model, sample id, epoch, target, the sample's `scores` (read by outcome.py), token
usage and times go to the metadata. The `events` transcript repeats the messages and is not
read. Pure Python, no Django.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    Unpacked,
    as_text,
    join_text,
    json_type,
    link_causes,
    number,
    small_value,
    text_of,
    title_from,
)
from apps.trajectories.importers.openai_messages import call_text

NAME = "inspect_log"
LABEL = "Inspect AI eval log"

SAMPLE_ENTRY = re.compile(r"^samples/[^/]+\.json$")
ATTACHMENT = "attachment://"


def is_log(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("eval"), dict)
        and isinstance(doc["eval"].get("task"), str)
        and "version" in doc
        and ("samples" in doc or "status" in doc or "plan" in doc)
    )


def detect(doc: Any) -> bool:
    """A log of one sample (what `unpack` makes of a log of many)."""
    return is_log(doc) and isinstance(doc.get("samples"), list) and len(doc["samples"]) == 1


def unpack(doc: Any) -> Unpacked | None:
    """A log's samples, each as a log of its own; None for anything that is not a log."""
    if not is_log(doc):
        return None
    samples = doc.get("samples")
    if not isinstance(samples, list) or not samples:
        status = text_of(doc.get("status")) or "unknown"
        raise FormatError(
            f"the Inspect log holds no samples (status: {status}); it was written without "
            "them (--no-log-samples) or before the first sample ended",
            "samples",
        )
    envelope = {key: value for key, value in doc.items() if key != "samples"}
    return Unpacked(
        [{**envelope, "samples": [sample]} for sample in samples],
        [f"samples[{index}]" for index in range(len(samples))],
    )


def from_archive(entries: list[Any], decode: Any) -> Unpacked | None:
    """An `.eval` zip: its header and samples as one-sample logs (labelled by entry name)."""
    by_name = {entry.name: entry for entry in entries}
    head = by_name.get("header.json") or by_name.get("_journal/start.json")
    if head is None:
        return None
    header = _json_entry(head, decode)
    if not is_log({**header, "samples": []}):
        return None
    envelope = {key: value for key, value in header.items() if key != "samples"}
    records, labels = [], []
    for entry in entries:
        if SAMPLE_ENTRY.match(entry.name):
            records.append({**envelope, "samples": [_json_entry(entry, decode)]})
            labels.append(entry.name)
    # Inspect writes samples as they finish: put them in the dataset's order, epoch by epoch.
    dataset = envelope["eval"].get("dataset")
    order = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    places = {str(ident): n for n, ident in enumerate(order)} if isinstance(order, list) else {}

    def place(pair: tuple[dict[str, Any], str]) -> tuple[float, float, str]:
        sample = pair[0]["samples"][0]
        epoch = number(sample.get("epoch")) if isinstance(sample, dict) else None
        ident = str(sample.get("id")) if isinstance(sample, dict) else ""
        return (epoch or 0, places.get(ident, len(places)), pair[1])

    pairs = sorted(zip(records, labels, strict=True), key=place)
    records, labels = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    if not records:
        raise FormatError(
            "the .eval log holds no samples (it was written without them, or before the "
            "first sample ended)",
            f"entry {head.name!r}",
        )
    return Unpacked(records, labels)


def _json_entry(entry: Any, decode: Any) -> dict[str, Any]:
    where = f"entry {entry.name!r}"
    try:
        value, lines = decode(entry.data)
    except FormatError as exc:
        raise exc.at(where) from None
    if lines or not isinstance(value, dict):
        raise FormatError("expected one JSON object", where)
    return value


def convert(doc: Any) -> CanonicalTrajectory:
    if not detect(doc):
        raise FormatError("expected an Inspect AI eval log with one sample")
    log_eval = doc["eval"]
    sample = doc["samples"][0]
    if not isinstance(sample, dict):
        raise FormatError(f"the sample is {json_type(sample)}, not an object")
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise FormatError("the sample has no messages list", "messages")
    attachments = sample.get("attachments")
    attachments = attachments if isinstance(attachments, dict) else {}
    events: list[CanonicalEvent] = []
    calls: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise FormatError(f"a message is {json_type(message)}, not an object", where)
        message = _restore(message, attachments)
        _message_events(events, calls, message, index, where)
    link_causes(events)
    model = text_of(log_eval.get("model"))
    packages = log_eval.get("packages")
    version = text_of(packages.get("inspect_ai")) if isinstance(packages, dict) else ""
    prompt = next((e.text for e in events if e.source == "user" and e.kind == "message"), "")
    return CanonicalTrajectory(
        source_format=NAME,
        events=events,
        title=title_from(prompt or text_of(log_eval.get("task"))),
        agent="Inspect AI",
        model=model,
        agent_version=version,
        metadata=_metadata(doc, sample),
    )


def _restore(value: Any, attachments: dict[str, Any]) -> Any:
    """The message with `attachment://<hash>` strings replaced by what they stand for."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [_restore(item, attachments) for item in value]
    if isinstance(value, dict):
        return {key: _restore(item, attachments) for key, item in value.items()}
    return value


def _message_events(
    events: list[CanonicalEvent], calls: dict[str, str], message: dict, index: int, where: str
) -> None:
    role = message.get("role")
    content = message.get("content")
    text = _text(content)
    ident = text_of(message.get("id")) or str(index)
    if role == "system":
        events.append(CanonicalEvent("agent", "system", "system", text, message, ident))
    elif role == "user":
        events.append(CanonicalEvent("user", "message", "message", text, message, ident))
    elif role == "assistant":
        for number_, thinking in enumerate(_reasoning(content)):
            data = {"role": "assistant", "reasoning": True, "message": index}
            events.append(
                CanonicalEvent(
                    "agent", "message", "thinking", thinking, data, f"{ident}.r{number_}"
                )
            )
        tool_calls = message.get("tool_calls")
        if tool_calls is not None and not isinstance(tool_calls, list):
            raise FormatError(f"'tool_calls' is {json_type(tool_calls)}, expected an array", where)
        if not tool_calls:
            events.append(CanonicalEvent("agent", "message", "message", text, message, ident))
            return
        for number_, call in enumerate(tool_calls):
            events.append(_action(calls, message, call, index, number_, text, where))
    elif role == "tool":
        call = text_of(message.get("tool_call_id"))
        name = calls.get(call) or text_of(message.get("function")) or "tool"
        data = dict(message)
        error = message.get("error")
        if isinstance(error, dict) and error:
            data["is_error"] = True
            text = join_text(text, text_of(error.get("message")))
        events.append(
            CanonicalEvent("environment", "observation", name, text, data, ident, None, call)
        )
    else:
        raise FormatError(
            f"unknown role {role!r} (expected system, user, assistant or tool)", where
        )


def _action(
    calls: dict[str, str], message: dict, call: Any, index: int, number_: int, text: str, where: str
) -> CanonicalEvent:
    if not isinstance(call, dict):
        raise FormatError(f"a tool call is {json_type(call)}, not an object", where)
    function = call.get("function")
    name = text_of(function.get("name")) if isinstance(function, dict) else text_of(function)
    if not name:
        raise FormatError("a tool call has no function name", where)
    arguments = call.get("arguments")
    if isinstance(function, dict) and arguments is None:
        arguments = function.get("arguments")
    ident = text_of(call.get("id")) or f"{index}.{number_}"
    calls[ident] = name
    tool_call = {
        "id": ident,
        "type": "function",
        "function": {"name": name, "arguments": arguments if arguments is not None else {}},
    }
    data: dict[str, Any] = {"role": "assistant", "tool_call": tool_call, "message": index}
    if number_ == 0:
        data["content"] = message.get("content")
        data.update(
            (key, value)
            for key, value in message.items()
            if key not in ("role", "content", "tool_calls")
        )
    thought = text if number_ == 0 else ""
    return CanonicalEvent(
        "agent", "action", name, join_text(thought, call_text(name, _dumps(arguments))), data, ident
    )


def _dumps(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value if value is not None else {}).decode()
    except TypeError:
        return str(value)


def _text(content: Any) -> str:
    """The text parts of a message (images as "[image]"); reasoning parts are read apart."""
    if isinstance(content, list):
        content = [
            part
            for part in content
            if not (isinstance(part, dict) and part.get("type") == "reasoning")
        ]
    return as_text(content)


def _reasoning(content: Any) -> list[str]:
    """The model's reasoning parts (their summary where the reasoning itself is redacted)."""
    found = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "reasoning":
            text = text_of(part.get("reasoning"))
            if part.get("redacted") is True or not text.strip():
                text = text_of(part.get("summary"))
            if text.strip():
                found.append(text)
    return found


def _metadata(doc: dict[str, Any], sample: dict[str, Any]) -> dict[str, Any]:
    log_eval = doc["eval"]
    task = text_of(log_eval.get("task"))
    sample_id = sample.get("id")
    metadata: dict[str, Any] = {"task": task}
    if isinstance(sample_id, (str, int)) and not isinstance(sample_id, bool):
        metadata["sample_id"] = sample_id
        metadata["instance_id"] = f"{task}/{sample_id}"
    if number(sample.get("epoch")) is not None:
        metadata["epoch"] = sample["epoch"]
    for key in ("target", "scores"):
        value = small_value(sample.get(key), max_chars=20_000, depth=4)
        if value not in (None, {}, [], ""):
            metadata[key] = value
    dataset = log_eval.get("dataset")
    if isinstance(dataset, dict) and text_of(dataset.get("name")):
        metadata["dataset"] = dataset["name"]
    if text_of(doc.get("status")):
        metadata["eval_status"] = doc["status"]
    usage = sample.get("model_usage")
    if isinstance(usage, dict) and usage:
        metadata["model_usage"] = small_value(usage, depth=3)
        totals = [
            number(item.get("total_tokens")) for item in usage.values() if isinstance(item, dict)
        ]
        if totals and all(isinstance(total, int) for total in totals):
            metadata["total_tokens"] = sum(total for total in totals if isinstance(total, int))
    for key in ("started_at", "completed_at", "total_time", "working_time"):
        if isinstance(sample.get(key), (str, int, float)) and not isinstance(sample[key], bool):
            metadata[key] = sample[key]
    error = sample.get("error")
    if isinstance(error, dict) and text_of(error.get("message")):
        metadata["error"] = error["message"]
    limit = sample.get("limit")
    if isinstance(limit, dict) and limit:
        metadata["limit"] = small_value(limit)
    return metadata
