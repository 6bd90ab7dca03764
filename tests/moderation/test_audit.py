"""The audit log: every decision names who made it (as such, with a username snapshot that
survives the account), and nobody can change or delete an entry."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError
from django.test import Client
from django.urls import reverse

from apps.moderation.audit import audit_record
from apps.moderation.models import ActorKind, AppendOnlyError, AuditEntry
from apps.moderation.services.decisions import trajectory_reject
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
from apps.trajectories.signals import trajectory_deleted
from tests.conftest import skip_or_fail
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


def test_the_scan_is_named_the_scan():
    trajectory = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=trajectory)
    entry = AuditEntry.objects.get(share_id=trajectory.share_id)
    assert (entry.action, entry.actor_kind, entry.actor) == ("scan_held", "scan", None)
    assert entry.actor_label == "the scan"


def test_a_holders_deletion_is_not_logged_as_the_scan(django_capture_on_commit_callbacks):
    """The finding: a null actor was shown as "the scan" for an anonymous holder's deletion."""
    trajectory = make_trajectory(events=["ls"])
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=trajectory, reason="password")
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="deleted")
    assert entry.actor_kind == ActorKind.HOLDER
    assert entry.actor_label == "the anonymous holder (deletion password)"


@pytest.mark.parametrize(
    "reason, kind",
    [
        ("owner", "owner"),
        ("staff", "staff"),
        ("password", "holder"),
        ("email", "email_link"),
        ("account", "account_deletion"),
    ],
)
def test_each_way_of_deleting_is_named(reason, kind):
    trajectory_deleted.send(sender=Trajectory, share_id="b" * 64, was_public=False, reason=reason)
    assert AuditEntry.objects.get(share_id="b" * 64).actor_kind == kind


def test_the_username_snapshot_survives_the_account(moderator, django_capture_on_commit_callbacks):
    trajectory = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=trajectory)
    trajectory_reject(trajectory=trajectory, moderator=moderator, note="a live key")
    moderator.delete()
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="rejected")
    assert entry.actor is None  # the account is gone ...
    assert entry.actor_username == "moderator"  # ... the record still says who it was
    assert entry.actor_label == "a moderator (moderator)"
    assert entry.reason == "a live key"


def test_an_owner_deleted_with_the_account_keeps_their_name(
    owner, django_capture_on_commit_callbacks
):
    """Deleting an account deletes its trajectories first; the deletion record is written after
    the commit, when the account may be gone: the snapshot names it."""
    trajectory = make_trajectory(events=["ls"], owner=owner)
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            trajectory_delete(trajectory=trajectory, reason="account", actor=owner)
            owner.delete()
    entry = AuditEntry.objects.get(share_id=trajectory.share_id)
    assert (entry.actor_kind, entry.actor, entry.actor_username) == (
        "account_deletion",
        None,
        "owner",
    )


def test_entries_cannot_be_changed_or_deleted_through_the_orm():
    entry = audit_record(action="approved", share_id="c" * 64, actor_kind="staff")
    entry.reason = "rewritten"
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        AuditEntry.objects.filter(pk=entry.pk).update(reason="rewritten")
    with pytest.raises(AppendOnlyError):
        AuditEntry.objects.all().delete()
    assert AuditEntry.objects.get(pk=entry.pk).reason == ""


def test_postgresql_refuses_raw_updates_and_deletes():
    if connection.vendor != "postgresql":
        skip_or_fail("the append-only trigger is PostgreSQL's (set DATABASE_URL)")
    entry = audit_record(action="approved", share_id="d" * 64, actor_kind="staff")
    table = AuditEntry._meta.db_table
    for sql in (
        f"UPDATE {table} SET reason = 'rewritten' WHERE id = %s",
        f"UPDATE {table} SET actor_kind = 'scan' WHERE id = %s",
        f"DELETE FROM {table} WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql, [entry.pk])
    assert AuditEntry.objects.get(pk=entry.pk).actor_kind == "staff"


@pytest.mark.parametrize("who", ["admin_moderator", "staff", "superuser"])
def test_the_admin_shows_the_log_and_offers_no_change_or_delete(request, who, django_user_model):
    if who == "superuser":
        user = django_user_model.objects.create_superuser("root", password="x")
    else:
        user = request.getfixturevalue(who)
    entry = audit_record(
        action="rejected", share_id="e" * 64, actor_kind="moderator", reason="leaks a key"
    )
    client = Client()
    client.force_login(user)
    listing = client.get(reverse("admin:moderation_auditentry_changelist"))
    assert listing.status_code == 200 and b"leaks a key" in listing.content
    page = client.get(reverse("admin:moderation_auditentry_change", args=[entry.pk]))
    assert page.status_code == 200
    assert b'name="reason"' not in page.content  # read-only: no form field
    assert (
        client.post(
            reverse("admin:moderation_auditentry_change", args=[entry.pk]), {"reason": "x"}
        ).status_code
        == 403
    )
    assert (
        client.post(
            reverse("admin:moderation_auditentry_delete", args=[entry.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert client.post(
        reverse("admin:moderation_auditentry_changelist"),
        {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"},
    ).status_code in (200, 302)
    assert AuditEntry.objects.get(pk=entry.pk).reason == "leaks a key"
