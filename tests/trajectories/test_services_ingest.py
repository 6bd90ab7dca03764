"""Ingest service: parse, clean, store, dedup."""

import pytest

from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest

pytestmark = pytest.mark.django_db


def test_made_share_payload_is_stored(made_fixture):
    data = made_fixture("openhands_share_payload_with_screenshots.json")
    result = trajectory_ingest(data=data, user=None, options=ShareOptions())
    assert result.errors == []
    (stored,) = result.stored
    assert stored.created and stored.password
    trajectory = Trajectory.objects.get()
    assert trajectory.num_events == Event.objects.count() == 13
