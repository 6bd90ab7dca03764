"""The review queue's filters: why an item is here, finding kind, reports, agent, age."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import admin
from django.db.models import Exists, OuterRef
from django.utils import timezone

from apps.moderation.models import Finding
from apps.moderation.selectors import finding_kinds, shared_agents
from apps.trajectories.models import ReviewState


class WhyFilter(admin.SimpleListFilter):
    title = "why it is here"
    parameter_name = "why"

    def lookups(self, request, model_admin):
        return [
            ("held", "Held (scan, pre-moderation or reports)"),
            ("reported", "Open reports"),
            ("takedown", "Takedown request"),
            ("appeal", "Appeal of a rejection"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "held":
            return queryset.filter(review_state=ReviewState.HELD)
        if value == "reported":
            return queryset.filter(open_reports__gt=0)
        if value == "takedown":
            return queryset.filter(open_takedowns__gt=0)
        if value == "appeal":
            return queryset.filter(open_appeals__gt=0)
        return queryset


class FindingKindFilter(admin.SimpleListFilter):
    title = "finding kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return [(kind, kind) for kind in finding_kinds(limit=100)]

    def queryset(self, request, queryset):
        if self.value():
            found = Finding.objects.filter(trajectory=OuterRef("pk"), kind=self.value())
            return queryset.filter(Exists(found))
        return queryset


class ReportsFilter(admin.SimpleListFilter):
    title = "reports"
    parameter_name = "reports"

    def lookups(self, request, model_admin):
        return [("yes", "Reported"), ("no", "Not reported")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(open_reports__gt=0)
        if self.value() == "no":
            return queryset.filter(open_reports=0)
        return queryset


class AgentFilter(admin.SimpleListFilter):
    title = "agent"
    parameter_name = "agent"

    def lookups(self, request, model_admin):
        return [(agent, agent) for agent in shared_agents(limit=50)]

    def queryset(self, request, queryset):
        return queryset.filter(agent=self.value()) if self.value() else queryset


AGES = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "1w": timedelta(weeks=1)}


class AgeFilter(admin.SimpleListFilter):
    title = "age"
    parameter_name = "age"

    def lookups(self, request, model_admin):
        return [
            ("1h", "Shared in the last hour"),
            ("1d", "In the last day"),
            ("1w", "In the last week"),
            ("older", "Older than a week"),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value in AGES:
            return queryset.filter(created_at__gte=timezone.now() - AGES[value])
        if value == "older":
            return queryset.filter(created_at__lt=timezone.now() - AGES["1w"])
        return queryset
