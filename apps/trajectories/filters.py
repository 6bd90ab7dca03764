"""The one FilterSet of the public trajectory list, shared by the browse page and the API."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet

from apps.trajectories.models import Polarity, Trajectory
from apps.trajectories.selectors import trajectory_search

# Public names of the orderings -> model fields (the tie-breaker keeps pages stable).
ORDERINGS: dict[str, tuple[str, ...]] = {
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "-events": ("-num_events", "-id"),
    "events": ("num_events", "id"),
}
DEFAULT_ORDERING = "-created"


class TrajectoryFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="filter_q", label="Search", max_length=200)
    agent = django_filters.CharFilter(field_name="agent", lookup_expr="iexact")
    model = django_filters.CharFilter(field_name="model_name", lookup_expr="iexact", label="Model")
    polarity = django_filters.ChoiceFilter(choices=Polarity.choices)
    source_format = django_filters.CharFilter(field_name="source_format", lookup_expr="exact")
    created_after = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="gte", label="Created at or after"
    )
    created_before = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="lt", label="Created before"
    )
    ordering = django_filters.ChoiceFilter(
        choices=[(key, key) for key in ORDERINGS],
        method="filter_ordering",
        label="Ordering",
        empty_label=None,
    )

    class Meta:
        model = Trajectory
        fields: list[str] = []

    def filter_q(self, queryset: QuerySet[Trajectory], name: str, value: str):
        return trajectory_search(queryset, value)

    def filter_ordering(self, queryset: QuerySet[Trajectory], name: str, value: str):
        return queryset.order_by(
            *ORDERINGS.get(value or DEFAULT_ORDERING, ORDERINGS[DEFAULT_ORDERING])
        )
