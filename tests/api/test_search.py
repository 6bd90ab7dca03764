"""Search: PostgreSQL full text over search_vector (GIN index); icontains on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.trajectories.filters import TrajectoryFilter
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.search import trajectory_search
from tests.conftest import skip_or_fail
from tests.ingest_helpers import ingest_one, make_trajectory, reindex, v0_events

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
    deployed = ingest_one(events, user=owner)
    Trajectory.objects.filter(pk=deployed.pk).update(visibility="public", review_state="approved")
    reindex(deployed)  # what its scan would do: ingest alone leaves nothing to search
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


# A token the scan finds (GitHub's classic personal access token), and a piece of it that the
# PostgreSQL parser makes a word of its own.
TOKEN_BODY = "Zq8rT2xLm4Vb7Nc1Kd9Pf3Hs6Jw0Ya5Ue8Io"
TOKEN = "ghp_" + TOKEN_BODY


def found_anywhere(q: str) -> list[str]:
    """Search over every trajectory, whatever its state: what the index itself finds (the
    owner's own list searches pending and held ones too)."""
    return search(q, Trajectory.objects.all())


def test_a_secret_is_found_by_no_search_between_ingest_and_scan(
    owner, django_capture_on_commit_callbacks
):
    events = v0_events(1, task="Deploy the service")
    events[2]["content"] = f"kubectl rollout with GITHUB_TOKEN={TOKEN} done"
    with django_capture_on_commit_callbacks(execute=False) as scan:  # stored, not yet scanned
        trajectory = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    assert scan  # the scan is queued on commit
    trajectory.refresh_from_db()
    assert trajectory.review_state == "pending"
    # Nothing of it is in the index yet: the search text is built by the scan alone.
    assert trajectory.search_text == "" and trajectory.search_vector is None
    for q in (TOKEN, TOKEN_BODY, "rollout", "Deploy"):
        assert found_anywhere(q) == [], q
    for callback in scan:
        callback()  # the scan (tasks run inline in tests)
    trajectory.refresh_from_db()
    placeholder = trajectory.redactions[TOKEN]
    assert placeholder.startswith("<") and placeholder.endswith(">")
    assert found_anywhere(TOKEN) == found_anywhere(TOKEN_BODY) == []
    assert found_anywhere(placeholder) == ["Deploy the service"]
    assert found_anywhere("rollout") == ["Deploy the service"]
    assert TOKEN_BODY not in trajectory.search_text and placeholder in trajectory.search_text


def test_a_reshare_leaves_no_new_secret_in_the_index_before_its_scan(
    owner, django_capture_on_commit_callbacks
):
    """A share continued with new events: the old search text goes, and the new one waits for
    the scan (it used to be built at once from the new raw text with the old map)."""
    events = v0_events(1, task="Deploy the service")
    with django_capture_on_commit_callbacks(execute=True):
        first = ingest_one(events, user=owner, session_id="s-1")
    assert found_anywhere("Deploy") == ["Deploy the service"]
    longer = v0_events(2, task="Deploy the service")
    longer[4]["content"] = f"export GITHUB_TOKEN={TOKEN}"
    with django_capture_on_commit_callbacks(execute=False) as scan:
        again = ingest_one(longer, user=owner, session_id="s-1")
    assert again.pk == first.pk
    assert found_anywhere(TOKEN) == found_anywhere(TOKEN_BODY) == found_anywhere("Deploy") == []
    for callback in scan:
        callback()
    assert found_anywhere(TOKEN) == found_anywhere(TOKEN_BODY) == []
    assert found_anywhere("Deploy") == ["Deploy the service"]


def test_a_renamed_title_enters_the_index_only_after_its_scan(
    owner, django_capture_on_commit_callbacks
):
    from apps.trajectories.services import trajectory_update

    trajectory = make_trajectory(owner=owner, task="alpha")
    with django_capture_on_commit_callbacks(execute=False) as scan:
        trajectory_update(trajectory=trajectory, title=f"token {TOKEN}")
    assert found_anywhere(TOKEN_BODY) == found_anywhere("token") == []
    for callback in scan:
        callback()
    trajectory.refresh_from_db()
    assert found_anywhere(TOKEN_BODY) == found_anywhere(TOKEN) == []
    assert found_anywhere(trajectory.redactions[TOKEN]) == [f"token {TOKEN}"]
