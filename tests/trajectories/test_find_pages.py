"""Find answers a page of matches (issue 24, find as you type at 50,000 steps): a query that
matches more steps than a page still counts them all, and walking the pages, from the reader's
place or by rank, reaches every match; the reader's filter leaves its types out; and the index
kept in the process between requests is never used once the map has changed."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.find import find_by_reading
from tests.ingest_helpers import reindex
from tests.trajectories.viewer_factories import ingest, openhands_session

pytestmark = pytest.mark.django_db

EMAIL = "jane.doe@example-mail.com"


def _indexed(owner, steps: int = 120, redactions=None) -> Trajectory:
    events = openhands_session(steps, screenshots=0, output_lines=4)
    events[2]["content"] = f"sent to {EMAIL}\n"
    trajectory = ingest(
        json.dumps(events).encode(), owner=owner, visibility="public", redactions=redactions or {}
    )
    reindex(trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def _find(trajectory: Trajectory, **params) -> dict:
    response = Client().get(f"{trajectory.get_absolute_url()}find", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_query_matching_more_steps_than_a_page_counts_all_and_pages_reach_every_match(owner):
    trajectory = _indexed(owner)
    every = find_by_reading(trajectory, "run", show_original=False)
    assert every.matched > 20  # more than twice the page asked for below
    first = _find(trajectory, q="run", limit=10)
    assert len(first["steps"]) == 10 and first["offset"] == 0 and first["next"] == 10
    # The counts are of all the matches, not of the page.
    assert (first["matched"], first["total"]) == (every.matched, every.total)
    walked, offset = [], 0
    while offset is not None:
        page = _find(trajectory, q="run", limit=10, offset=offset)
        assert page["offset"] == offset
        walked += [tuple(row) for row in page["steps"]]
        offset = page["next"]
    assert walked == every.steps  # past the first page too, in order, each once


def test_a_page_from_the_readers_place_starts_at_the_first_match_there_and_wraps(owner):
    trajectory = _indexed(owner)
    steps = [step for step, _, _ in find_by_reading(trajectory, "run", show_original=False).steps]
    middle = steps[len(steps) // 2]
    page = _find(trajectory, q="run", limit=5, **{"from": middle - 1})
    # Its rank among all, so the reader sees "i / N" and can step back from it.
    assert page["offset"] == steps.index(middle) - (1 if middle - 1 in steps else 0)
    assert [step for step, _, _ in page["steps"]] == steps[page["offset"] : page["offset"] + 5]
    past = _find(trajectory, q="run", limit=5, **{"from": steps[-1] + 1})
    assert past["offset"] == 0 and past["steps"][0][0] == steps[0]
    bad = Client().get(f"{trajectory.get_absolute_url()}find", {"q": "run", "from": "x"})
    assert bad.status_code == 400 and "from" in bad.json()["error"]


def test_the_readers_filter_leaves_its_types_out_of_the_counts_and_pages(owner):
    trajectory = _indexed(owner)
    every = find_by_reading(trajectory, "e", show_original=False)
    hidden = every.steps[0][2]
    kept = [row for row in every.steps if row[2] != hidden]
    assert kept and len(kept) < every.matched
    page = _find(trajectory, q="e", hide=hidden)
    assert [tuple(row) for row in page["steps"]] == kept
    assert page["matched"] == len(kept) and page["total"] == sum(hits for _, hits, _ in kept)


def test_the_index_kept_between_requests_is_not_used_once_the_map_changed(owner):
    trajectory = _indexed(owner)
    assert _find(trajectory, q="jane")["total"] == 1  # the index is now kept in this process
    assert _find(trajectory, q="run", limit=1)["matched"] > 1
    # A moderator redacts the address: the new map's index answers, never the kept one.
    Trajectory.objects.filter(pk=trajectory.pk).update(redactions={EMAIL: "<EMAIL_1>"})
    reindex(trajectory)
    for query in ("jane", "jane.doe", "example"):
        assert _find(trajectory, q=query)["matched"] == 0, query
    assert _find(trajectory, q="email_1")["matched"] == 1


def test_cards_come_with_the_answer_around_its_first_match_redacted_for_visitors(owner):
    trajectory = _indexed(owner, redactions={EMAIL: "<EMAIL_1>"})
    answer = _find(trajectory, q="sent to", cards="1", **{"from": "1"})
    first = answer["steps"][0][0]
    assert f'id="step-{first}"' in answer["cards"]
    assert "&lt;EMAIL_1&gt;" in answer["cards"] and EMAIL not in answer["cards"]
    assert "cards" not in _find(trajectory, q="sent to")  # only when asked
    assert "cards" not in _find(trajectory, q="zzz-nowhere", cards="1")


def test_warm_reads_the_index_ahead_so_a_keystroke_reads_nothing_of_it(owner):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.trajectories.selectors import find_store

    trajectory = _indexed(owner)
    find_store.clear()
    assert _find(trajectory, warm="1")["steps"] == []
    with CaptureQueriesContext(connection) as captured:
        assert _find(trajectory, q="r", limit=5)["matched"] > 5
        assert _find(trajectory, q="round 1", limit=5)["matched"] > 0
    index = "trajectories_findindex"
    assert not [query for query in captured.captured_queries if index in query["sql"]]
