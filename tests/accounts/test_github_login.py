"""Sign in with GitHub, the whole OAuth round trip: our authorize redirect, GitHub's callback with
a code, and GitHub's token, user and emails endpoints answered at the HTTP boundary (responses;
no network). The app comes from settings (GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET), not from admin
rows. A GitHub sign-in never attaches itself to a local account because an email matches."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialApp
from django.test import Client

from apps.accounts.models import User

pytestmark = pytest.mark.django_db

CLIENT_ID = "Iv1.trajhubtestclient"
CLIENT_SECRET = "github-client-secret-for-tests"
TOKEN_URL = "https://github.com/login/oauth/access_token"
USER_URL = "https://api.github.com/user"
EMAILS_URL = "https://api.github.com/user/emails"


@pytest.fixture(autouse=True)
def github_app(settings):
    provider = dict(settings.SOCIALACCOUNT_PROVIDERS["github"])
    provider["APP"] = {"client_id": CLIENT_ID, "secret": CLIENT_SECRET}
    settings.SOCIALACCOUNT_PROVIDERS = {**settings.SOCIALACCOUNT_PROVIDERS, "github": provider}


def github_user(uid: int, login: str, email: str | None) -> dict:
    return {"id": uid, "login": login, "name": login.title(), "email": email, "html_url": ""}


def sign_in_with_github(
    client: Client, *, user: dict, emails: list[dict] | None, code: str = "c0de"
) -> tuple:
    """Click "Sign in with GitHub", come back from GitHub with a code; returns (the callback's
    response, the requests our server sent to GitHub)."""
    start = client.post("/accounts/github/login/")
    assert start.status_code == 302
    authorize = urlsplit(start["Location"])
    assert f"{authorize.scheme}://{authorize.netloc}{authorize.path}" == (
        "https://github.com/login/oauth/authorize"
    )
    query = parse_qs(authorize.query)
    assert query["client_id"] == [CLIENT_ID]
    assert set(query["scope"][0].replace(",", " ").split()) == {"read:user", "user:email"}
    assert query["redirect_uri"][0].endswith("/accounts/github/login/callback/")
    with responses.RequestsMock(assert_all_requests_are_fired=False) as github:
        github.post(
            TOKEN_URL,
            json={"access_token": f"gho_{code}", "token_type": "bearer", "scope": "user:email"},
        )
        github.get(USER_URL, json=user)
        if emails is None:
            github.get(EMAILS_URL, status=404, json={"message": "Not Found"})
        else:
            github.get(EMAILS_URL, json=emails)
        callback = client.get(
            "/accounts/github/login/callback/", {"code": code, "state": query["state"][0]}
        )
        sent = list(github.calls)
    return callback, sent


def test_a_new_github_user_gets_an_account_and_is_signed_in():
    client = Client()
    callback, sent = sign_in_with_github(
        client,
        user=github_user(101, "octocat", "octocat@example.org"),
        emails=[{"email": "octocat@example.org", "primary": True, "verified": True}],
    )
    assert callback.status_code == 302 and callback["Location"] == "/me/"
    token_request = parse_qs(sent[0].request.body)
    assert token_request["code"] == ["c0de"] and token_request["client_secret"] == [CLIENT_SECRET]
    assert sent[1].request.headers["Authorization"] == "token gho_c0de"
    account = SocialAccount.objects.get(provider="github", uid="101")
    assert account.user.username == "octocat"
    assert EmailAddress.objects.get(user=account.user).verified
    assert not SocialApp.objects.exists()  # from settings, never an admin row
    me = client.get("/me/")
    assert me.status_code == 200 and "octocat" in me.content.decode()


def test_a_returning_github_user_signs_into_the_same_account():
    first, _ = sign_in_with_github(
        Client(),
        user=github_user(202, "hubber", "hubber@example.org"),
        emails=[{"email": "hubber@example.org", "primary": True, "verified": True}],
    )
    assert first.status_code == 302
    again = Client()
    callback, _ = sign_in_with_github(
        again,
        user=github_user(202, "hubber-renamed", "hubber@example.org"),
        emails=[{"email": "hubber@example.org", "primary": True, "verified": True}],
        code="second",
    )
    assert callback.status_code == 302 and callback["Location"] == "/me/"
    assert User.objects.count() == 1 and SocialAccount.objects.count() == 1
    assert int(again.session["_auth_user_id"]) == User.objects.get().pk


def test_a_private_github_email_comes_from_the_emails_endpoint_and_is_never_shown():
    private = "4242+quiet@users.noreply.github.com"
    client = Client()
    callback, sent = sign_in_with_github(
        client,
        user=github_user(303, "quiet", None),  # the profile hides a private address
        emails=[
            {"email": private, "primary": True, "verified": True, "visibility": "private"},
        ],
    )
    assert callback.status_code == 302 and callback["Location"] == "/me/"
    assert [call.request.url for call in sent] == [TOKEN_URL, USER_URL, EMAILS_URL]
    user = SocialAccount.objects.get(uid="303").user
    assert user.email == private
    # Others never see it: not on the pages that show the username, nor in the API.
    from tests.ingest_helpers import make_trajectory

    trajectory = make_trajectory(owner=user, visibility="public")
    page = Client().get(f"/t/{trajectory.share_id}/").content.decode()
    assert "quiet" in page  # the username is public ...
    for url in (
        f"/t/{trajectory.share_id}/",
        "/browse/",
        f"/api/v1/trajectories/{trajectory.share_id}",
    ):
        assert private not in Client().get(url).content.decode(), url  # ... the address is not


@pytest.mark.parametrize("verified", [False, True])
def test_a_github_email_matching_a_local_account_never_signs_into_it(
    verified, mailoutbox, settings
):
    """Someone who puts Jane's address on their GitHub account (GitHub may even have verified
    it for them, if Jane's local address was never hers) must not get Jane's account."""
    # Production's default (DATABASE_URL set); the embedded default's "optional" would depend on
    # whether this machine's test run has a DATABASE_URL.
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    jane = User.objects.create_user("jane", email="jane@example.org", password="jane-pass-9")
    EmailAddress.objects.create(
        user=jane, email="jane@example.org", verified=verified, primary=True
    )
    client = Client()
    callback, _ = sign_in_with_github(
        client,
        user=github_user(404, "not-jane", "jane@example.org"),
        emails=[{"email": "jane@example.org", "primary": True, "verified": True}],
    )
    assert client.session.get("_auth_user_id") != str(jane.pk)
    assert not SocialAccount.objects.filter(user=jane).exists()
    assert User.objects.count() == 1
    # Without telling the visitor that the address has an account (no enumeration): they see
    # "we sent you a message", and the address's owner is told someone tried.
    assert callback.status_code == 302 and callback["Location"] == "/accounts/confirm-email/"
    (message,) = mailoutbox
    assert message.to == ["jane@example.org"] and "already" in message.body.lower()
