"""Issue 7's many-findings case: a public share of 20,000 outputs with 15 distinct emails each.

It was auto-approved with 300,000 redactions, and then its page took 47-61 s, its `find` over
120 s, and home, browse and the API list seconds: every surface redacted through one regular
expression of every original. Now it is held past TRAJHUB_SCAN_MAX_DISTINCT, and once a moderator
approves it, its surfaces spend the queries of any trajectory's and read the redactions once per
request (DESIGN.md: "a trajectory with a bound-exceeding number of findings: its page within the
2,000-event page budget"). Timing is bench/bench_page.py's `--many-findings` case, not a test.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from django.test import Client

from apps.moderation.services import trajectory_approve, trajectory_scan
from apps.trajectories import redaction
from apps.trajectories.models import Trajectory
from apps.trajectories.rendering import text as rendering_text
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db

OUTPUTS = int(os.environ.get("MANY_OUTPUTS", "20000"))
PER_OUTPUT = 15
EMAIL = re.compile(r"[a-z0-9.]+@gmail\.com")


def output(index: int) -> str:
    emails = " ".join(f"user{index}.{j}.leak@gmail.com" for j in range(PER_OUTPUT))
    return f"$ grep -r @ contacts/{index}.txt\n{emails}\n"


@pytest.fixture
def approved_many(admin_moderator, settings):
    settings.TRAJHUB_SCAN_MAX_FINDINGS = 1000
    trajectory = make_trajectory(
        title="Export the contact list", events=[output(i) for i in range(OUTPUTS)]
    )
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "held"  # past TRAJHUB_SCAN_MAX_DISTINCT (500)
    trajectory.refresh_from_db()
    assert len(trajectory.redactions) == OUTPUTS * PER_OUTPUT
    approved = trajectory_approve(trajectory=trajectory, moderator=admin_moderator)
    assert Trajectory.objects.public().filter(pk=approved.pk).exists()
    return approved


@pytest.fixture
def small():
    """An ordinary public trajectory with a few redactions: the queries every page spends."""
    trajectory = make_trajectory(
        title="Fix the failing test",
        events=[f"contact alice{i}@gmail.com, then run the tests" for i in range(30)],
    )
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved" and trajectory.redactions
    return trajectory


@pytest.fixture
def builds(monkeypatch):
    """How often a request builds redaction machinery: Marks, and matcher indexes."""
    counts = {"marks": 0, "index": 0}
    marks_init = rendering_text.Marks.__init__
    build_index = redaction.Matcher._build_index

    def counting_marks(self, *args, **kwargs):
        counts["marks"] += 1
        marks_init(self, *args, **kwargs)

    def counting_index(self):
        counts["index"] += 1
        build_index(self)

    monkeypatch.setattr(rendering_text.Marks, "__init__", counting_marks)
    monkeypatch.setattr(redaction.Matcher, "_build_index", counting_index)
    return counts


def queries(django_assert_max_num_queries, client: Client, path: str) -> tuple[int, str]:
    with django_assert_max_num_queries(20) as captured:
        response = client.get(path)
    assert response.status_code == 200, path
    return len(captured.captured_queries), response.content.decode()


def test_many_findings_page_fragment_find_and_lists_stay_in_the_page_budget(
    approved_many, small, builds, django_assert_max_num_queries
):
    client = Client()
    client.get("/")  # warm: the Site row and cached facts are read once per process
    for suffix in ("", "events?after=40", "find?q=leak"):
        base = f"/t/{small.share_id}/{suffix}"
        expected, _ = queries(django_assert_max_num_queries, client, base)
        builds.update(marks=0, index=0)
        count, body = queries(
            django_assert_max_num_queries, client, f"/t/{approved_many.share_id}/{suffix}"
        )
        # The same queries as an ordinary trajectory's, whatever the number of redactions.
        assert count == expected, suffix
        # One Marks per request (header, events and title share it), one index of the map.
        assert builds["marks"] == 1 and builds["index"] <= 2, (suffix, builds)
        if suffix != "find?q=leak":
            assert "&lt;EMAIL_" in body and not EMAIL.search(body), suffix
        else:
            # Searched in the redacted text: "leak" occurs only inside the emails.
            assert json.loads(body)["total"] == 0
    for path in ("/", "/browse/", "/api/v1/trajectories"):
        client.get(path)  # warm: facets and cached facts
        with_many, body = queries(django_assert_max_num_queries, client, path)
        assert "Export the contact list" in body, path
        assert not EMAIL.search(body), path
        Trajectory.objects.filter(pk=approved_many.pk).update(visibility="private")
        client.get(path)
        without, _ = queries(django_assert_max_num_queries, client, path)
        Trajectory.objects.filter(pk=approved_many.pk).update(visibility="public")
        assert with_many == without, path
    # A list redacts short titles without building an index of 300,000 originals.
    builds.update(marks=0, index=0)
    queries(django_assert_max_num_queries, client, "/browse/")
    assert builds["index"] == 0
