"""The list API reads its rows as values and builds its FilterSet once per class (issue 24): its
answers are byte for byte what the model-instance path and django-filter's own FilterSet gave,
for a mix of trajectories (redacted or not, indexed or not, owned or anonymous, hidden, chained,
with and without dates, tokens, cost, outcome and readers' signal), filters, orderings, cursor
pages, bad input and callers; and it runs the same single query."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

import django_filters
import orjson
import pytest

from apps.core.filtersets import SharedFilterSet
from apps.trajectories.api import views
from apps.trajectories.models import FlaggedDecile, Trajectory
from apps.trajectories.selectors.list_rows import ListRow
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
SECRET = "alice@corp.example"
PATHS = [
    f"{URL}?limit=3",
    f"{URL}?limit=200",
    f"{URL}?ordering=-stars&limit=2",
    f"{URL}?ordering=-corrections&limit=2",
    f"{URL}?ordering=events&limit=2",
    f"{URL}?ordering=-events&limit=50",
    f"{URL}?ordering=created",
    f"{URL}?has_corrections=1",
    f"{URL}?has_corrections=0&flagged=0",
    f"{URL}?flagged=1",
    f"{URL}?flagged_at=3",
    f"{URL}?flagged_at=7&ordering=-stars",
    f"{URL}?outcome=resolved",
    f"{URL}?outcome=unresolved&polarity=negative",
    f"{URL}?polarity=positive",
    f"{URL}?agent=CodeActAgent",
    f"{URL}?model=gpt-4o",
    f"{URL}?source_format=openhands_v0&ordering=-events",
    f"{URL}?created_after=2025-01-02T00:00:00%2B02:00",
    f"{URL}?created_before=2025-01-02T00:00:00Z",
    f"{URL}?q=report",
    f"{URL}?q=mail&ordering=-created",
    f"{URL}?owner=me",
    f"{URL}?owner=me&visibility=private",
    f"{URL}?owner=me&review_state=pending&limit=1",
    # Bad input: the same 4xx and the same words.
    f"{URL}?ordering=sideways",
    f"{URL}?flagged_at=12",
    f"{URL}?has_corrections=maybe",
    f"{URL}?created_after=yesterday",
    f"{URL}?created_after=2025-01-01T00:00:00%2B20:00",
    f"{URL}?limit=50&cursor=bm9uc2Vuc2U",
    f"{URL}?owner=you",
    f"{URL}?page_size=10",
]


@pytest.fixture
def mix(owner, other_user):
    """Trajectories of every kind a list meets."""
    made = []
    for index, (user, visibility, review_state) in enumerate(
        [
            (owner, "public", "approved"),
            (owner, "public", "approved"),
            (None, "public", "approved"),
            (other_user, "public", "approved"),
            (owner, "private", "approved"),
            (owner, "public", "pending"),
            (other_user, "public", "rejected"),
            (None, "public", "hidden"),
            (owner, "public", "held"),
        ]
    ):
        redacted = index % 2 == 0
        trajectory = make_trajectory(
            owner=user,
            visibility=visibility,
            review_state=review_state,
            steps=2 + index,
            # A task of its own: one that extends another's steps would join its chain.
            task=f"mail {SECRET} the report {index}" if redacted else f"list the files {index}",
            redactions={SECRET: "<EMAIL_1>"} if redacted else None,
        )
        made.append(trajectory)
    first, second, anonymous, others = made[:4]
    Trajectory.objects.filter(pk=first.pk).update(
        title=f"mail {SECRET}",
        agent="CodeActAgent",
        model_name="gpt-4o",
        polarity="negative",
        feedback_text=f"{SECRET} was right",
        total_tokens=1234,
        total_cost=0.125,
        started_at=datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        ended_at=datetime(2025, 1, 2, 3, 9, tzinfo=UTC),
        outcome="unresolved",
        outcome_score=0.0,
        outcome_source="openhands_eval",
        star_count=3,
        correction_count=2,
        first_wrong_count=1,
        first_wrong_deciles=1 << 3,
    )
    Trajectory.objects.filter(pk=second.pk).update(
        polarity="positive",
        outcome="resolved",
        outcome_source="owner",
        star_count=3,
        first_wrong_count=2,
        first_wrong_deciles=1 << 7,
        created_at=datetime(2025, 1, 1, 12, tzinfo=UTC),
    )
    Trajectory.objects.filter(pk=anonymous.pk).update(star_count=7, correction_count=1)
    FlaggedDecile.objects.create(trajectory=first, decile=3, marks=1)
    FlaggedDecile.objects.create(trajectory=second, decile=7, marks=2)
    FlaggedDecile.objects.create(trajectory=made[5], decile=3, marks=1)  # pending: never listed
    Trajectory.objects.filter(pk=made[5].pk).update(first_wrong_count=1, first_wrong_deciles=8)
    # A continuation of `others` (the same chain): the list shows the longer one only.
    longer = make_trajectory(owner=other_user, steps=9, task="count the files")
    Trajectory.objects.filter(pk__in=[others.pk, longer.pk]).update(chain_key="chain-1")
    # Indexes that cannot be used: never built (the whole map is read in the same query), and
    # one left current but made from other strings (the map is read from the table after).
    Trajectory.objects.filter(pk=anonymous.pk).update(indexed_at=None)
    Trajectory.objects.filter(pk=first.pk).update(title=f"mail {SECRET} again")
    return made


def _as_before(monkeypatch) -> None:
    """The list as it was: django-filter's FilterSet (deep copies and all) and model instances."""
    for name in ("__init__", "get_form_class", "filter_queryset"):
        monkeypatch.setattr(SharedFilterSet, name, getattr(django_filters.FilterSet, name))
    monkeypatch.setattr(
        views,
        "list_values",
        lambda queryset: queryset.defer(
            "search_text", "search_vector", "deletion_password_hashes", "metadata"
        ),
    )
    monkeypatch.setattr(views, "list_rows", list)


