"""A canary in every string field of an upload, for the canary crawl (issue 20).

`plant(data, new_secret)` walks a sample file (one JSON document or JSON Lines) and appends a
fresh secret to every string value, wherever it sits: messages, tool inputs and results,
metadata, and whatever field a format adds later (Claude Code's `toolUseResult`, `cwd` and
`gitBranch`, Codex's `turn_context`, ...). A string that holds JSON (OpenAI's tool-call
`arguments`) is planted inside and written back as JSON. Fields join by existing: nobody lists
them.

The only strings left alone are those whose change would change what the file *is* to its
importer: the records, events, sources, kinds and types it reads (an event type, a role, a
record's `type`). They are found, not listed: planting a field alone is tried against the
importer, and a field whose canary changes that outline is left as it was. Image data
(`data:` URLs) is left alone too: it is not text, and OCR is tested on its own.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import orjson

from apps.trajectories.importers import FormatError, decode_json, parse


def _outline(data: bytes) -> Any:
    """What the importer makes of a file, without its text: the format, and each trajectory's
    events as (source, kind, type). None when it refuses the file."""
    try:
        result = parse(data)
    except FormatError:
        return None
    if result.errors:
        return None
    return (
        result.format,
        [[(e.source, e.kind, e.type) for e in t.events] for t in result.trajectories],
    )


def _record_name(record: Any) -> str:
    kind = record.get("type") if isinstance(record, dict) else None
    return f"[{kind}]" if isinstance(kind, str) else "[]"


def _walk(value: Any, path: str, visit: Callable[[str, str], str | None]) -> Any:
    """`value` with each string replaced by visit(path, string) (None: kept)."""
    if isinstance(value, dict):
        return {key: _walk(item, f"{path}.{key}", visit) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, path, visit) for item in value]
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) > 1:
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            if isinstance(inner, dict | list):
                return json.dumps(_walk(inner, f"{path}<json>", visit))
        if value.startswith("data:"):
            return value
        planted = visit(path, value)
        return value if planted is None else planted
    return value


def _rewrite(data: bytes, visit: Callable[[str, str], str | None]) -> bytes:
    if data[:4] == b"PK\x03\x04":
        return _rewrite_zip(data, visit)
    value, lines = decode_json(data)
    if not lines:
        return orjson.dumps(_walk(value, "", visit))
    out = []
    for _number, record in value:
        out.append(orjson.dumps(_walk(record, _record_name(record), visit)))
    return b"\n".join(out) + b"\n"


def _rewrite_zip(data: bytes, visit: Callable[[str, str], str | None]) -> bytes:
    """An archive (a Claude Code session folder, Inspect's `.eval`): each JSON member rewritten,
    its paths under the member's name; other members as they were."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            member = source.read(info)
            if info.filename.endswith((".json", ".jsonl")):

                def inside(path: str, value: str, name: str = info.filename) -> str | None:
                    return visit(f"{name}:{path}", value)

                member = _rewrite(member, inside)
            target.writestr(info, member, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def string_paths(data: bytes) -> set[str]:
    """The path of every string field of the file (keys, no list indexes)."""
    found: set[str] = set()

    def visit(path: str, value: str) -> None:
        found.add(path)
        return None

    _rewrite(data, visit)
    return found


def plant(data: bytes, new_secret: Callable[[], str]) -> tuple[bytes, set[str], set[str]]:
    """(the file with a secret appended to every string field it can hold one, the paths
    planted, the paths left alone because planting them changes the file's outline)."""
    baseline = _outline(data)
    assert baseline is not None, "the sample itself does not import"
    paths = string_paths(data)

    def planted(only: set[str] | None, skip: set[str], secret: Callable[[], str]) -> bytes:
        def visit(path: str, value: str) -> str | None:
            if path in skip or (only is not None and path not in only):
                return None
            return f"{value} {secret()}"

        return _rewrite(data, visit)

    dummy = iter(range(10**9))

    def fake() -> str:
        return f"ghp_{next(dummy):036d}"

    # Each field alone first (one parse each), then the rest together, adding one at a time,
    # for fields that change the outline only together (OpenHands V1's `kind`s).
    kept = {path for path in sorted(paths) if _outline(planted({path}, set(), fake)) == baseline}
    if _outline(planted(kept, set(), fake)) != baseline:
        together: set[str] = set()
        for path in sorted(kept):
            if _outline(planted(together | {path}, set(), fake)) == baseline:
                together.add(path)
        kept = together
    left_alone = paths - kept
    result = planted(None, left_alone, new_secret)
    assert _outline(result) == baseline, (
        "planting every field but these changes the file's outline: "
        + ", ".join(sorted(left_alone))
    )
    return result, paths - left_alone, left_alone
