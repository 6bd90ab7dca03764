"""Search: PostgreSQL full text over search_vector (GIN index); icontains on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.trajectories.filters import TrajectoryFilter
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors import trajectory_search
from tests.conftest import skip_or_fail
from tests.ingest_helpers import make_trajectory, v0_events

pytestmark = pytest.mark.django_db


def search(q: str, queryset=None) -> list[str]:
    queryset = Trajectory.objects.public() if queryset is None else queryset
    filterset = TrajectoryFilter({"q": q}, queryset=queryset)
    assert filterset.is_valid(), filterset.errors
    return sorted(t.title for t in filterset.qs)


def test_search_finds_titles_and_event_text_of_public_trajectories_only(owner):
    make_trajectory(owner=owner, task="Fix the flaky login tests")
    other = make_trajectory(owner=owner, task="Plot the quarterly revenue")
    make_trajectory(owner=owner, task="Fix the secret private thing", visibility="private")
    events = v0_events(1, task="Deploy the service")
    events[2]["content"] = "kubectl rollout status deployment/frontend"
    from tests.ingest_helpers import ingest_one

    deployed = ingest_one(events, user=owner)
    Trajectory.objects.filter(pk=deployed.pk).update(visibility="public", review_state="approved")
    assert search("login") == ["Fix the flaky login tests"]
    assert search("fix") == ["Fix the flaky login tests"]  # the private one is never found
    assert search("rollout") == ["Deploy the service"]  # text of an observation
    assert search("quarterly revenue") == ["Plot the quarterly revenue"]  # every word
    assert search("revenue login") == []
    assert search("nothing-like-this") == []
    assert search("") == sorted(
        ["Fix the flaky login tests", "Plot the quarterly revenue", "Deploy the service"]
    )
    assert other.search_text.startswith("Plot the quarterly revenue")


def test_renaming_updates_search(owner, django_capture_on_commit_callbacks):
    from apps.trajectories.services import trajectory_update

    trajectory = make_trajectory(owner=owner, task="alpha")
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=trajectory, title="Zebra crossing")
    # A new title is unscanned text: hidden until the scan (run on commit) approves it again.
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"
    assert search("zebra") == ["Zebra crossing"]


def test_a_renamed_title_is_scanned_before_it_is_public(owner, django_capture_on_commit_callbacks):
    from apps.trajectories.services import trajectory_update

    trajectory = make_trajectory(owner=owner, task="alpha")
    secret = "ghp_" + "Zq8rT2xLm4Vb7Nc1Kd9Pf3Hs6Jw0Ya5Ue8Io"
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=trajectory, title=f"token {secret}")
    trajectory.refresh_from_db()
    assert trajectory.review_state == "held"
    assert search("token") == []


def test_search_uses_the_gin_index_on_postgresql(owner):
    if connection.vendor != "postgresql":
        skip_or_fail("full-text search runs on PostgreSQL (set DATABASE_URL)")
    for index in range(5):
        make_trajectory(owner=owner, task=f"task number {index}")
    queryset = trajectory_search(Trajectory.objects.all(), "number")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = queryset.explain()
    assert "traj_search_vector_gin" in plan, plan
    assert Trajectory.objects.filter(search_vector__isnull=True).count() == 0


def test_search_never_finds_a_trajectory_by_what_its_redactions_hide(owner):
    from apps.trajectories.services import trajectory_search_refresh

    trajectory = make_trajectory(owner=owner, task="mail alice@corp.example the quarterly report")
    assert search("alice@corp.example") == ["mail alice@corp.example the quarterly report"]
    # The scan found the address: with its placeholder in place, search forgets the original.
    Trajectory.objects.filter(pk=trajectory.pk).update(
        redactions={"alice@corp.example": "<EMAIL_1>"}
    )
    trajectory.refresh_from_db()
    trajectory_search_refresh(trajectory=trajectory)
    assert search("alice@corp.example") == []
    assert search("quarterly") == ["mail alice@corp.example the quarterly report"]
    trajectory.refresh_from_db()
    assert "alice@corp.example" not in trajectory.search_text


def test_search_never_finds_what_the_scan_redacted(owner, django_capture_on_commit_callbacks):
    from tests.ingest_helpers import ingest_one

    events = v0_events(1, task="Email the report")
    events[2]["content"] = "sent to jane.roe@corp-mail.io from the build box"
    with django_capture_on_commit_callbacks(execute=True):  # the scan runs on commit
        trajectory = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"
    assert "jane.roe@corp-mail.io" in trajectory.redactions
    assert search("report") == ["Email the report"]
    assert search("jane.roe@corp-mail.io") == []
    assert "jane.roe" not in trajectory.search_text
