"""The API tokens page: create with a name (the secret shown once), last used, revoke."""

from __future__ import annotations

import re

import pytest

from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_create

pytestmark = pytest.mark.django_db


def _secret(html: str) -> str:
    match = re.search(r'id="new-token">([^<]+)<', html)
    assert match, "no secret on the page"
    return match.group(1)


def test_create_shows_the_secret_once_stores_a_hash_and_it_works(client, owner):
    client.force_login(owner)
    response = client.post("/me/tokens/", {"name": "laptop"})
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    secret = _secret(response.content.decode())
    token = ApiToken.objects.get(user=owner)
    assert token.name == "laptop" and secret.startswith(token.prefix)
    assert secret not in str(ApiToken.objects.values().get())

    page = client.get("/me/tokens/").content.decode()
    assert secret not in page and "laptop" in page and "never" in page

    api = client.__class__()
    answer = api.get("/api/v1/trajectories?owner=me", HTTP_AUTHORIZATION=f"Token {secret}")
    assert answer.status_code == 200
    page = client.get("/me/tokens/").content.decode()
    assert "never" not in page  # last used is shown now


def test_a_name_is_required(client, owner):
    client.force_login(owner)
    response = client.post("/me/tokens/", {"name": ""})
    assert response.status_code == 400 and ApiToken.objects.count() == 0


def test_revoke_stops_the_token_and_only_the_owner_revokes(client, owner, other_user, staff):
    token, secret = api_token_create(
        user=owner, name="nightly-ci-runner"
    )  # never in a random token
    url = f"/me/tokens/{token.pk}/revoke"
    for user in (other_user, staff):
        client.force_login(user)
        assert client.post(url).status_code == 404
        assert token.name not in client.get("/me/tokens/").content.decode()
    assert ApiToken.objects.filter(pk=token.pk).exists()
    client.force_login(owner)
    assert client.get(url).status_code == 405  # revoking is a POST
    response = client.post(url, follow=True)
    assert "revoked" in response.content.decode()
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    answer = client.__class__().get(
        "/api/v1/trajectories?owner=me", HTTP_AUTHORIZATION=f"Token {secret}"
    )
    assert answer.status_code == 401


def test_anonymous_is_sent_to_sign_in(client):
    assert client.get("/me/tokens/")["Location"].startswith("/accounts/login/")
    assert client.post("/me/tokens/", {"name": "x"}).status_code == 302
    assert ApiToken.objects.count() == 0


@pytest.mark.django_db
def test_the_admin_sidebar_names_each_app_once(client, django_user_model):
    """Issue 20: "Accounts" appeared twice in the admin's sidebar (allauth's and ours)."""
    import re

    staff = django_user_model.objects.create_user("boss", password="x", is_staff=True)
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    html = client.get("/admin/").content.decode()
    captions = re.findall(r'<caption>\s*<a [^>]*class="section"[^>]*>([^<]+)</a>', html)
    assert captions and len(captions) == len(set(captions)), captions
    assert "Users and API tokens" in captions
