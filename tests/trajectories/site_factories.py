"""Trajectories built straight with the ORM for the site page tests (no ingest needed)."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh
from apps.trajectories.services.search import build_search_text, search_vector_expression

# Every combination that must never reach a public page, and its model fields.
NOT_PUBLIC_STATES = {
    "private": {"visibility": "private", "review_state": "approved"},
    "private_pending": {"visibility": "private", "review_state": "pending"},
    "pending": {"visibility": "public", "review_state": "pending"},
    "held": {"visibility": "public", "review_state": "held"},
    "rejected": {"visibility": "public", "review_state": "rejected"},
    "hidden": {"visibility": "public", "review_state": "hidden"},
}

_clock = itertools.count()


def make_trajectory(
    *,
    events: list[str] | None = None,
    task: str = "",
    age_minutes: int | None = None,
    index: bool = True,
    **fields,
):
    """A public, approved trajectory unless `fields` say otherwise; newest last made.

    `events`: texts of events to create (also put in search_text, as the scan builds it for an
    approved one: services/search.py); `task`: the first user message, made the first event.
    """
    now = timezone.now()
    defaults = {
        "title": "A trajectory",
        "source_format": "openhands_v0",
        "agent": "CodeActAgent",
        "model_name": "gpt-4o",
        "visibility": "public",
        "review_state": "approved",
        "num_events": len(events) if events else 3,
    }
    defaults.update(fields)
    defaults.setdefault(
        "search_text", build_search_text(defaults["title"], task, events or [], None)
    )
    trajectory = Trajectory.objects.create(**defaults)
    # Distinct, ordered creation times: "newest first" must not depend on clock resolution.
    step = next(_clock)
    created = (
        now - timedelta(minutes=age_minutes)
        if age_minutes is not None
        else now + timedelta(microseconds=step)
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(created_at=created, updated_at=created)
    if connection.vendor == "postgresql":
        # What the scan's search build does (services/search.py: trajectory_search_refresh).
        Trajectory.objects.filter(pk=trajectory.pk).update(search_vector=search_vector_expression())
    trajectory.refresh_from_db()
    if task:
        Event.objects.create(
            trajectory=trajectory,
            position=0,
            source="user",
            kind="message",
            type="message",
            text=task,
        )
    if events:
        Event.objects.bulk_create(
            Event(
                trajectory=trajectory,
                position=index + bool(task),
                source="agent",
                kind="action",
                type="run",
                text=text,
            )
            for index, text in enumerate(events)
        )
    # What the scan does after writing the map: the redaction index and the redacted view's
    # columns (filters, facets and stats read those). index=False leaves it to a test.
    if index:
        trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
        trajectory.refresh_from_db()
    return trajectory
