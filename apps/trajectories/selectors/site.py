"""Reads behind the public site pages (home, browse facets, dashboard, sitemap, feed).

A module of its own rather than selectors/__init__.py so that the site and the API can grow side by side;
every public read here starts from `Trajectory.objects.public()`, the one place visibility lives.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.core.cache import cache
from django.db import connection
from django.db.models import (
    Count,
    DateTimeField,
    ExpressionWrapper,
    F,
    Field,
    QuerySet,
    Sum,
    Value,
)

from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.redactions import (
    INDEX_FIELDS,
    with_redaction_index,
)

if TYPE_CHECKING:
    from apps.accounts.models import User

# Only what list rows, previews and feeds show: the event text and raw metadata stay in the table.
LIST_FIELDS = (
    "id",
    "share_id",
    "title",
    "source_format",
    "agent",
    "model_name",
    "agent_version",
    "polarity",
    "feedback_text",
    "visibility",
    "review_state",
    # Not `redactions` (12 MB for a trajectory with very many findings): the row's own entries
    # of its redaction index, and the whole map only where the index is not current.
    *INDEX_FIELDS,
    "num_events",
    "star_count",
    "correction_count",
    "first_wrong_count",
    "total_tokens",
    "total_cost",
    "outcome",
    "outcome_source",
    "created_at",
    "updated_at",
    "published_at",
)
FIELD_NAMES = {"pk", *(field.name for field in Trajectory._meta.get_fields())}
FACET_CACHE_SECONDS = 300
FACET_LIMIT = 200
FACET_GENERATION_KEY = "site:public-facets:generation"


@dataclass(frozen=True)
class PublicStats:
    trajectories: int
    events: int


def public_stats() -> PublicStats:
    """How many public trajectories and events there are (one query)."""
    totals = Trajectory.objects.public().aggregate(
        trajectories=Count("id"), events=Sum("num_events")
    )
    return PublicStats(trajectories=totals["trajectories"] or 0, events=totals["events"] or 0)


def public_list() -> QuerySet[Trajectory]:
    """Public trajectories (one per chain: `listed()`), newest first, with only the columns a
    list row needs."""
    return with_redaction_index(
        Trajectory.objects.listed().only(*LIST_FIELDS).order_by("-created_at", "-id")
    )


def sorted_after_matching(queryset: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """The same rows in the same order, sorted by expressions no b-tree index provides.

    For a search with few matches PostgreSQL may otherwise walk the whole date index, testing
    every public row against the query, because it cannot tell how rare the words are (a
    ticket number: ~1 s over 100,000 rows). Only use it when the matches are known to be few
    (the capped count says so): then the full-text index finds them and sorting them is cheap.
    """
    if connection.vendor != "postgresql":
        return queryset
    order = []
    for name in queryset.query.order_by:
        if not isinstance(name, str):
            return queryset
        field = name.lstrip("-")
        if field not in FIELD_NAMES:  # an annotation (relevance): no index sorts by it anyway
            return queryset
        output = Trajectory._meta.get_field("id" if field == "pk" else field)
        if not isinstance(output, Field):  # a reverse relation: no column to order by here
            return queryset
        shift = Value(timedelta(0)) if isinstance(output, DateTimeField) else Value(0)
        expression = ExpressionWrapper(F(field) + shift, output_field=output.__class__())
        order.append(expression.desc() if name.startswith("-") else expression.asc())
    return queryset.order_by(*order)


def public_latest(*, limit: int = 8) -> list[Trajectory]:
    return list(public_list()[:limit])


def public_facets() -> dict[str, list[str]]:
    """Distinct agents and models of public trajectories, for the browse filters' suggestions.

    Cached for a few minutes: a DISTINCT over every public row on each browse page would cost
    more than the page itself. The cache key carries a generation that `public_facets_forget()`
    moves on whenever the public set changes, so a value that just left `public()` is never
    served from the cache; a page that computed facets from the old rows while the change
    committed stores them under the old generation, which nobody reads any more.
    """
    key = f"site:public-facets:{cache.get_or_set(FACET_GENERATION_KEY, 0, None)}"
    facets = cache.get(key)
    if facets is None:
        # The values as shown (the redacted view's columns), the ones the filters match.
        public = Trajectory.objects.public().filter(indexed_at__isnull=False)
        facets = {
            "agents": _distinct(public, "shown_agent"),
            "models": _distinct(public, "shown_model"),
        }
        cache.set(key, facets, FACET_CACHE_SECONDS)
    return facets


def public_facets_forget() -> None:
    """The public set changed: the next browse page computes its facets afresh."""
    try:
        cache.incr(FACET_GENERATION_KEY)
    except ValueError:  # no generation yet (or evicted): any new one misses the old keys
        cache.set(FACET_GENERATION_KEY, secrets.randbits(48), None)


def _distinct(queryset: QuerySet[Trajectory], field: str) -> list[str]:
    values = (
        queryset.exclude(**{field: ""})
        .order_by(field)
        .values_list(field, flat=True)
        .distinct()[:FACET_LIMIT]
    )
    return list(values)


def owned_list(user: User) -> QuerySet[Trajectory]:
    """A signed-in user's own trajectories in every state, newest first."""
    return with_redaction_index(
        Trajectory.objects.owned_by(user).only(*LIST_FIELDS).order_by("-created_at", "-id")
    )
