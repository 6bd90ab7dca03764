"""The stored summary of a trajectory's events (issue 24): the page's type counts and total and
the timeline strip read one row, never the events, whatever the length; the row follows every
change of the events (re-share, re-import) and is made again when it no longer matches."""

from __future__ import annotations

import importlib
import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.trajectories.models import Event, EventSummary, Trajectory
from apps.trajectories.selectors.viewer import summary_from_events
from apps.trajectories.services import ShareOptions, trajectory_ingest
from apps.trajectories.services.reimport import trajectory_reimport
from tests.trajectories.viewer_factories import ingest, openhands_session, session_bytes

pytestmark = pytest.mark.django_db


def _event_reads(captured) -> list[str]:
    table = Event._meta.db_table
    return [q["sql"] for q in captured.captured_queries if f'FROM "{table}"' in q["sql"]]


def _page_types(client: Client, trajectory: Trajectory) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(trajectory.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode(), _event_reads(captured)


@pytest.mark.parametrize("steps", [8, 400])
def test_a_page_view_reads_the_summary_not_the_events(steps, owner, django_assert_num_queries):
    trajectory = ingest(
        session_bytes(steps, screenshots=3, output_lines=3), owner=owner, visibility="public"
    )
    html, event_reads = _page_types(Client(), trajectory)
    # The first chunk's cards are the only events the page reads: no count over all of them.
    assert len(event_reads) == 1 and "GROUP BY" not in event_reads[0] and "LIMIT" in event_reads[0]
    assert f"{steps} steps" in html or f"{steps:,} steps" in html
    with django_assert_num_queries(2):  # access, the summary's row
        data = Client().get(f"{trajectory.get_absolute_url()}timeline").json()
    assert len(data["families"]) == steps


def test_the_summary_is_what_the_events_give(owner):
    trajectory = ingest(
        session_bytes(60, screenshots=4, output_lines=3), owner=owner, visibility="public"
    )
    stored = EventSummary.objects.get(trajectory=trajectory)
    made = summary_from_events(trajectory).row(trajectory.pk)
    assert stored.total == 60 == trajectory.num_events
    for name in ("types", "families", "errors", "screenshots", "chain_fingerprint"):
        assert getattr(stored, name) == getattr(made, name), name
    assert len(stored.screenshots) == 4 and stored.errors
    assert sum(n for _, n in stored.types) == 60


def test_a_re_share_that_extends_the_events_updates_the_summary(owner):
    events = openhands_session(30, screenshots=2, output_lines=3)
    options = ShareOptions(visibility="private", session_id="s-1")
    first = trajectory_ingest(data=json.dumps(events[:10]).encode(), user=owner, options=options)
    trajectory = first.stored[0].trajectory
    assert EventSummary.objects.get(trajectory=trajectory).total == 10
    again = trajectory_ingest(data=json.dumps(events).encode(), user=owner, options=options)
    assert again.stored[0].trajectory.pk == trajectory.pk
    summary = EventSummary.objects.get(trajectory=trajectory)
    assert summary.total == 30 and len(summary.families) == 30
    assert summary.types == summary_from_events(again.stored[0].trajectory).row(1).types
    owner_client = Client()
    owner_client.force_login(owner)
    html, _ = _page_types(owner_client, trajectory)
    assert "30 steps" in html


def test_a_stale_or_missing_summary_is_made_again_and_stored(owner):
    trajectory = ingest(
        session_bytes(20, screenshots=1, output_lines=3), owner=owner, visibility="public"
    )
    EventSummary.objects.filter(trajectory=trajectory).update(total=3, types=[["run", 3]])
    html, reads = _page_types(Client(), trajectory)
    assert "20 steps" in html and len(reads) == 2  # the events' small columns once, then cards
    assert EventSummary.objects.get(trajectory=trajectory).total == 20
    EventSummary.objects.filter(trajectory=trajectory).delete()
    _, reads = _page_types(Client(), trajectory)
    assert len(reads) == 2 and EventSummary.objects.get(trajectory=trajectory).total == 20
    _, reads = _page_types(Client(), trajectory)
    assert len(reads) == 1


def test_re_import_with_different_events_rewrites_the_summary(owner, monkeypatch):
    trajectory = ingest(
        session_bytes(12, screenshots=0, output_lines=3), owner=owner, visibility="public"
    )
    before = EventSummary.objects.get(trajectory=trajectory)
    # As if the importer made a different type of every run now (a newer importer).
    from apps.trajectories.services import reimport

    real = reimport.parse

    def parse(raw, **kwargs):
        result = real(raw, **kwargs)
        for event in result.trajectories[0].events:
            if event.type == "run":
                event.type = "run_ipython"
        return result

    monkeypatch.setattr(reimport, "parse", parse)
    assert trajectory_reimport(trajectory=trajectory).status == "updated events"
    after = EventSummary.objects.get(trajectory=trajectory)
    assert dict(after.types).get("run_ipython") == dict(before.types)["run"]
    assert "run" not in dict(after.types)


def test_the_migration_fills_the_summary_of_trajectories_stored_before_it(owner):
    from django.apps import apps

    trajectory = ingest(
        session_bytes(25, screenshots=2, output_lines=3), owner=owner, visibility="public"
    )
    expected = EventSummary.objects.get(trajectory=trajectory)
    EventSummary.objects.all().delete()
    migration = importlib.import_module("apps.trajectories.migrations.0013_event_summaries")
    migration.fill_summaries(apps, None)
    filled = EventSummary.objects.get(trajectory=trajectory)
    for name in ("total", "types", "families", "errors", "screenshots", "chain_fingerprint"):
        assert getattr(filled, name) == getattr(expected, name), name
