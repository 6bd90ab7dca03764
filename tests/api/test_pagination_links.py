"""next/previous links come from TRAJHUB_SITE_URL, never from the request's (forgeable) Host."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


@override_settings(
    ALLOWED_HOSTS=["evil.example", "testserver"], SITE_URL="https://trajhub.test:8443"
)
def test_next_and_previous_links_start_with_the_site_url(owner):
    trajectory = None
    for number in range(3):
        trajectory = make_trajectory(owner=owner, task=f"list the files {number}")
    client = APIClient()
    client.force_authenticate(user=owner)
    first = client.get("/api/v1/trajectories?owner=me&limit=1", HTTP_HOST="evil.example:1234")
    assert first.status_code == 200, first.content
    next_link = first.json()["next"]
    assert next_link.startswith("https://trajhub.test:8443/api/v1/trajectories?"), next_link
    assert "evil.example" not in next_link and "limit=1" in next_link
    second = client.get(
        next_link.removeprefix("https://trajhub.test:8443"), HTTP_HOST="evil.example:1234"
    )
    assert second.json()["previous"].startswith("https://trajhub.test:8443/api/v1/trajectories?")
    events = client.get(
        f"/api/v1/trajectories/{trajectory.share_id}/events?limit=1", HTTP_HOST="evil.example:1234"
    )
    assert events.json()["next"].startswith(
        f"https://trajhub.test:8443/api/v1/trajectories/{trajectory.share_id}/events?"
    )
