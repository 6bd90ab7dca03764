"""Every accounts page, as anonymous, the owner, another user, a moderator and staff.

The dashboard's pages about one trajectory are the owner's only: everyone else, moderators and
staff included (they work in the admin), gets the 404 an unknown id gets, and nothing changes.
Anonymous callers are sent to sign in. The unsubscribe page needs no account.
"""

from __future__ import annotations

import pytest
from django.test import Client

from apps.accounts.models import ApiToken
from apps.accounts.notices import unsubscribe_url
from apps.accounts.services import api_token_create
from apps.owners.services.export import export_build, export_request
from apps.trajectories.models import Trajectory
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]
LOGIN = "login"  # a redirect to the sign-in page

# (name, method, url template, data, expected answer per caller)
MATRIX = [
    ("dashboard", "get", "/me/", {}, {"anonymous": LOGIN, "*": 200}),
    ("notices", "get", "/me/notices/", {}, {"anonymous": LOGIN, "*": 200}),
    ("tokens", "get", "/me/tokens/", {}, {"anonymous": LOGIN, "*": 200}),
    ("edit page", "get", "/me/t/{id}/edit", {}, {"anonymous": LOGIN, "owner": 200, "*": 404}),
    (
        "edit",
        "post",
        "/me/t/{id}/edit",
        {"title": "Changed", "polarity": "none", "visibility": "private"},
        {"anonymous": LOGIN, "owner": 302, "*": 404},
    ),
    (
        "visibility",
        "post",
        "/me/t/{id}/visibility",
        {"visibility": "private"},
        {"anonymous": LOGIN, "owner": 302, "*": 404},
    ),
    ("delete page", "get", "/me/t/{id}/delete", {}, {"anonymous": LOGIN, "owner": 200, "*": 404}),
    (
        "delete",
        "post",
        "/me/t/{id}/delete",
        {"confirm": "yes"},
        {"anonymous": LOGIN, "owner": 302, "*": 404},
    ),
    # The bulk form ignores ids that are not the caller's: nothing to act on.
    (
        "bulk delete",
        "post",
        "/me/bulk",
        {"ids": "{id}", "action": "delete", "confirm": "yes"},
        {"anonymous": LOGIN, "*": 302},
    ),
    (
        "revoke token",
        "post",
        "/me/tokens/{token}/revoke",
        {},
        {"anonymous": LOGIN, "owner": 302, "*": 404},
    ),
    ("unsubscribe page", "get", "{unsubscribe}", {}, {"*": 200}),
    ("claim page", "get", "/me/claim/", {}, {"anonymous": LOGIN, "*": 200}),
    # Claiming someone's owned share with no password: the one refusal, for everyone.
    (
        "claim",
        "post",
        "/me/claim/",
        {"link": "{id}", "password": "x"},
        {"anonymous": LOGIN, "*": 404},
    ),
    ("export page", "get", "/me/export/", {}, {"anonymous": LOGIN, "*": 200}),
    (
        "export download",
        "get",
        "/me/export/{export}/download",
        {},
        {"anonymous": LOGIN, "owner": 200, "*": 404},
    ),
    ("account deletion page", "get", "/me/delete-account/", {}, {"anonymous": LOGIN, "*": 200}),
    ("email deletion form", "get", "/delete-by-email/", {}, {"*": 200}),
    ("public profile", "get", "/u/owner/", {}, {"*": 200}),
]

# What must be unchanged after a caller who is not the owner tried each write.
WRITES = {"edit", "visibility", "delete", "bulk delete", "revoke token", "claim"}


@pytest.fixture
def people(owner, other_user, moderator, staff):
    return {"owner": owner, "other_user": other_user, "moderator": moderator, "staff": staff}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(
    ("name", "method", "url", "data", "expected"), MATRIX, ids=[m[0] for m in MATRIX]
)
def test_each_account_page_answers_each_caller(
    people, private_storage, caller, name, method, url, data, expected
):
    owner = people["owner"]
    trajectory = make_trajectory(
        owner=owner, title="Owner's own", visibility="public", license="MIT"
    )
    token, _ = api_token_create(user=owner, name="owner's token")
    export = export_request(user=owner)
    export_build(export=export)
    values = {
        "id": trajectory.share_id,
        "token": token.pk,
        "export": export.pk,
        "unsubscribe": "/" + unsubscribe_url(email="x@example.org", kind="held").split("/", 3)[3],
    }
    client = Client()
    if caller != "anonymous":
        client.force_login(people[caller])
    body = {key: str(value).format(**values) for key, value in data.items()}
    response = getattr(client, method)(url.format(**values), body)

    want = expected.get(caller, expected.get("*"))
    if want == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == want, (name, caller, response.status_code)
    if name == "public profile":
        # The owner's public, approved trajectory is on it for everyone; nothing else is.
        assert "Owner&#x27;s own" in response.content.decode()
        assert "owner&#x27;s token" not in response.content.decode()
    elif response.status_code == 200 and caller not in ("owner", "anonymous"):
        # Nothing of the owner's shows on anyone else's account pages.
        assert "Owner&#x27;s own" not in response.content.decode()
        assert "owner&#x27;s token" not in response.content.decode()
    if name in WRITES and caller != "owner":
        trajectory.refresh_from_db()
        assert trajectory.title == "Owner's own" and trajectory.visibility == "public"
        assert ApiToken.objects.filter(pk=token.pk).exists()
        assert trajectory.owner_id == owner.pk
    if name in WRITES and caller == "owner" and name in {"delete", "bulk delete"}:
        assert not Trajectory.objects.filter(pk=trajectory.pk).exists()
