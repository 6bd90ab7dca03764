"""Where in a run readers mark the first wrong step: the first-wrong marks on listed public
trajectories by relative position (the marked step's position over the number of steps), in
ten bars, each linking to the browse page that lists the trajectories it counts
(`/browse/?flagged_at=<decile>`).

One aggregate over the small FlaggedDecile table (only trajectories with marks have rows;
apps.feedback keeps it with the marks), joined to `listed()` as browse lists it, so that a bar's
trajectories are exactly the ones its link lists and a trajectory outside public() never
counts. Cached beside the collection's numbers, under their generation (a trajectory entering
or leaving public() drops both) and one of its own that feedback moves whenever marks change.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Sum

from apps.stats.selectors import GENERATION_KEY, STATS_CACHE_SECONDS
from apps.trajectories.filters import DECILE_CHOICES
from apps.trajectories.models import FlaggedDecile, Trajectory

MARKS_GENERATION_KEY = "stats:first-wrong:generation"


def _key() -> str:
    collection = cache.get_or_set(GENERATION_KEY, 0, None)
    marks = cache.get_or_set(MARKS_GENERATION_KEY, 0, None)
    return f"stats:first-wrong:{collection}:{marks}"


def first_wrong_histogram() -> dict[str, Any]:
    """{"marks", "trajectories", "bars": [{"decile", "label", "marks", "trajectories",
    "browse"}, ...] (all ten, empty ones too)} (cached)."""
    key = _key()
    found = cache.get(key)
    if found is None:
        found = _compute()
        cache.set(key, found, STATS_CACHE_SECONDS)
    return found


def first_wrong_forget() -> None:
    """Marks changed somewhere: the next request counts again."""
    try:
        cache.incr(MARKS_GENERATION_KEY)
    except ValueError:  # no generation yet (or evicted): a new one misses every old key
        cache.set(MARKS_GENERATION_KEY, secrets.randbits(48), None)


def _compute() -> dict[str, Any]:
    listed = Trajectory.objects.listed().values("pk")
    counted = {
        row["decile"]: row
        for row in FlaggedDecile.objects.filter(trajectory_id__in=listed)
        .values("decile")
        .annotate(marks=Sum("marks"), trajectories=Count("id"))
        .order_by("decile")
    }
    flagged = (
        FlaggedDecile.objects.filter(trajectory_id__in=listed)
        .values("trajectory_id")
        .distinct()
        .count()
    )
    bars = []
    for value, label in DECILE_CHOICES:
        row = counted.get(int(value), {})
        bars.append(
            {
                "decile": int(value),
                "label": label,
                "marks": int(row.get("marks") or 0),
                "trajectories": int(row.get("trajectories") or 0),
                "browse": f"/browse/?flagged_at={value}",
            }
        )
    return {
        "marks": sum(bar["marks"] for bar in bars),
        "trajectories": flagged,
        "bars": bars,
    }
