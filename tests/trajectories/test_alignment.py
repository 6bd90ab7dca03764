"""The alignment /compare/ uses (alignment.py) is difflib's, exactly: the same opcodes as
difflib.SequenceMatcher(autojunk=False) for any two sequences, including the repetitive ones
step signatures are (few distinct values, long equal stretches, one side empty)."""

from __future__ import annotations

import difflib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.trajectories import alignment
from apps.trajectories.alignment import opcodes

symbols = st.lists(st.integers(min_value=0, max_value=4), max_size=60)


def _difflib(a, b):
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()


@settings(max_examples=400, deadline=None)
@given(symbols, symbols, st.integers(min_value=0, max_value=60))
def test_the_opcodes_are_difflibs(a, b, shared):
    b = a[:shared] + b  # runs of the same task share their start
    assert opcodes(a, b) == _difflib(a, b)


def test_long_runs_of_few_signatures_are_difflibs():
    rng = random.Random(24)
    names = [f"action:run:cmd {n}" for n in range(12)] + ["message:agent", "observation:run"]
    a = [rng.choice(names) for _ in range(3000)]
    b = list(a)
    for _ in range(80):  # a detour here and there
        at = rng.randrange(len(b))
        b[at : at + rng.randint(0, 6)] = rng.choices(names, k=rng.randint(0, 6))
    assert opcodes(a, b) == _difflib(a, b)
    assert opcodes(a, a[::-1]) == _difflib(a, a[::-1])


def test_too_many_pairs_go_to_difflib(monkeypatch):
    monkeypatch.setattr(alignment, "MAX_PAIRS", 10)
    a, b = ["x"] * 20 + ["y"], ["y"] + ["x"] * 20
    assert opcodes(a, b) == _difflib(a, b)
