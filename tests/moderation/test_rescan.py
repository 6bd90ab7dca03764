"""Scan versioning: each scan records the engine and rules version; when they change, public
trajectories are rescanned (sweep, newest first, bounded; `manage.py rescan`; an admin action)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from apps.moderation import tasks
from apps.moderation.scanning import scanner
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


def current() -> str:
    from django.conf import settings

    return scanner.version(settings.TRAJHUB_SCAN_RULE_CACHE)


def test_each_scan_records_the_engine_and_rules_version():
    trajectory = make_trajectory(events=["ls"])
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert trajectory.scan_version == current()
    assert trajectory.scan_version.startswith("kingfisher-") and ";hand-" in trajectory.scan_version
    assert trajectory.scanned_at is not None


def test_the_sweep_rescans_public_trajectories_of_older_rules_newest_first(settings):
    old = [make_trajectory(events=["ls"], age_seconds=3600 - i) for i in range(3)]
    for trajectory in old:
        trajectory_scan(trajectory=trajectory)
    private = make_trajectory(events=["ls"], visibility="private")
    trajectory_scan(trajectory=private)
    Trajectory.objects.update(scan_version="kingfisher-0.0+old;hand-old")
    settings.TRAJHUB_SCAN_SWEEP_BATCH = 2
    assert tasks.rescan_sweep() == 2  # bounded
    versions = dict(Trajectory.objects.values_list("pk", "scan_version"))
    assert versions[old[2].pk] == current() and versions[old[1].pk] == current()  # newest first
    assert versions[old[0].pk] != current() and versions[private.pk] != current()
    assert tasks.rescan_sweep() == 1 and tasks.rescan_sweep() == 0  # public ones only, once


def test_a_rescan_that_finds_a_new_secret_holds_an_approved_trajectory():
    """Newer rules find what older ones missed: it stays redacted and a moderator looks again."""
    key = s.sendgrid_key()
    trajectory = make_trajectory(events=[f"export SENDGRID={key}"])
    # As approved by an older scanner that did not know the format.
    Trajectory.objects.filter(pk=trajectory.pk).update(
        review_state="approved", redactions={}, scan_version="old"
    )
    call_command("rescan", stdout=StringIO())
    trajectory.refresh_from_db()
    assert trajectory.review_state == "held"
    assert trajectory.redactions[key] == "<SENDGRID_API_KEY_1>"


def test_rescan_command_and_admin_action(admin_moderator):
    trajectory = make_trajectory(events=["mail jane.roe@gmail.com"])
    trajectory_scan(trajectory=trajectory)
    out = StringIO()
    call_command("rescan", "--all", stdout=out)
    assert "rescanned 1 trajectories" in out.getvalue() and "1 approved" in out.getvalue()
    Trajectory.objects.update(scan_version="old")
    client = Client()
    client.force_login(admin_moderator)
    url = reverse("admin:trajectories_trajectory_changelist")
    response = client.post(
        url, {"action": "rescan", "_selected_action": [trajectory.pk]}, follow=True
    )
    assert response.status_code == 200 and b"1 trajectories rescanned" in response.content
    trajectory.refresh_from_db()
    assert trajectory.scan_version == current()
