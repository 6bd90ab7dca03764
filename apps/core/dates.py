"""Instants as the database takes them."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone


def as_utc(value: datetime) -> datetime:
    """An instant in UTC. PostgreSQL refuses UTC offsets past ±15:59 that Python accepts
    (`+20:00`), and an instant near year 1 or 9999 may not exist in UTC (OverflowError)."""
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value.astimezone(UTC)
