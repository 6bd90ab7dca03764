"""A refused CSRF check answers the site's own error page, saying what to do."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_post_without_a_token_gets_the_sites_403_page():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/delete-by-email/", {"email": "someone@example.org"})
    assert response.status_code == 403
    page = response.content.decode()
    assert 'class="site-header"' in page and "TrajHub" in page
    assert "reload the page and try again" in page
    assert "CSRF verification failed. Request aborted." not in page
