"""The rows of the API's trajectory list, read as plain values rather than model instances.

Building 51 `Trajectory` instances (and decoding the four JSON columns each one loads) was a
large part of a list page's fixed cost (issue 24). A list shows a fixed set of columns, so it
reads those with `.values()` and wraps each row in a `ListRow`: an object whose attributes are
the columns read, as a model instance's are, so the serializer and the redaction helpers
(selectors/redactions.py, which look at `__dict__` to know what was loaded) treat it alike.

The rows come from the queryset they are given, filtered and ordered as it is: visibility stays
the queryset's (`Trajectory.objects.listed()` / `owned_by()`), never this module's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.redactions import INDEX_FIELDS

OWNER_NAME = "owner__username"
# What TrajectoryOutputSerializer shows, what it redacts with (the index), and what the cursor
# orders by (id breaks ties; the first ordering field is among the shown ones).
LIST_ROW_FIELDS = (
    "id",
    "share_id",
    "title",
    "owner_id",
    OWNER_NAME,
    "source_format",
    "agent",
    "model_name",
    "agent_version",
    "polarity",
    "feedback_text",
    "visibility",
    "review_state",
    "license",
    "num_events",
    "star_count",
    "correction_count",
    "first_wrong_count",
    "num_bytes",
    "started_at",
    "ended_at",
    "total_tokens",
    "total_cost",
    "outcome",
    "outcome_score",
    "outcome_source",
    "created_at",
    "updated_at",
    *INDEX_FIELDS,
)


class ListRow:
    """One list row: the columns read, as attributes (`owner_username` for the owner's name).

    A column that was not read is not guessed: `redactions` (the whole map, which a row
    reads only when its index cannot be used) is loaded from the table on first use, as a
    deferred field of a model instance would be; any other is an AttributeError."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
        self.owner_username = self.__dict__.pop(OWNER_NAME)

    @property
    def pk(self) -> int:
        return self.id

    def __getattr__(self, name: str) -> Any:
        # Only called for an attribute that is not set.
        if name != "redactions":
            raise AttributeError(name)
        redactions = (
            Trajectory._base_manager.filter(pk=self.__dict__["id"])
            .values_list("redactions", flat=True)
            .first()
        )
        self.redactions = redactions
        return redactions


def list_values(queryset: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """`queryset` (filtered and ordered), reading only the list's columns and its selected
    annotations (the redaction map where the index is not current, a search's relevance)."""
    return queryset.values(*LIST_ROW_FIELDS, *queryset.query.annotation_select)


def list_rows(values: Iterable[dict[str, Any]]) -> list[ListRow]:
    return [ListRow(row) for row in values]
