"""Plain helpers over an event's values for the cards: display text, stored-image references,
JSON tidied for showing (long strings capped, inline images as a note, secrets hidden)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from apps.trajectories.dropped import IMAGE_REMOVED, IMAGE_WITHHELD
from apps.trajectories.importers.base import json_text
from apps.trajectories.rendering import text as t

SECRET_KEY_NAMES = re.compile(
    r"(?:^|_)(?:api_?key|apikey|secret|password|passwd|access_?token|auth_?token|token|jwt)$",
    re.IGNORECASE,
)
DATA_URL = re.compile(r"data:image/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]{32,}", re.IGNORECASE)
STRING_CAP = 50_000


# Any JSON value as display text (strings as they are, the rest as compact JSON): the
# importers' reading, so that the page shows what search and exports read.
as_str = json_text


# What visitors see where a moderator dropped an image (our words, no event text).
WITHHELD_HTML = (
    '<div class="shot-removed" role="img" aria-label="Image not shown until a moderator checks it">'
    "<span>Image not shown until a moderator checks it</span></div>"
)
REMOVED_HTML = (
    '<div class="shot-removed" role="img" aria-label="Image removed by a moderator">'
    "<span>Image removed by a moderator</span></div>"
)


def image_refs(*values: Any) -> tuple[list[str], int]:
    """(sha256 of every stored-image reference, count of images that were not stored). An image
    a moderator removed is listed as IMAGE_REMOVED, one withheld as IMAGE_WITHHELD, once per
    occurrence."""
    found: list[str] = []
    missing = 0
    stack = list(values)
    while stack:
        value = stack.pop(0)
        if isinstance(value, str):
            match = t.IMAGE_REF.match(value)
            if match:
                if match.group(1) not in found:
                    found.append(match.group(1))
            elif value in (IMAGE_REMOVED, IMAGE_WITHHELD):
                found.append(value)
            elif value.startswith("data:image/"):
                missing += 1
        elif isinstance(value, list):
            stack[0:0] = value
        elif isinstance(value, dict):
            for key in ("url", "image_url", "data", "source"):
                if key in value:
                    stack.insert(0, value[key])
    return found, missing


def parse_json_string(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def humanize(name: str) -> str:
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name or "event").replace("_", " ").strip()
    return words[:1].upper() + words[1:].lower() if words else "Event"


def tidy_for_display(value: Any, *, hide_secrets: bool, depth: int = 0) -> Any:
    """A JSON value fit to show: long strings capped, inline images as a note, secrets hidden."""
    if depth > 60:
        return "…"
    if isinstance(value, str):
        if "data:image/" in value:
            value = DATA_URL.sub(
                lambda m: f"[inline image, {len(m.group(0)) * 3 // 4:,} bytes]", value
            )
        if len(value) > STRING_CAP:
            value = value[:STRING_CAP] + f"… [{len(value) - STRING_CAP:,} more characters]"
        return value
    if isinstance(value, list):
        return [
            tidy_for_display(item, hide_secrets=hide_secrets, depth=depth + 1) for item in value
        ]
    if isinstance(value, dict):
        tidy = {}
        for key, item in value.items():
            if (
                hide_secrets
                and isinstance(item, str)
                and len(item) >= 8
                and SECRET_KEY_NAMES.search(str(key))
            ):
                tidy[key] = "[hidden]"
            else:
                tidy[key] = tidy_for_display(item, hide_secrets=hide_secrets, depth=depth + 1)
        return tidy
    return value


def pretty_json(value: Any, *, hide_secrets: bool) -> str:
    tidy = tidy_for_display(value, hide_secrets=hide_secrets)
    try:
        return orjson.dumps(tidy, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(tidy)


def lines_of(text: str) -> str:
    count = text.count("\n") + 1 if text else 0
    return f"{count:,} line{'' if count == 1 else 's'}"


def format_offset(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"+{hours}:{minutes:02d}:{secs:02d}" if hours else f"+{minutes}:{secs:02d}"
