"""The numbers behind /stats/ and GET /api/v1/stats, over `Trajectory.objects.public()` only.

Nine aggregate queries (weeks, agents, models, formats, polarity, one row of totals and
distributions, releases, success by model and by agent), whatever the size of the collection; the result is cached, under a key
whose generation `collection_stats_forget()` moves on whenever a trajectory enters or leaves
public() (the `public_set_changed` signal), so a warm page is a few cache reads (the generation,
the numbers, and the page's charts rendered from them: cached_rendering). Releases publish
without that signal: the cache also expires after STATS_CACHE_SECONDS. After a drop, one
request recomputes while the others wait for it (_compute_once).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db.models import Avg, Count, F, Q, QuerySet, Sum
from django.db.models.functions import TruncWeek
from django.utils import timezone

from apps.core.locks import Lease
from apps.datasets.models import Release, ReleaseStatus
from apps.stats.rates import wilson_interval
from apps.trajectories.models import Outcome, Trajectory

STATS_CACHE_SECONDS = 300
# The cold path's stampede guard (_compute_once): the one computing request's lease (renewed
# while it computes, so a dead one frees it within this, inside a wait), how long the others
# wait for its result, and how often they look.
STATS_LOCK_SECONDS = 10
STATS_WAIT_SECONDS = 15.0
STATS_POLL_SECONDS = 0.05
GENERATION_KEY = "stats:generation"
WEEKS = 26
TOP = 10
# (label, lowest number of steps); each bucket runs to the next one's lowest.
LENGTH_BUCKETS = [
    ("1–10", 1),
    ("11–50", 11),
    ("51–100", 51),
    ("101–500", 101),
    ("501–2,000", 501),
    ("2,001+", 2001),
]
DURATION_BUCKETS = [
    ("< 1 min", timedelta(0)),
    ("1–5 min", timedelta(minutes=1)),
    ("5–15 min", timedelta(minutes=5)),
    ("15–60 min", timedelta(minutes=15)),
    ("1–4 h", timedelta(hours=1)),
    ("> 4 h", timedelta(hours=4)),
]
POLARITY_LABELS = {"positive": "Rated positive", "negative": "Rated negative", "none": "Not rated"}


def _key() -> str:
    return f"stats:collection:{cache.get_or_set(GENERATION_KEY, 0, None)}"


def collection_stats() -> dict[str, Any]:
    """Everything the stats page shows, as plain JSON-able values (cached)."""
    key = _key()
    stats = cache.get(key)
    if stats is None:
        stats = _compute_once(key)
    return stats


def _compute_once(key: str) -> dict[str, Any]:
    """The numbers for `key`, computed by one request at a time.

    Right after the cache was dropped (any trajectory entering or leaving public()), every
    reader would otherwise run the seven aggregates at once, seconds each at 100,000
    trajectories, and on two cores each makes the others slower. One request takes the lock
    and computes; the others wait for its result (polling the cache) for up to
    STATS_WAIT_SECONDS. They do not serve the numbers of the previous generation meanwhile:
    those can still count a trajectory that has just left public(), an agent or model name of
    it among the ten listed. If the computing request dies, its lock is gone with it (or
    expires) and a waiter computes instead."""
    lease = Lease(f"{key}:computing", STATS_LOCK_SECONDS)
    if not lease.acquire():
        deadline = time.monotonic() + STATS_WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(STATS_POLL_SECONDS)
            stats = cache.get(key)
            if stats is not None:
                return stats
            if lease.acquire():
                break  # the computing request failed: this one computes now
        else:
            # Waited long enough: compute without the lock rather than fail the page.
            return _compute_and_store(key)
    try:
        return _compute_and_store(key)
    finally:
        lease.release()


def _compute_and_store(key: str) -> dict[str, Any]:
    stats = _compute()
    cache.set(key, stats, STATS_CACHE_SECONDS)
    return stats


def cached_rendering(stats: dict[str, Any], name: str, render: Callable[[], str]) -> str:
    """Markup made from `stats` (the charts and tables), kept as long as the numbers are: the
    key carries the computation's time, so new numbers never meet old markup."""
    key = f"stats:rendered:{name}:{stats['generated_at']}"
    html = cache.get(key)
    if html is None:
        html = render()
        cache.set(key, html, STATS_CACHE_SECONDS)
    return html


def collection_stats_forget() -> None:
    """The public set changed: the next request computes the numbers afresh."""
    try:
        cache.incr(GENERATION_KEY)
    except ValueError:  # no generation yet (or evicted): a new one misses every old key
        cache.set(GENERATION_KEY, secrets.randbits(48), None)


def _grouped(field: str, *, label_empty: str) -> list[list[Any]]:
    """[[value, count], ...] of the TOP most frequent values (the caller adds "Other")."""
    # Agent and model names as shown (the redacted view's columns, current only with the
    # index): a row not indexed yet counts under "Other".
    public = Trajectory.objects.public().filter(indexed_at__isnull=False)
    rows = public.values(field).annotate(n=Count("id")).order_by("-n", field)[:TOP]
    return [[row[field] or label_empty, row["n"]] for row in rows]


