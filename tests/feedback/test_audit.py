"""Step feedback in the site's audit log (apps/feedback/audit.py over moderation's AuditEntry):
each action leaves exactly one entry naming who did it, what, the piece of feedback and its
trajectory, readable in Django admin with the other entries; no feedback text is copied."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from apps.feedback.models import NoteState, StepNote
from apps.feedback.moderating import note_decide
from apps.moderation.models import AuditEntry
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CANARY = "canary-feedback-words-7f3a"  # in every text written here; in no audit entry
QUEUE = "/admin/feedback/stepnotereview/"


@pytest.fixture
def public(owner):
    return make_trajectory(owner=owner, steps=2)


@pytest.fixture
def mod(django_user_model):
    user = django_user_model.objects.create_user("mod-staff", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name="moderators")[0])
    client = Client()
    client.force_login(user)
    return user, client


def correct(client_as, user, trajectory, text, step=2):
    url = f"/api/v1/trajectories/{trajectory.share_id}/steps/{step}/feedback"
    answer = client_as(user).post(url, {"correction": text}, format="json")
    assert answer.status_code == 200, answer.json()
    return StepNote.objects.get(trajectory=trajectory, position=step - 1, author=user)


def only_new(before: set[int]) -> AuditEntry:
    """The one entry written since `before` (fails on none or several)."""
    (entry,) = AuditEntry.objects.exclude(pk__in=before)
    return entry


def entries() -> set[int]:
    return set(AuditEntry.objects.values_list("pk", flat=True))


def assert_names(entry, *, action, share_id, kind, username, note=None):
    assert entry.action == action
    assert entry.share_id == share_id
    assert entry.actor_kind == kind
    assert entry.actor_username == username
    if note is not None:
        assert entry.details["feedback"] == note.public_id
        assert entry.details["kind"] == note.kind and entry.details["step"] == note.step


def no_text_anywhere() -> None:
    for entry in AuditEntry.objects.all():
        dumped = f"{entry.reason} {entry.details} {entry.actor_username}"
        assert CANARY not in dumped and TOKEN not in dumped


@pytest.mark.parametrize(
    ("action", "state", "logged"),
    [
        ("show", NoteState.SHOWN, "feedback_shown"),
        ("reject", NoteState.REJECTED, "feedback_rejected"),
    ],
)
def test_a_moderators_decision_in_the_queue(
    public, client_as, other_user, mod, action, state, logged
):
    moderator, admin = mod
    note = correct(client_as, other_user, public, f"{CANARY} export {TOKEN}")
    assert note.state == NoteState.HELD  # the scan
    before = entries()
    admin.post(QUEUE, {"action": action, "_selected_action": [note.pk]})
    assert StepNote.objects.get(pk=note.pk).state == state
    entry = only_new(before)
    assert_names(
        entry,
        action=logged,
        share_id=public.share_id,
        kind="moderator",
        username="mod-staff",
        note=note,
    )
    assert entry.actor == moderator and entry.details["reports_resolved"] == 0
    # The same decision again changes nothing and logs nothing.
    before = entries()
    admin.post(QUEUE, {"action": action, "_selected_action": [note.pk]})
    assert entries() == before
    no_text_anywhere()


def test_a_moderator_holds_then_deletes(public, client_as, other_user, mod, django_user_model):
    moderator, admin = mod
    note = correct(client_as, other_user, public, f"{CANARY} run the tests first")
    assert note.state == NoteState.SHOWN
    # A reader's report puts it in the queue (one report: below the hold threshold).
    client_as(django_user_model.objects.create_user("r1")).post(
        f"/api/v1/trajectories/{public.share_id}/feedback/notes/{note.public_id}/report",
        {"reason": "wrong", "text": f"{CANARY} this is wrong"},
        format="json",
    )
    before = entries()
    admin.post(QUEUE, {"action": "hold", "_selected_action": [note.pk]})
    assert StepNote.objects.get(pk=note.pk).state == NoteState.HELD
    assert_names(
        only_new(before),
        action="feedback_held",
        share_id=public.share_id,
        kind="moderator",
        username="mod-staff",
        note=note,
    )
    assert (
        client_as(None)
        .get(f"/api/v1/trajectories/{public.share_id}/steps/2/feedback")
        .json()["corrections"]
        == []
    )
    before = entries()
    admin.post(QUEUE, {"action": "remove", "_selected_action": [note.pk]})
    assert not StepNote.objects.filter(pk=note.pk).exists()
    entry = only_new(before)
    assert_names(
        entry,
        action="feedback_deleted",
        share_id=public.share_id,
        kind="moderator",
        username="mod-staff",
        note=note,
    )
    assert entry.details["reports_resolved"] == 1
    no_text_anywhere()


def test_staff_outside_the_moderators_group_is_named_as_staff(public, client_as, other_user, staff):
    note = correct(client_as, other_user, public, f"{CANARY} export {TOKEN}")
    before = entries()
    assert note_decide(note=note, moderator=staff, approve=True)
    assert_names(
        only_new(before),
        action="feedback_shown",
        share_id=public.share_id,
        kind="staff",
        username="staff",
        note=note,
    )


def test_reports_and_their_resolution(
    public, client_as, other_user, mod, django_user_model, settings
):
    settings.TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT = 2
    _moderator, admin = mod
    note = correct(client_as, other_user, public, f"{CANARY} buy watches")
    report = f"/api/v1/trajectories/{public.share_id}/feedback/notes/{note.public_id}/report"
    reporters = [django_user_model.objects.create_user(f"r{n}") for n in range(2)]
    for number, reporter in enumerate(reporters):
        before = entries()
        body = {"reason": "spam", "text": f"{CANARY} mail me at reporter{number}@example.com"}
        answer = client_as(reporter).post(
            report, body, format="json", REMOTE_ADDR=f"10.0.0.{number + 1}"
        )
        assert answer.status_code == 202
        entry = only_new(before)
        assert_names(
            entry,
            action="feedback_reported",
            share_id=public.share_id,
            kind="report",
            username=reporter.username,
            note=note,
        )
        assert entry.reason == "spam"
        assert entry.details["held"] is (number == 1)  # the second distinct reporter holds it
        assert "example.com" not in str(entry.details)
        # Reporting again while one's report is open adds nothing, to the log neither.
        before = entries()
        client_as(reporter).post(report, body, format="json", REMOTE_ADDR=f"10.0.0.{number + 1}")
        assert entries() == before
    before = entries()
    admin.post(QUEUE, {"action": "show", "_selected_action": [note.pk]})
    entry = only_new(before)
    assert entry.action == "feedback_shown" and entry.details["reports_resolved"] == 2
    # Reported again and the moderator keeps it shown: the resolution alone is logged.
    client_as(reporters[0]).post(report, {"reason": "abuse"}, format="json", REMOTE_ADDR="10.0.0.9")
    before = entries()
    admin.post(QUEUE, {"action": "show", "_selected_action": [note.pk]})
    entry = only_new(before)
    assert_names(
        entry,
        action="fb_reports_resolved",
        share_id=public.share_id,
        kind="moderator",
        username="mod-staff",
        note=note,
    )
    assert entry.details["reports_resolved"] == 1 and entry.details["state"] == "shown"
    no_text_anywhere()


def test_the_owners_rejection_and_the_switch_from_the_page(public, owner, other_user, client_as):
    note = correct(client_as, other_user, public, f"{CANARY} run ls -la")
    page = f"/t/{public.share_id}/steps/2/feedback"
    browser = Client()
    browser.force_login(owner)
    for what, logged in (("reject", "correction_rejected"), ("restore", "correction_restored")):
        before = entries()
        assert browser.post(page, {"what": what, "note": note.public_id}).status_code == 302
        assert_names(
            only_new(before),
            action=logged,
            share_id=public.share_id,
            kind="owner",
            username="owner",
            note=note,
        )
        before = entries()
        browser.post(page, {"what": what, "note": note.public_id})  # again: no change
        assert entries() == before
    for on, logged in (("", "feedback_off"), ("on", "feedback_on")):
        before = entries()
        assert browser.post(page, {"what": "switch", "on": on}).status_code == 302
        entry = only_new(before)
        assert_names(entry, action=logged, share_id=public.share_id, kind="owner", username="owner")
        assert "feedback" not in entry.details  # the trajectory's feedback as a whole
        before = entries()
        browser.post(page, {"what": "switch", "on": on})
        assert entries() == before
    no_text_anywhere()


def test_readable_in_django_admin_with_the_other_entries(public, client_as, other_user, mod):
    _moderator, admin = mod
    note = correct(client_as, other_user, public, f"{CANARY} export {TOKEN}")
    admin.post(QUEUE, {"action": "reject", "_selected_action": [note.pk]})
    listing = admin.get("/admin/moderation/auditentry/").content.decode()
    assert "Feedback rejected by a moderator" in listing and public.share_id in listing
    entry = AuditEntry.objects.get(action="feedback_rejected")
    detail = admin.get(f"/admin/moderation/auditentry/{entry.pk}/change/").content.decode()
    assert note.public_id in detail and CANARY not in detail and TOKEN not in detail
    # Append-only like every entry: the admin offers no change and no delete.
    assert admin.post(f"/admin/moderation/auditentry/{entry.pk}/delete/").status_code == 403
    assert AuditEntry.objects.filter(pk=entry.pk).exists()
