"""Backward construction's input (the paper's Algorithm 1): steps and windows. Pure Python.

A trajectory becomes the alternating list o0, a1, o1, ..., an, on: user messages and tool output
are observations, agent messages and tool calls are actions, consecutive ones of the same role
are folded into one step, and a synthetic (empty) observation stands where the format has none
at the start or the end. A window is a contiguous slice (o_i, a_i+1, ..., a_j, o_j), 0 <= i < j
<= n. Every text is cut with `cut()`, the one way observations are shortened everywhere
(prompts, stored windows, retrieval, exports).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

OBSERVATION = "observation"
ACTION = "action"


class EventLike(Protocol):
    position: int
    source: str
    kind: str
    text: str


@dataclass
class Step:
    """One folded step: its role, its (cut) text and the source events it spans."""

    role: str
    text: str
    first: int  # position of its first event in the source trajectory
    last: int  # position of its last event
    synthetic: bool = False
    repeats: int = 0  # identical (action, observation) pairs folded into this observation

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "first": self.first, "last": self.last}


def cut(text: str, limit: int) -> str:
    """The head and the tail of `text` with what is between replaced by a marker, so that a
    long command output keeps both its start (what ran) and its end (the result)."""
    text = text or ""
    if limit <= 0 or len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head
    removed = len(text) - head - tail
    return f"{text[:head]}\n[... {removed} characters cut ...]\n{text[len(text) - tail :]}"


def role_of(event: EventLike) -> str | None:
    if event.kind == "system":
        return None
    if event.kind == "observation":
        return OBSERVATION
    if event.kind == "message":
        return OBSERVATION if event.source == "user" else ACTION
    return ACTION


def build_steps(events: Iterable[EventLike], *, limit: int) -> list[Step]:
    """o0, a1, o1, ..., an, on from events in position order (see the module docstring)."""
    raw: list[tuple[str, list[str], int, int]] = []
    for event in events:
        role = role_of(event)
        if role is None:
            continue
        text = (event.text or "").strip()
        if raw and raw[-1][0] == role:
            previous = raw[-1]
            raw[-1] = (
                role,
                [*previous[1], text] if text else previous[1],
                previous[2],
                event.position,
            )
        else:
            raw.append((role, [text] if text else [], event.position, event.position))
    steps = [
        Step(role, cut("\n".join(texts), limit), first, last) for role, texts, first, last in raw
    ]
    if not steps:
        return []
    if steps[0].role == ACTION:
        steps.insert(0, Step(OBSERVATION, "", steps[0].first, steps[0].first, synthetic=True))
    if steps[-1].role == ACTION:
        steps.append(Step(OBSERVATION, "", steps[-1].last, steps[-1].last, synthetic=True))
    return steps


def drop_repeats(steps: list[Step]) -> tuple[list[Step], int]:
    """Remove each (action, observation) pair identical to the one just before it (an agent
    retrying the same command and getting the same answer teaches nothing twice). Returns the
    steps and how many pairs went."""
    if len(steps) < 5:
        return steps, 0
    kept = steps[:3]
    removed = 0
    for index in range(3, len(steps) - 1, 2):
        action, observation = steps[index], steps[index + 1]
        before_action, before_observation = kept[-2], kept[-1]
        if (action.text, observation.text) == (before_action.text, before_observation.text):
            before_observation.last = observation.last
            before_observation.repeats += 1
            removed += 1
            continue
        kept.extend([action, observation])
    return kept, removed


def actions_in(steps: list[Step]) -> int:
    return (len(steps) - 1) // 2


def window_steps(steps: list[Step], i: int, j: int) -> list[Step]:
    """The steps of window (o_i, ..., o_j), by observation index."""
    return steps[2 * i : 2 * j + 1]


def choose_windows(
    n: int, *, cap: int, short_max: int, short_share: float, seed: str
) -> list[tuple[int, int]]:
    """Which windows (i, j) of a trajectory with n actions to synthesize, at most `cap`.

    All n(n+1)/2 are too many for long trajectories. The paper found windows of fewer than five
    steps helped most and a mix of lengths did best, so: the whole trajectory first, then one
    window of each short length (1..short_max) and of lengths spread geometrically up to n, then
    more short windows until they are `short_share` of the cap, then more long ones. Random
    starts from a seeded generator: the same trajectory always gets the same windows, so a
    resumed run asks for no new ones.
    """
    if n <= 0 or cap <= 0:
        return []
    rng = random.Random(seed)
    short_lengths = list(range(1, min(short_max, n) + 1))
    long_lengths: list[int] = []
    if n > short_max:
        steps = max(1, int(math.log2(n / max(short_max, 1))) + 2)
        for k in range(steps):
            length = round((short_max + 1) * (n / (short_max + 1)) ** (k / max(steps - 1, 1)))
            length = min(max(length, short_max + 1), n)
            if length not in long_lengths:
                long_lengths.append(length)
    starts: dict[int, list[int]] = {}

    def next_start(length: int) -> int | None:
        if length not in starts:
            candidates = list(range(n - length + 1))
            rng.shuffle(candidates)
            starts[length] = candidates
        pool = starts[length]
        return pool.pop() if pool else None

    chosen: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()

    def take(length: int) -> bool:
        while True:
            start = next_start(length)
            if start is None:
                return False
            window = (start, start + length)
            if window not in seen:
                seen.add(window)
                chosen.append(window)
                return True

    take(n)
    for length in [*short_lengths, *long_lengths]:
        if len(chosen) >= cap:
            break
        take(length)
    short_target = max(1, round(cap * short_share))

    def fill(lengths: list[int], target: int) -> None:
        live = [length for length in lengths]
        while live and len(chosen) < target:
            for length in list(live):
                if len(chosen) >= target:
                    return
                if not take(length):
                    live.remove(length)

    short_have = sum(1 for i, j in chosen if j - i <= short_max)
    fill(short_lengths, min(cap, len(chosen) + max(0, short_target - short_have)))
    fill([*long_lengths, *short_lengths], cap)
    return chosen[:cap]
