"""Placeholders: what each value the scan found (or a moderator redacted) is replaced by on
every public surface (`<EMAIL_1>`, `<OPENAI_API_KEY_2>`, `<REDACTED_1>`), and the masked
preview the admin shows instead of the value.

A value keeps the placeholder an earlier scan gave it, so links and quotes stay right after a
re-share or a rescan.
"""

from __future__ import annotations

from collections import Counter

from apps.moderation.models import ManualRedaction
from apps.moderation.services.findings import Located


def masked_preview(value: str) -> str:
    """Enough to recognise a value in the admin, not enough to use it: `sk-a…Zq (51 chars)`."""
    flat = " ".join(value.split())
    length = len(value)
    if length <= 6:
        shown = f"{flat[:1]}…"
    elif length < 16:
        shown = f"{flat[:2]}…{flat[-1:]}"
    else:
        shown = f"{flat[:4]}…{flat[-2:]}"
    return f"{shown} ({length} chars)"


def placeholder_label(kind: str) -> str:
    return kind.upper()


def placeholders(found: list[Located], previous: dict[str, str]) -> dict[str, str]:
    """original -> placeholder. A value keeps the placeholder an earlier scan gave it (so links
    and quotes stay right after a re-share); new values get the next free number of their kind,
    in order of first appearance."""
    kind_of: dict[str, str] = {}
    # Numbered by the value a reader sees: the same key with and without colour codes (or
    # percent-encoded) gets one placeholder; both stored forms map to it.
    stored_forms: dict[str, str] = {}
    for located in found:
        detection = located.detection
        kind_of.setdefault(detection.shown, detection.kind)
        if detection.text != detection.shown:
            stored_forms.setdefault(detection.text, detection.shown)
    redactions: dict[str, str] = {}
    taken: dict[str, set[str]] = {}
    for original, kind in kind_of.items():
        old = previous.get(original)
        label = placeholder_label(kind)
        if old and old.startswith(f"<{label}_"):
            redactions[original] = old
            taken.setdefault(label, set()).add(old)
    counters: Counter[str] = Counter()
    for original, kind in kind_of.items():
        if original in redactions:
            continue
        label = placeholder_label(kind)
        used = taken.setdefault(label, set())
        while True:
            counters[label] += 1
            candidate = f"<{label}_{counters[label]}>"
            if candidate not in used:
                break
        used.add(candidate)
        redactions[original] = candidate
    for stored, shown in stored_forms.items():
        redactions.setdefault(stored, redactions[shown])
    return redactions


def manual_placeholders(pk: int, found: dict[str, str], previous: dict[str, str]) -> dict[str, str]:
    """original -> `<REDACTED_n>` for the values moderators redacted by hand that the scan did
    not find itself; a value keeps the number an earlier scan gave it."""
    values = [
        value
        for value in ManualRedaction.objects.filter(trajectory_id=pk).values_list(
            "value", flat=True
        )
        if value not in found
    ]
    result: dict[str, str] = {}
    taken = {p for p in previous.values() if p.startswith("<REDACTED_")}
    for value in values:
        old = previous.get(value, "")
        if old.startswith("<REDACTED_"):
            result[value] = old
    number = 0
    for value in values:
        if value in result:
            continue
        while True:
            number += 1
            candidate = f"<REDACTED_{number}>"
            if candidate not in taken:
                break
        taken.add(candidate)
        result[value] = candidate
    return result
