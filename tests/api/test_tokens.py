"""API tokens: created by a service and a command, stored hashed, accepted by the API."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_create, api_token_revoke
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import dumps, make_trajectory, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"


def test_command_prints_the_secret_once_and_stores_only_its_hash(owner, client):
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_token", "owner", "--name", "laptop", stdout=out, stderr=err)
    secret = out.getvalue().strip()
    assert len(secret) > 30 and "\n" not in secret
    token = ApiToken.objects.get()
    assert token.name == "laptop" and token.user == owner
    assert secret not in str(ApiToken.objects.values().get()) and token.key_hash != secret
    assert secret.startswith(token.prefix)
    assert secret not in err.getvalue()
    mine = make_trajectory(owner=owner, visibility="private", review_state="pending")
    response = client.get(URL + "?owner=me", HTTP_AUTHORIZATION=f"Token {secret}")
    assert [item["id"] for item in response.json()["results"]] == [mine.share_id]
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_command_refuses_unknown_and_disabled_users(django_user_model):
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("create_api_token", "ghost", stdout=io.StringIO())
    django_user_model.objects.create_user("sleeper", is_active=False)
    with pytest.raises(CommandError, match="disabled"):
        call_command("create_api_token", "sleeper", stdout=io.StringIO())
    assert ApiToken.objects.count() == 0


def test_bearer_keyword_works_too(client, owner):
    _, secret = api_token_create(user=owner)
    response = client.post(
        URL,
        data=dumps(v0_events(1)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert response.status_code == 201
    assert Trajectory.objects.get().owner == owner


@pytest.mark.parametrize("header", ["Token nope", "Token", "Token a b"])
def test_bad_tokens_are_401_json(client, header):
    response = client.get(URL, HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["error"]["message"]
    assert response["WWW-Authenticate"] == "Token"


def test_revoked_token_and_disabled_account_are_refused(client, owner):
    token, secret = api_token_create(user=owner)
    api_token_revoke(token=token)
    assert client.get(URL, HTTP_AUTHORIZATION=f"Token {secret}").status_code == 401
    _, secret = api_token_create(user=owner)
    owner.is_active = False
    owner.save()
    response = client.get(URL, HTTP_AUTHORIZATION=f"Token {secret}")
    assert response.status_code == 401 and "disabled" in response.json()["error"]["message"]
