"""Delete my account: every trajectory by the deletion service (tombstones, audit entries that
keep the username), then the account with its tokens and notices."""

from __future__ import annotations

import pytest

from apps.accounts.models import ApiToken, Notice, User
from apps.accounts.notices import notice_send
from apps.accounts.services import api_token_create
from apps.moderation.models import AuditEntry
from apps.trajectories.models import Tombstone, Trajectory
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def test_account_deletion_removes_everything_and_keeps_tombstones_and_the_username(
    client, owner, other_user, django_capture_on_commit_callbacks
):
    public = make_trajectory(owner=owner, visibility="public")
    private = make_trajectory(owner=owner, visibility="private")
    theirs = make_trajectory(owner=other_user)
    api_token_create(user=owner, name="laptop")
    notice_send(kind="held", trajectory=private)
    client.force_login(owner)

    page = client.get("/me/delete-account/").content.decode()
    assert "2 trajectories" in page
    refused = client.post("/me/delete-account/", {"username": "someone"})
    assert refused.status_code == 400 and User.objects.filter(pk=owner.pk).exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/me/delete-account/", {"username": "owner"})
    assert response.status_code == 200 and "Account deleted" in response.content.decode()
    assert not User.objects.filter(pk=owner.pk).exists()
    assert list(Trajectory.objects.values_list("pk", flat=True)) == [theirs.pk]
    tombstones = {t.share_id: t for t in Tombstone.objects.all()}
    assert set(tombstones) == {public.share_id, private.share_id}
    assert (
        tombstones[public.share_id].was_public and tombstones[public.share_id].reason == "account"
    )
    assert ApiToken.objects.count() == 0 and Notice.objects.count() == 0
    entries = AuditEntry.objects.filter(share_id__in=tombstones)
    assert entries.count() == 2
    assert {entry.actor_username for entry in entries} == {"owner"}
    assert all(entry.actor_id is None for entry in entries)
    # Signed out: the dashboard asks to sign in.
    assert client.get("/me/").status_code == 302


def test_anonymous_cannot_delete_an_account(client, owner):
    response = client.post("/me/delete-account/", {"username": "owner"})
    assert response.status_code == 302
    assert User.objects.filter(pk=owner.pk).exists()
