"""Reads behind the public site pages (home, browse facets, dashboard, sitemap, feed).

A module of its own rather than selectors.py so that the site and the API can grow side by side;
every public read here starts from `Trajectory.objects.public()`, the one place visibility lives.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, QuerySet, Sum

from apps.trajectories.models import Trajectory

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
    "redactions",
    "num_events",
    "total_tokens",
    "total_cost",
    "created_at",
    "updated_at",
    "published_at",
)
FACET_CACHE_SECONDS = 300
FACET_LIMIT = 200


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
    """Public trajectories, newest first, with only the columns a list row needs."""
    return Trajectory.objects.public().only(*LIST_FIELDS).order_by("-created_at", "-id")


def public_latest(*, limit: int = 8) -> list[Trajectory]:
    return list(public_list()[:limit])


def public_facets() -> dict[str, list[str]]:
    """Distinct agents and models of public trajectories, for the browse filters' suggestions.

    Cached for a few minutes: they change slowly and a DISTINCT over every public row on each
    browse page would cost more than the page itself.
    """
    facets = cache.get("site:public-facets")
    if facets is None:
        public = Trajectory.objects.public()
        facets = {
            "agents": _distinct(public, "agent"),
            "models": _distinct(public, "model_name"),
        }
        cache.set("site:public-facets", facets, FACET_CACHE_SECONDS)
    return facets


def _distinct(queryset: QuerySet[Trajectory], field: str) -> list[str]:
    values = (
        queryset.exclude(**{field: ""})
        .order_by(field)
        .values_list(field, flat=True)
        .distinct()[:FACET_LIMIT]
    )
    return list(values)


def owned_list(user) -> QuerySet[Trajectory]:
    """A signed-in user's own trajectories in every state, newest first."""
    return Trajectory.objects.owned_by(user).only(*LIST_FIELDS).order_by("-created_at", "-id")


def find_by_share_id(share_id: str) -> Trajectory | None:
    """Any trajectory with this id, whatever its state: only for checks that reveal nothing
    (the deletion password), never to show it."""
    return Trajectory.objects.filter(share_id=share_id).first()
