"""The one FilterSet of the public trajectory list, shared by the browse page and the API."""

from __future__ import annotations

from datetime import datetime, timedelta

import django_filters
from django import forms
from django.db.models import QuerySet

from apps.core.dates import as_utc
from apps.core.filtersets import SharedFilterSet
from apps.trajectories.deciles import flagged_at
from apps.trajectories.models import Outcome, Polarity, Trajectory
from apps.trajectories.selectors.search import RELEVANCE, trajectory_search, with_relevance

# Public names of the orderings -> model fields (the tie-breaker keeps pages stable).
ORDERINGS: dict[str, tuple[str, ...]] = {
    # Best match first (selectors/search.py says how it ranks); only with words to rank by.
    RELEVANCE: ("-relevance", "-created_at", "-id"),
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "-events": ("-num_events", "-id"),
    "-stars": ("-star_count", "-id"),
    "-corrections": ("-correction_count", "-id"),
    "events": ("num_events", "id"),
}
DEFAULT_ORDERING = "-created"
MAX_UTC_OFFSET = timedelta(hours=16)
# Readers' feedback (the counts apps.feedback keeps on the row): ?has_corrections=1,
# ?flagged=1 (a reader marked a first wrong step), ?flagged_at=<0-9> (a first-wrong mark in
# that tenth of the run: 3 is 30-40 % of the steps).
YES_NO = [("1", "yes"), ("0", "no")]
DECILE_CHOICES = [(str(tenth), f"{tenth * 10}–{tenth * 10 + 10} %") for tenth in range(10)]


class InstantField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 date and time, given back in UTC. An offset PostgreSQL refuses (past ±15:59;
    Python takes up to ±23:59) or an instant UTC cannot hold is a form error, not a 500."""

    def to_python(self, value: object) -> datetime | None:
        parsed = super().to_python(value)
        if parsed is None:
            return None
        offset = parsed.utcoffset()
        if offset is not None and abs(offset) >= MAX_UTC_OFFSET:
            raise forms.ValidationError(
                "the UTC offset must be between -15:59 and +15:59", code="invalid"
            )
        try:
            return as_utc(parsed)
        except OverflowError:
            raise forms.ValidationError(
                "this instant is outside the years 1 to 9999 in UTC", code="invalid"
            ) from None


class InstantFilter(django_filters.IsoDateTimeFilter):
    field_class = InstantField


class TrajectoryFilter(SharedFilterSet):
    q = django_filters.CharFilter(method="filter_q", label="Search", max_length=200)
    # Agent and model match the values as shown (the redacted view's columns), never the raw
    # ones: a raw filter would confirm a guessed secret, and a shown value would match nothing.
    agent = django_filters.CharFilter(method="filter_shown", field_name="shown_agent")
    model = django_filters.CharFilter(
        method="filter_shown", field_name="shown_model", label="Model"
    )
    polarity = django_filters.ChoiceFilter(choices=Polarity.choices)
    source_format = django_filters.CharFilter(field_name="source_format", lookup_expr="exact")
    # The stored outcome (resolved / unresolved / unknown): a column, not text, so one value.
    outcome = django_filters.ChoiceFilter(choices=Outcome.choices, label="Outcome")
    created_after = InstantFilter(
        field_name="created_at", lookup_expr="gte", label="Created at or after"
    )
    created_before = InstantFilter(
        field_name="created_at", lookup_expr="lt", label="Created before"
    )
    has_corrections = django_filters.ChoiceFilter(
        choices=YES_NO, method="filter_counted", field_name="correction_count"
    )
    flagged = django_filters.ChoiceFilter(
        choices=YES_NO, method="filter_counted", field_name="first_wrong_count"
    )
    flagged_at = django_filters.ChoiceFilter(choices=DECILE_CHOICES, method="filter_flagged_at")
    # Applied last, in filter_queryset: the default depends on whether there are words.
    ordering = django_filters.ChoiceFilter(
        choices=[(key, key) for key in ORDERINGS],
        method="filter_ordering",
        label="Ordering",
        empty_label=None,
    )

    # Set by filter_queryset: every match, in no order (the browse page counts these).
    matches: QuerySet[Trajectory]

    class Meta:
        model = Trajectory
        fields: list[str] = []

    def filter_shown(self, queryset: QuerySet[Trajectory], name: str, value: str):
        # Only where the index is current: a changed map leaves the columns stale until the
        # index is rebuilt (services/redaction_index.py).
        return queryset.filter(**{f"{name}__iexact": value}, indexed_at__isnull=False)

    def filter_counted(self, queryset: QuerySet[Trajectory], name: str, value: str):
        if value == "1":
            return queryset.filter(**{f"{name}__gt": 0})
        return queryset.filter(**{name: 0})

    def filter_flagged_at(self, queryset: QuerySet[Trajectory], name: str, value: str):
        # The tenth's bit, which a partial index of the public rows with it answers (deciles.py).
        return queryset.filter(flagged_at(int(value)))

    def filter_q(self, queryset: QuerySet[Trajectory], name: str, value: str):
        if self.ordering_key == RELEVANCE:
            return queryset  # with_relevance searches as it ranks (filter_queryset)
        return trajectory_search(queryset, value)

    def filter_ordering(self, queryset: QuerySet[Trajectory], name: str, value: str):
        return queryset

    @property
    def ordering_key(self) -> str:
        """The ordering asked for; without one, the best match first when there are words to
        search for, else the newest. Relevance without words means nothing: the newest."""
        data = self.form.cleaned_data if hasattr(self.form, "cleaned_data") else {}
        searching = bool((data.get("q") or "").strip())
        key = data.get("ordering") or (RELEVANCE if searching else DEFAULT_ORDERING)
        return key if key in ORDERINGS and (searching or key != RELEVANCE) else DEFAULT_ORDERING

    def filter_queryset(self, queryset: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
        queryset = super().filter_queryset(queryset)
        key = self.ordering_key
        # Every match, whatever the order: what a count counts (relevance on PostgreSQL lists
        # only its candidates: selectors/search.py).
        self.matches = queryset
        if key == RELEVANCE:
            q = self.form.cleaned_data.get("q") or ""
            self.matches = trajectory_search(queryset, q)
            queryset = with_relevance(queryset, q)
        return queryset.order_by(*ORDERINGS[key])
