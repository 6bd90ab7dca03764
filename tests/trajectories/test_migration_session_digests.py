"""Migration 0004's data step: stored session ids become HMACs (an anonymous share's, which
nothing tells apart from one an importer derived, is dropped), and the first time a stored share
entered public() is recorded where it is missing."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from apps.trajectories.models import Trajectory
from apps.trajectories.services import dedup
from apps.trajectories.services.dedup import session_digest
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

migration = importlib.import_module(
    "apps.trajectories.migrations.0004_share_chains_and_session_digests"
)


def test_forwards_hashes_account_session_ids_and_drops_anonymous_ones(owner):
    owned = make_trajectory(owner=owner, visibility="private")
    anonymous = make_trajectory(visibility="private", email="a@example.org")
    shown = make_trajectory(visibility="public")
    Trajectory.objects.filter(pk=owned.pk).update(client_session_id="plain-session-1")
    Trajectory.objects.filter(pk=anonymous.pk).update(client_session_id="eval-row@abc")
    Trajectory.objects.filter(pk=shown.pk).update(published_at=None)

    migration.forwards(apps, None)

    owned.refresh_from_db()
    anonymous.refresh_from_db()
    shown.refresh_from_db()
    assert owned.client_session_id == session_digest("plain-session-1")
    assert anonymous.client_session_id == ""
    assert shown.published_at == shown.updated_at
    assert migration.SESSION_SALT == dedup.SESSION_SALT  # one HMAC, before and after
