"""Public profiles (/u/<username>/): the account's public trajectories, whoever asks."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.trajectories.site_factories import NOT_PUBLIC_STATES, make_trajectory

pytestmark = pytest.mark.django_db


def test_profile_lists_public_trajectories_only_whoever_asks(
    owner, other_user, moderator, staff, django_assert_num_queries
):
    public = make_trajectory(owner=owner, title="Public one")
    hidden = [
        make_trajectory(owner=owner, title=f"Not public {name}", **fields)
        for name, fields in NOT_PUBLIC_STATES.items()
    ]
    make_trajectory(owner=other_user, title="Someone else's public")
    for user in (None, owner, other_user, moderator, staff):
        client = Client()
        if user is not None:
            client.force_login(user)
        response = client.get("/u/owner/")
        html = response.content.decode()
        assert response.status_code == 200
        assert "Public one" in html and public.share_id in html
        for trajectory in hidden:
            assert trajectory.share_id not in html and "Not public" not in html
        assert "Someone else" not in html
    client = Client()
    with django_assert_num_queries(4):  # user, social account, count, page
        client.get("/u/owner/")