def _pages(client, path: str) -> list[tuple[int, bytes]]:
    """The answer to `path` and to each next page after it."""
    answers = []
    while path:
        response = client.get(path)
        answers.append((response.status_code, response.content))
        following = (
            orjson.loads(response.content).get("next") if response.status_code == 200 else None
        )
        path = f"{urlsplit(following).path}?{urlsplit(following).query}" if following else ""
    return answers


@pytest.mark.parametrize("caller", ["anonymous", "owner", "other_user", "moderator"])
def test_the_answers_are_the_old_ones_byte_for_byte(
    mix, client_as, owner, other_user, moderator, caller, monkeypatch
):
    user = {"anonymous": None, "owner": owner, "other_user": other_user, "moderator": moderator}
    client = client_as(user[caller])
    new = {path: _pages(client, path) for path in PATHS}
    with monkeypatch.context() as before:
        _as_before(before)
        old = {path: _pages(client, path) for path in PATHS}
    assert new == old
    listed = orjson.loads(new[f"{URL}?limit=200"][0][1])["results"]
    # What the comparison covered: the public listed rows (one of the chain), redacted for
    # everyone but their owner and moderators, and errors.
    assert len(listed) == 4
    if caller == "anonymous":
        assert SECRET not in str(new) and "<EMAIL_1>" in str(listed)
    statuses = {status for answers in new.values() for status, _ in answers}
    assert statuses == ({200, 400, 401} if caller == "anonymous" else {200, 400})


def test_a_stale_index_reads_the_whole_map_after_the_page(mix, client_as, monkeypatch):
    """A row whose index is marked current but was made from other strings redacts with the
    whole map, read from the table as a model's deferred field would be: one query more."""
    reads = []
    original = ListRow.__getattr__

    def counting(row, name):
        reads.append(name)
        return original(row, name)

    monkeypatch.setattr(ListRow, "__getattr__", counting)
    body = client_as(None).get(f"{URL}?limit=200").json()
    assert reads == ["redactions"]
    stale = next(row for row in body["results"] if row["title"].endswith(" again"))
    assert stale["title"] == "mail <EMAIL_1> again" and stale["feedback_text"].startswith("<EMAIL")


def test_the_list_runs_one_query(mix, client_as, django_assert_num_queries):
    Trajectory.objects.filter(title__endswith=" again").update(indexed_at=None)
    with django_assert_num_queries(1):
        assert client_as(None).get(f"{URL}?limit=200&ordering=-stars").status_code == 200
    with django_assert_num_queries(1):
        assert client_as(None).get(f"{URL}?flagged_at=3").status_code == 200


def test_flagged_at_can_be_answered_by_its_own_index(mix):
    """?flagged_at= filters by the tenth's bit in the same expression as the condition of that
    tenth's partial index, so PostgreSQL can read a page from it (deciles.py): with sequential
    scans off, the plan names it, unless the two expressions drift apart."""
    from django.db import connection

    from apps.trajectories.filters import TrajectoryFilter

    if connection.vendor != "postgresql":
        from tests.conftest import skip_or_fail

        skip_or_fail("the partial indexes are read by PostgreSQL's planner only")
    queryset = TrajectoryFilter({"flagged_at": "3"}, queryset=Trajectory.objects.public()).qs
    assert [row.pk for row in queryset] == [mix[0].pk]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        plan = queryset.all()[:51].explain()
    assert "traj_public_flagged_at_3" in plan, plan
