"""`Trajectory.first_wrong_deciles`: the tenths of a run that hold current first-wrong marks, as
bits (bit 3 set: a mark in 30-40 % of the steps), kept by apps.feedback beside FlaggedDecile.

The list's ?flagged_at=<tenth> filters by the bit, and a partial index per tenth holds only the
public rows with that bit, newest first: a page reads its 51 rows from the index. Filtering
through FlaggedDecile instead read every row of the tenth (about 1,300 at 100,000 trajectories),
looked each trajectory up by key and sorted them (74 ms of SQL, bench/bench_list.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import F, Index, Q
from django.db.models.lookups import GreaterThan

TENTHS = range(10)


def deciles_bits(tenths: Iterable[int]) -> int:
    """The column's value for marks in these tenths."""
    bits = 0
    for tenth in tenths:
        bits |= 1 << tenth
    return bits


def flagged_at(tenth: int) -> Q:
    """A first-wrong mark in this tenth: the filter, and the condition of its index (the same
    expression, so that PostgreSQL sees the index answers the filter)."""
    return Q(GreaterThan(F("first_wrong_deciles").bitand(1 << tenth), 0))


def flagged_at_indexes(public: Q) -> list[Index]:
    return [
        Index(
            F("created_at").desc(),
            F("id").desc(),
            name=f"traj_public_flagged_at_{tenth}",
            condition=public & flagged_at(tenth),
        )
        for tenth in TENTHS
    ]
