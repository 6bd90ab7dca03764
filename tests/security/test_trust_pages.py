"""The pages and endpoints issue 6's trust work added or changed, as anonymous, the owner,
another user, a moderator and staff: the upload result page, the status pages of shares made
public, the password DELETE, and the sign-up, sign-in and password-reset pages."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.trajectories.models import Trajectory
from tests.ingest_helpers import ingest, make_trajectory, v0_events

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "owner", "other_user", "moderator", "staff"]
MANAGERS = {"owner", "moderator", "staff"}


def browser(request, caller: str) -> Client:
    client = Client()
    if caller != "anonymous":
        client.force_login(request.getfixturevalue(caller))
    return client


@pytest.mark.parametrize("caller", CALLERS)
def test_the_upload_result_is_only_ever_the_callers_own_and_only_once(request, caller, sample):
    client = browser(request, caller)
    empty = client.get("/upload/done")
    assert empty.status_code == 302 and empty["Location"] == "/upload/"
    posted = client.post(
        "/upload/", {"file": SimpleUploadedFile("a.json", sample("openhands_v0_events.json"))}
    )
    assert posted.status_code == 303
    share_id = Trajectory.objects.get().share_id
    for other in CALLERS:  # nobody else's browser sees it
        if other != caller:
            assert share_id not in browser(request, other).get("/upload/done").content.decode()
    shown = client.get("/upload/done")
    assert shown.status_code == 200 and share_id in shown.content.decode()
    assert ('id="shared-password-0"' in shown.content.decode()) is (caller == "anonymous")
    assert client.get("/upload/done").status_code == 302


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(
    ("state", "visitors"),
    [("pending", 202), ("held", 200), ("rejected", 404), ("hidden", 404)],
)
def test_the_page_of_a_share_made_public_but_not_shown(request, owner, caller, state, visitors):
    trajectory = make_trajectory(
        owner=owner, visibility="public", review_state=state, task="quuxtrust"
    )
    page = browser(request, caller).get(f"/t/{trajectory.share_id}/")
    if caller in MANAGERS:
        assert page.status_code == 200 and "quuxtrust" in page.content.decode()
    else:
        assert page.status_code == visitors and "quuxtrust" not in page.content.decode()


@pytest.mark.parametrize("caller", CALLERS)
def test_a_deleted_public_share_is_410_for_everyone(request, owner, caller):
    from apps.trajectories.services import trajectory_delete

    trajectory = make_trajectory(owner=owner, visibility="public", task="quuxgone")
    trajectory_delete(trajectory=trajectory)
    page = browser(request, caller).get(f"/t/{trajectory.share_id}/")
    assert page.status_code == 410 and "quuxgone" not in page.content.decode()


@pytest.mark.parametrize("caller", CALLERS)
def test_the_password_delete_is_the_same_for_every_caller(request, caller):
    stored = ingest(v0_events(2, task=f"mine {caller}")).stored[0]
    client = browser(request, caller)
    url = f"/api/v1/trajectories/{stored.trajectory.share_id}"
    assert client.delete(url, HTTP_X_DELETION_PASSWORD="wrong").status_code == 404
    assert client.delete(url, HTTP_X_DELETION_PASSWORD=stored.password).status_code == 204
    assert not Trajectory.objects.filter(pk=stored.trajectory.pk).exists()


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/"])
def test_sign_in_and_sign_up_pages(request, caller, path):
    page = browser(request, caller).get(path)
    if caller == "anonymous":
        assert page.status_code == 200 and 'name="password' in page.content.decode()
    else:  # already signed in: to the dashboard
        assert page.status_code == 302 and page["Location"] == "/me/"


@pytest.mark.parametrize("caller", CALLERS)
def test_the_password_reset_page_answers_the_same_for_any_address(request, caller, mailoutbox):
    client = browser(request, caller)
    assert client.get("/accounts/password/reset/").status_code == 200
    answers = [
        client.post("/accounts/password/reset/", {"email": email})
        for email in ("owner@example.org", "nobody@example.org")
    ]
    assert {(a.status_code, a["Location"]) for a in answers} == {
        (302, "/accounts/password/reset/done/")
    }
