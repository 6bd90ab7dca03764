"""Applying a trajectory's redactions ({"original": "<EMAIL_1>"}) to text and JSON. Pure Python.

The scan (apps.moderation) decides what to redact and stores the map on Trajectory.redactions;
every public surface (pages, API, exports, releases) passes text through `redactor()`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Redact = Callable[[str], str]


def identity(text: str) -> str:
    return text


def redactor(redactions: dict[str, str] | None) -> Redact:
    """A function replacing every original with its placeholder (longest originals first)."""
    if not redactions:
        return identity
    originals = sorted((key for key in redactions if key), key=len, reverse=True)
    if not originals:
        return identity
    pattern = re.compile("|".join(re.escape(original) for original in originals))

    def redact(text: str) -> str:
        if not text:
            return text
        return pattern.sub(lambda match: redactions[match.group(0)], text)

    return redact


def redact_data(value: Any, redact: Redact) -> Any:
    """The same JSON value with every string (keys included) passed through `redact`."""
    if redact is identity:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(item, redact) for item in value]
    if isinstance(value, dict):
        return {redact(key): redact_data(item, redact) for key, item in value.items()}
    return value