def _success(field: str) -> list[dict[str, Any]]:
    """Success rates of the TOP agents or models with the most runs of known outcome: runs,
    resolved, the rate and its 95 % Wilson interval (rates.py), and the shown value the browse
    filter takes ("" for runs that do not say, which no filter can pick out).

    Over public() only, from the redacted view's columns (current only with the index), and
    only runs whose outcome is known: an unknown outcome is neither a success nor a failure."""
    known = Trajectory.objects.public().filter(
        indexed_at__isnull=False, outcome__in=[Outcome.RESOLVED, Outcome.UNRESOLVED]
    )
    rows = (
        known.values(field)
        .annotate(n=Count("id"), resolved=Count("id", filter=Q(outcome=Outcome.RESOLVED)))
        .order_by("-n", field)[:TOP]
    )
    rates = []
    for row in rows:
        low, high = wilson_interval(row["resolved"], row["n"])
        rates.append(
            {
                "label": row[field] or "(not said)",
                "value": row[field] or "",
                "runs": row["n"],
                "resolved": row["resolved"],
                "rate": row["resolved"] / row["n"],
                "low": low,
                "high": high,
            }
        )
    return rates


def _per_week(public: QuerySet[Trajectory], now: datetime) -> list[list[Any]]:
    since = now - timedelta(weeks=WEEKS)
    weeks = {
        row["week"].date().isoformat(): row["n"]
        for row in public.filter(created_at__gte=since)
        .annotate(week=TruncWeek("created_at"))
        .values("week")
        .annotate(n=Count("id"))
        .order_by("week")
        if row["week"] is not None
    }
    # Every week of the window, empty ones too, so the chart's axis is time.
    monday = (now - timedelta(days=now.weekday())).date()
    per_week = [
        [
            (monday - timedelta(weeks=n)).isoformat(),
            weeks.get((monday - timedelta(weeks=n)).isoformat(), 0),
        ]
        for n in range(WEEKS - 1, -1, -1)
    ]
    return per_week


def _totals(public: QuerySet[Trajectory]) -> dict[str, Any]:
    """The counts and sums, and the length and duration buckets, in one aggregate query."""
    totals: dict[str, Any] = {
        "total": Count("id"),
        "events": Sum("num_events"),
        "avg_events": Avg("num_events"),
        "tokens": Sum("total_tokens"),
        "with_tokens": Count("id", filter=Q(total_tokens__isnull=False)),
        "cost": Sum("total_cost"),
        "with_cost": Count("id", filter=Q(total_cost__isnull=False)),
        "with_duration": Count(
            "id",
            filter=Q(
                started_at__isnull=False, ended_at__isnull=False, ended_at__gte=F("started_at")
            ),
        ),
    }
    for index, (_label, low) in enumerate(LENGTH_BUCKETS):
        condition = Q(num_events__gte=low)
        if index + 1 < len(LENGTH_BUCKETS):
            condition &= Q(num_events__lt=LENGTH_BUCKETS[index + 1][1])
        totals[f"length_{index}"] = Count("id", filter=condition)
    timed = Q(started_at__isnull=False, ended_at__isnull=False, ended_at__gte=F("started_at"))
    for index, (_label, shortest) in enumerate(DURATION_BUCKETS):
        condition = timed & Q(ended_at__gte=F("started_at") + shortest)
        if index + 1 < len(DURATION_BUCKETS):
            condition &= Q(ended_at__lt=F("started_at") + DURATION_BUCKETS[index + 1][1])
        totals[f"duration_{index}"] = Count("id", filter=condition)
    return public.aggregate(**totals)


def _releases() -> list[list[Any]]:
    return [
        [release["version"], release["published_at"].date().isoformat(), release["num_rows"]]  # type: ignore[union-attr]
        for release in Release.objects.filter(
            status=ReleaseStatus.PUBLISHED, published_at__isnull=False
        )
        .order_by("published_at")
        .values("version", "published_at", "num_rows")
    ]


def _compute() -> dict[str, Any]:
    public = Trajectory.objects.public()
    now = timezone.now()
    row = _totals(public)
    total = row["total"] or 0

    def with_other(rows: list[list[Any]]) -> list[list[Any]]:
        rest = total - sum(count for _, count in rows)
        return rows + [["Other", rest]] if rest > 0 else rows

    return {
        "generated_at": now.isoformat(),
        "trajectories": total,
        "events": row["events"] or 0,
        "average_events": round(float(row["avg_events"] or 0), 1),
        "per_week": _per_week(public, now),
        "by_agent": with_other(_grouped("shown_agent", label_empty="(not said)")),
        "by_model": with_other(_grouped("shown_model", label_empty="(not said)")),
        "by_format": [
            [r["source_format"], r["n"]]
            for r in public.values("source_format")
            .annotate(n=Count("id"))
            .order_by("-n", "source_format")
        ],
        "by_polarity": [
            [POLARITY_LABELS.get(r["polarity"], r["polarity"]), r["n"]]
            for r in public.values("polarity").annotate(n=Count("id")).order_by("-n", "polarity")
        ],
        "length": [[label, row[f"length_{i}"]] for i, (label, _) in enumerate(LENGTH_BUCKETS)],
        "duration": [
            [label, row[f"duration_{i}"]] for i, (label, _) in enumerate(DURATION_BUCKETS)
        ],
        "with_duration": row["with_duration"] or 0,
        "tokens": {"total": row["tokens"] or 0, "trajectories": row["with_tokens"] or 0},
        "cost": {"total": round(float(row["cost"] or 0), 4), "trajectories": row["with_cost"] or 0},
        "releases": _releases(),
        "success_by_model": _success("shown_model"),
        "success_by_agent": _success("shown_agent"),
    }
