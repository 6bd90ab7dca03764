"""Who may change what: PATCH fields, deletion by role, CSRF on session writes, Django admin,
API tokens, and the cookie settings."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.accounts.services import api_token_create, api_token_revoke
from apps.trajectories.models import Trajectory
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"


@pytest.fixture
def staff_moderator(django_user_model):
    """A moderator as `manage.py grant_moderator` makes one: staff (for Django admin) + group."""
    user = django_user_model.objects.create_user("sec-mod-staff", password="x", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name="moderators")[0])
    return user


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("sec-root", password="x")


def snapshot(trajectory: Trajectory) -> dict:
    return Trajectory.objects.filter(pk=trajectory.pk).values().get()


# ---- PATCH ---------------------------------------------------------------------------------------

PROTECTED = {
    "owner": "other",
    "owner_id": 1,
    "review_state": "approved",
    "share_id": "a" * 64,
    "id": "a" * 64,
    "redactions": {},
    "contact_email": "x@example.org",
    "license": "CC0",
    "deletion_password_hashes": [],
    "num_events": 1,
    "published_at": "2020-01-01T00:00:00Z",
    "search_text": "anything",
    "agent": "Other",
}


@pytest.mark.parametrize("field", sorted(PROTECTED))
def test_patch_cannot_change_what_the_owner_does_not_own(client_as, owner, other_user, field):
    trajectory = make_trajectory(
        owner=owner, visibility="public", review_state="held", redactions={"a": "<A_1>"}
    )
    before = snapshot(trajectory)
    value = other_user.pk if PROTECTED[field] == "other" else PROTECTED[field]
    response = client_as(owner).patch(
        f"{URL}/{trajectory.share_id}", {field: value, "title": "x"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["where"] == field
    assert snapshot(trajectory) == before  # nothing half-applied, not even the title


@pytest.mark.parametrize("state", ["held", "rejected", "hidden", "pending"])
def test_the_owner_cannot_publish_past_review(client_as, owner, state):
    trajectory = make_trajectory(owner=owner, visibility="private", review_state=state)
    response = client_as(owner).patch(
        f"{URL}/{trajectory.share_id}",
        {"visibility": "public", "license_agreed": True, "title": "please"},
        format="json",
    )
    assert response.status_code == 200
    trajectory.refresh_from_db()
    assert trajectory.visibility == "public"
    assert trajectory.review_state != "approved"
    assert client_as(None).get(f"{URL}/{trajectory.share_id}").status_code == 404


@pytest.mark.parametrize(
    "who", ["other_user", "moderator", "staff", "staff_moderator", "superuser"]
)
def test_nobody_but_the_owner_patches(request, client_as, owner, who):
    user = request.getfixturevalue(who)
    public = make_trajectory(owner=owner, visibility="public", task="one")
    private = make_trajectory(owner=owner, visibility="private", task="two")
    for trajectory, visible in ((public, True), (private, who != "other_user")):
        response = client_as(user).patch(
            f"{URL}/{trajectory.share_id}", {"title": "mine now"}, format="json"
        )
        assert response.status_code == (403 if visible else 404), trajectory.visibility
        trajectory.refresh_from_db()
        assert trajectory.title != "mine now"


# ---- DELETE: owner and staff; moderators hide instead -----------------------------------------


@pytest.mark.parametrize(
    ("who", "allowed"),
    [
        ("owner", True),
        ("staff", True),
        ("superuser", True),
        ("other_user", False),
        ("moderator", False),
        # A moderator account is staff too (Django admin needs it): still not a staff deletion.
        ("staff_moderator", False),
    ],
)
def test_who_deletes_through_the_api(request, client_as, owner, who, allowed):
    user = request.getfixturevalue(who)
    trajectory = make_trajectory(owner=owner, visibility="public")
    response = client_as(user).delete(f"{URL}/{trajectory.share_id}")
    assert response.status_code == (204 if allowed else 403)
    assert Trajectory.objects.filter(pk=trajectory.pk).exists() is not allowed


def test_only_the_owner_deletes_from_the_dashboard(client, owner, other_user, moderator, staff):
    trajectory = make_trajectory(owner=owner, visibility="public")
    url = reverse("me-delete", args=[trajectory.share_id])
    for user in (other_user, moderator, staff):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.post(url, {"confirm": "yes"}).status_code == 404
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_a_password_deletes_only_an_anonymous_share(client_as, owner):
    owned = make_trajectory(owner=owner, visibility="private")
    for password in ("", "x", "sha256$$"):
        response = client_as(None).delete(
            f"{URL}/{owned.share_id}", HTTP_X_DELETION_PASSWORD=password
        )
        # As for an unknown id (issue 6): a 403 told an outsider the trajectory exists.
        assert response.status_code == 404
    assert Trajectory.objects.filter(pk=owned.pk).exists()
    page = Client().post(
        reverse("trajectory-holder-delete", args=[owned.share_id]),
        {"password": "x", "confirm": "yes"},
    )
    assert page.status_code == 404
    assert Trajectory.objects.filter(pk=owned.pk).exists()


# ---- CSRF: a signed-in browser session cannot be ridden from another site ----------------------


def test_session_writes_need_the_csrf_token(owner):
    trajectory = make_trajectory(owner=owner, visibility="private")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    api = f"{URL}/{trajectory.share_id}"
    assert (
        browser.patch(api, '{"title": "forged"}', content_type="application/json").status_code
        == 403
    )
    assert browser.delete(api).status_code == 403
    me_delete = reverse("me-delete", args=[trajectory.share_id])
    assert browser.post(me_delete, {"confirm": "yes"}).status_code == 403
    trajectory.refresh_from_db()
    assert trajectory.title != "forged"
    # With the token (as the site's own forms send it), the same writes work.
    browser.get("/me/")
    token = browser.cookies["csrftoken"].value
    ok = browser.patch(
        api, '{"title": "mine"}', content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert ok.status_code == 200
    assert (
        browser.post(me_delete, {"confirm": "yes", "csrfmiddlewaretoken": token}).status_code == 302
    )
    assert not Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_anonymous_page_forms_need_the_csrf_token(owner):
    trajectory = make_trajectory(owner=None, visibility="private")
    browser = Client(enforce_csrf_checks=True)
    for name in ("trajectory-unlock", "trajectory-holder-delete"):
        response = browser.post(
            reverse(name, args=[trajectory.share_id]), {"password": "x", "confirm": "yes"}
        )
        assert response.status_code == 403, name


# ---- Django admin -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", [None, "owner", "other_user", "moderator"])
def test_admin_is_closed_to_everyone_but_staff(request, who, owner):
    trajectory = make_trajectory(owner=owner, visibility="private")
    client = Client()
    if who:
        client.force_login(request.getfixturevalue(who))
    for url in (
        "/admin/",
        reverse("admin:trajectories_trajectory_changelist"),
        reverse("admin:trajectories_trajectory_change", args=[trajectory.pk]),
        reverse("admin:trajectories_trajectory_delete", args=[trajectory.pk]),
        reverse("admin:accounts_apitoken_changelist")
        if _registered("accounts", "apitoken")
        else "/admin/accounts/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url
    response = client.post(
        reverse("admin:trajectories_trajectory_changelist"),
        {"action": "delete_selected", "_selected_action": [trajectory.pk], "post": "yes"},
    )
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def _registered(app: str, model: str) -> bool:
    from django.contrib import admin

    return any(
        m._meta.app_label == app and m._meta.model_name == model for m in admin.site._registry
    )


def test_moderators_in_admin_review_but_never_edit_or_delete(staff_moderator, owner):
    trajectory = make_trajectory(owner=owner, visibility="public", review_state="held")
    client = Client()
    client.force_login(staff_moderator)
    change = reverse("admin:trajectories_trajectory_change", args=[trajectory.pk])
    assert client.get(change).status_code == 200
    before = snapshot(trajectory)
    client.post(change, {"title": "edited", "review_state": "approved"})
    assert snapshot(trajectory) == before
    assert (
        client.get(
            reverse("admin:trajectories_trajectory_delete", args=[trajectory.pk])
        ).status_code
        == 403
    )
    client.post(
        reverse("admin:trajectories_trajectory_changelist"),
        {"action": "delete_selected", "_selected_action": [trajectory.pk], "post": "yes"},
    )
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
    # Users, groups and tokens are staff matters, not the review queue's.
    for url in ("/admin/accounts/user/", "/admin/auth/group/"):
        assert client.get(url).status_code in (403, 404), url


# ---- API tokens ---------------------------------------------------------------------------------


def test_a_token_acts_for_its_user_only_and_stops_when_revoked(owner, other_user):
    mine = make_trajectory(owner=owner, visibility="private")
    theirs = make_trajectory(owner=other_user, visibility="private")
    token, secret = api_token_create(user=owner)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    assert api.get(f"{URL}/{mine.share_id}").status_code == 200
    assert api.get(f"{URL}/{theirs.share_id}").status_code == 404
    assert api.patch(f"{URL}/{theirs.share_id}", {"title": "x"}, format="json").status_code == 404
    api_token_revoke(token=token)
    assert api.get(f"{URL}/{mine.share_id}").status_code == 401
    other_user.is_active = False
    other_user.save()
    _, theirs_secret = api_token_create(user=other_user)
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {theirs_secret}")
    assert api.get(f"{URL}/{theirs.share_id}").status_code == 401
    api.credentials(HTTP_AUTHORIZATION="Token " + secret[:-1] + "x")
    assert api.get(URL).status_code == 401


# ---- cookies and framing ------------------------------------------------------------------------


def test_the_session_cookie_is_http_only_and_same_site(owner):
    client = Client()
    response = client.post("/accounts/login/", {"login": "owner", "password": "pw-owner"})
    assert response.status_code == 302
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["httponly"] is True
    assert cookie["samesite"].lower() in ("lax", "strict")
    csrf = client.get("/accounts/login/").cookies.get(settings.CSRF_COOKIE_NAME)
    if csrf is not None:
        assert csrf["samesite"].lower() in ("lax", "strict")


def _settings_value(env: dict[str, str], expression: str) -> str:
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "TRAJHUB_SITE_URL", "DATABASE_URL"))
    }
    result = subprocess.run(
        [sys.executable, "-c", f"import config.settings as s; print({expression})"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        check=True,
    )
    return result.stdout.strip()


def test_cookies_are_secure_whenever_the_site_is_served_over_https():
    https = {"TRAJHUB_SITE_URL": "https://trajhub.example"}
    value = "(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)"
    assert _settings_value(https, value) == "(True, True)"
    assert _settings_value({"TRAJHUB_SITE_URL": "http://127.0.0.1:8000"}, value) == "(False, False)"
    # The operator can still say otherwise (a TLS-terminating proxy on a plain-http SITE_URL).
    forced = {"TRAJHUB_SITE_URL": "http://127.0.0.1:8000", "DJANGO_SECURE_COOKIES": "true"}
    assert _settings_value(forced, value) == "(True, True)"


def test_pages_cannot_be_framed(client):
    response = client.get("/")
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


# ---- anonymous shares: an email address is not a key ------------------------------------------


def test_knowing_a_sharers_email_and_a_public_first_step_opens_nothing_of_theirs(
    django_capture_on_commit_callbacks,
):
    """Anonymous shares with the same email continue each other (OpenHands re-shares a longer
    session). A share *shorter* than a stored one, built from what its public page shows, must
    not hand its sender a password to the stored one: that would unlock its redacted originals,
    let them delete it and change its visibility."""
    from tests.ingest_helpers import share_payload, v0_events

    victim_email = "carol@victim-mail.test"
    events = v0_events(3, task="deploy it")
    events[2]["content"] = "token for carol.private@gmail.com\n"
    with django_capture_on_commit_callbacks(execute=True):
        shared = Client().post(
            "/share_od_trajectory",
            orjson.dumps(share_payload(events, email=victim_email, permissions="public")),
            content_type="application/json",
        )
    victim_id = shared.json()["body"]["feedback_id"]
    Trajectory.objects.filter(share_id=victim_id).update(review_state="approved")
    victim = Trajectory.objects.get(share_id=victim_id)
    assert victim.redactions  # the address is redacted on its public page

    # What anyone can read: the public export's first event.
    export = orjson.loads(Client().get(f"{URL}/{victim_id}/download?format=openhands").content)
    attacker = Client(REMOTE_ADDR="10.99.0.1")
    answer = attacker.post(
        "/share_od_trajectory",
        orjson.dumps(share_payload(export[:1], email=victim_email, permissions="private")),
        content_type="application/json",
    ).json()["body"]
    assert answer["feedback_id"] != victim_id
    after = Trajectory.objects.get(share_id=victim_id)
    assert (after.visibility, after.num_events) == ("public", victim.num_events)
    assert after.deletion_password_hashes == victim.deletion_password_hashes
    password = answer["password"]
    assert attacker.post(f"/t/{victim_id}/unlock", {"password": password}).status_code == 404
    assert attacker.get(f"/t/{victim_id}/events/3/json").content.count(b"carol.private") == 0
    refused = attacker.delete(f"{URL}/{victim_id}", HTTP_X_DELETION_PASSWORD=password)
    assert refused.status_code == 404
    # A longer re-share of the same session by email alone proves nothing either, since the
    # events were public (issue 6): it is a new trajectory in the original's chain.
    longer = v0_events(4, task="deploy it")
    longer[2]["content"] = events[2]["content"]
    again = Client().post(
        "/share_od_trajectory",
        orjson.dumps(share_payload(longer, email=victim_email, permissions="public")),
        content_type="application/json",
    )
    again_id = again.json()["body"]["feedback_id"]
    assert again_id != victim_id
    assert Trajectory.objects.get(share_id=again_id).chain_key == victim_id


def test_continuing_an_anonymous_share_carries_over_nothing_its_sender_did_not_send(
    django_capture_on_commit_callbacks,
):
    """A longer share of a public share's events and its email is how OpenHands re-shares, but
    anyone can send those (the public export shows them): it is a new trajectory (issue 6), and
    it holds only what its sender sent: the original's title, redacted on the public page, is
    not opened by the password they get."""
    from tests.ingest_helpers import v0_events

    email = "dave@victim-mail.test"
    title_secret = "dave.private.title@gmail.com"
    with django_capture_on_commit_callbacks(execute=True):
        shared = Client().post(
            f"{URL}?email={email}&visibility=public&license_agreed=true"
            f"&title=Deploy for {title_secret}",
            orjson.dumps(v0_events(2, task="deploy")),
            content_type="application/json",
        )
    victim_id = shared.json()["trajectories"][0]["id"]
    victim = Trajectory.objects.get(share_id=victim_id)
    assert victim.review_state == "approved" and title_secret in victim.redactions
    public_events = orjson.loads(
        Client().get(f"{URL}/{victim_id}/download?format=openhands").content
    )
    attacker = Client(REMOTE_ADDR="10.99.0.2")
    extra = {"id": 99, "source": "user", "action": "message", "args": {"content": "mine"}}
    answer = attacker.post(
        f"{URL}?email={email}",
        orjson.dumps([*public_events, extra]),
        content_type="application/json",
    ).json()["trajectories"][0]
    assert answer["id"] != victim_id  # a public share's events prove nothing
    assert (
        attacker.post(f"/t/{answer['id']}/unlock", {"password": answer["password"]}).status_code
        == 302
    )
    for url in (f"/t/{answer['id']}/", f"{URL}/{answer['id']}/download?format=original"):
        assert title_secret not in attacker.get(url).content.decode(), url
