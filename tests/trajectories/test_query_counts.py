"""Every page that lists or looks up rows spends a fixed number of SQL queries, whatever the rows.

The list pages (home, browse, /me/, the viewer, the API) pin theirs beside their own tests; this
file pins the rest: the feed, the sitemap, the static pages and the forms.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def _count_queries(django_assert_num_queries, client: Client, path: str, expected: int):
    with django_assert_num_queries(expected) as captured:
        response = client.get(path)
    assert response.status_code == 200, path
    return len(captured.captured_queries)


@pytest.mark.parametrize(
    ("path", "queries"),
    [
        ("/feed.atom", 1),
        ("/sitemap.xml", 1),
        ("/sitemap-trajectories.xml", 2),
        ("/terms/", 0),
        ("/privacy/", 0),
        ("/license/", 0),
        ("/removal/", 0),
        ("/upload/", 0),
        ("/releases/", 2),
        (f"/t/{'a' * 64}/unlock", 0),
    ],
)
def test_query_count_does_not_grow_with_public_rows(
    path, queries, client, django_assert_num_queries
):
    for index in range(3):
        make_trajectory(title=f"Run {index}", events=["one", "two"])
    client.get(path)  # warm: the Site row and cached facts are read once per process
    few = _count_queries(django_assert_num_queries, client, path, queries)
    for index in range(3, 30):
        make_trajectory(title=f"Run {index}", events=["one", "two"])
    many = _count_queries(django_assert_num_queries, client, path, queries)
    assert few == many, f"{path}: {few} queries with 3 trajectories, {many} with 30"
