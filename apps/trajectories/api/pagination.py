"""The trajectory API's pages: trajectories in the list's ordering, events in order."""

from __future__ import annotations

from apps.core.api.pagination import CheckedCursorPagination
from apps.trajectories.filters import DEFAULT_ORDERING, ORDERINGS


class TrajectoryCursorPagination(CheckedCursorPagination):
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = ORDERINGS[DEFAULT_ORDERING]

    def get_ordering(self, request, queryset, view) -> tuple[str, ...]:
        key = getattr(view, "ordering_key", DEFAULT_ORDERING)
        return ORDERINGS.get(key, ORDERINGS[DEFAULT_ORDERING])


class EventCursorPagination(CheckedCursorPagination):
    page_size = 100
    page_size_query_param = "limit"
    max_page_size = 1000
    ordering = ("position",)
