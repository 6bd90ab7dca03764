"""Stars (issue 23): signed-in users star public trajectories; the count shows on rows and
pages, browse and the API sort by it, the home page shows the week's most starred. Each surface
as anonymous, owner, other user, moderator and staff."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.services import api_token_create
from apps.stars.models import Star
from apps.stars.services import LIMIT_PER_HOUR
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def star(client: Client, trajectory: Trajectory, starred: bool = True):
    return client.post(f"/t/{trajectory.share_id}/star", {"starred": "1" if starred else "0"})


def count(trajectory: Trajectory) -> int:
    trajectory.refresh_from_db()
    return trajectory.star_count


def test_a_star_counts_once_and_comes_back_off(owner, other_user):
    trajectory = make_trajectory(owner=owner)
    reader = signed_in(other_user)

    answer = star(reader, trajectory)

    assert answer.status_code == 302 and answer["Location"] == f"/t/{trajectory.share_id}/"
    assert count(trajectory) == 1
    star(reader, trajectory)  # twice: still one
    assert count(trajectory) == 1 and Star.objects.count() == 1
    page = reader.get(f"/t/{trajectory.share_id}/").content.decode()
    assert "★ Starred" in page and 'class="star-count">1<' in page
    star(signed_in(owner), trajectory)  # the owner may star their own
    assert count(trajectory) == 2

    star(reader, trajectory, starred=False)

    assert count(trajectory) == 1
    page = reader.get(f"/t/{trajectory.share_id}/").content.decode()
    assert "☆ Star" in page and 'class="star-count">1<' in page


def test_anonymous_visitors_see_the_count_and_are_asked_to_sign_in(owner, other_user):
    trajectory = make_trajectory(owner=owner)
    star(signed_in(other_user), trajectory)

    page = Client().get(f"/t/{trajectory.share_id}/").content.decode()

    assert "/accounts/login/?next=/t/" in page and 'class="star-count">1<' in page
    answer = Client().post(f"/t/{trajectory.share_id}/star", {"starred": "1"})
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
    assert count(trajectory) == 1


@pytest.mark.parametrize(
    ("visibility", "review_state"),
    [("private", "approved"), ("public", "pending"), ("public", "held"), ("public", "rejected")],
)
def test_nothing_that_is_not_public_can_be_starred_or_shows_a_star(
    owner, other_user, moderator, staff, visibility, review_state
):
    trajectory = make_trajectory(owner=owner, visibility=visibility, review_state=review_state)

    for user in (owner, other_user, moderator, staff):
        assert star(signed_in(user), trajectory).status_code == 404
        page = signed_in(user).get(f"/t/{trajectory.share_id}/")
        assert "star-button" not in page.content.decode()
    assert Star.objects.count() == 0 and count(trajectory) == 0
    token = api_token_create(user=other_user, name="t")[1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.put(f"/api/v1/trajectories/{trajectory.share_id}/star").status_code == 404


def test_the_api_stars_with_a_token_and_says_where_things_stand(owner, other_user):
    trajectory = make_trajectory(owner=owner)
    token = api_token_create(user=other_user, name="t")[1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    url = f"/api/v1/trajectories/{trajectory.share_id}/star"

    assert api.get(url).json() == {"starred": False, "stars": 0}
    assert api.put(url).json() == {"starred": True, "stars": 1}
    assert api.put(url).json() == {"starred": True, "stars": 1}
    assert api.get(url).json() == {"starred": True, "stars": 1}
    listed = APIClient().get("/api/v1/trajectories").json()["results"]
    assert [row["stars"] for row in listed] == [1]
    assert api.delete(url).json() == {"starred": False, "stars": 0}
    anonymous = APIClient().put(url)
    assert anonymous.status_code == 401 and "error" in anonymous.json()


def test_browse_and_the_api_sort_by_stars(owner, django_user_model):
    few, many, none = (make_trajectory(owner=owner, task=f"task {i}") for i in range(3))
    readers = [django_user_model.objects.create_user(f"reader{i}") for i in range(3)]
    for reader in readers:
        star(signed_in(reader), many)
    star(signed_in(readers[0]), few)

    page = Client().get("/browse/?ordering=-stars").content.decode()
    api = APIClient().get("/api/v1/trajectories?ordering=-stars").json()["results"]

    order = [page.index(f"/t/{t.share_id}/") for t in (many, few, none)]
    assert order == sorted(order)
    assert "★ 3" in page and "★ 1" in page and "Most starred" in page
    assert [row["id"] for row in api] == [many.share_id, few.share_id, none.share_id]


def test_the_home_page_shows_the_weeks_most_starred_and_only_public_ones(owner, django_user_model):
    old, hot, hidden = (make_trajectory(owner=owner, task=f"task {i}") for i in range(3))
    readers = [django_user_model.objects.create_user(f"reader{i}") for i in range(2)]
    for reader in readers:
        star(signed_in(reader), hot)
        star(signed_in(reader), hidden)
    star(signed_in(readers[0]), old)
    Star.objects.filter(trajectory=old).update(created_at=timezone.now() - timedelta(days=8))
    Trajectory.objects.filter(pk=hidden.pk).update(visibility="private")

    home = Client().get("/").content.decode()

    section = home[home.index("Most starred this week") :]
    assert f"/t/{hot.share_id}/" in section
    assert f"/t/{old.share_id}/" not in section  # starred more than a week ago
    assert f"/t/{hidden.share_id}/" not in home  # private now: on no public page


def test_deleting_an_account_takes_its_stars_off_the_counts(owner, other_user):
    trajectory = make_trajectory(owner=owner)
    star(signed_in(other_user), trajectory)
    star(signed_in(owner), trajectory)

    other_user.delete()

    assert count(trajectory) == 1 and Star.objects.count() == 1


def test_starring_is_rate_limited_per_account(owner, other_user, monkeypatch):
    trajectory = make_trajectory(owner=owner)
    monkeypatch.setattr("apps.stars.services.LIMIT_PER_HOUR", 3)
    reader = signed_in(other_user)
    for _ in range(3):
        star(reader, trajectory, starred=True)

    answer = star(reader, trajectory, starred=False)

    assert answer.status_code == 429 and int(answer["Retry-After"]) > 0
    assert "too many stars" in answer.content.decode()
    assert count(trajectory) == 1
    assert LIMIT_PER_HOUR == 300


def test_the_browse_page_reads_the_count_without_more_queries(
    owner, other_user, django_assert_max_num_queries
):
    for index in range(20):
        trajectory = make_trajectory(owner=owner, task=f"task {index}")
        star(signed_in(other_user), trajectory)
    client = Client()
    client.get("/browse/?ordering=-stars")  # warm the facet cache

    with django_assert_max_num_queries(6):
        answer = client.get("/browse/?ordering=-stars")

    assert answer.content.decode().count("★ 1") == 20
