"""The feedback review queue in real Chromium: a moderator holds a reported correction and then
deletes it with the queue's actions, and finds both decisions in the audit log, which names the
correction by its id and never shows its text. Screenshot: the audit log."""

from __future__ import annotations

from django.contrib.auth.models import Group

from apps.feedback.models import NoteState, StepNote
from apps.feedback.moderating import note_report
from apps.feedback.services import Author, step_feedback_give
from apps.moderation.models import AuditEntry
from tests.ingest_helpers import make_trajectory

WORDS = "run rm -rf / to clean up"


def test_a_moderator_holds_then_deletes_a_correction(
    browser_page, browser_login, owner, other_user, django_user_model
):
    moderator = django_user_model.objects.create_user("mod-browser", is_staff=True)
    moderator.groups.add(Group.objects.get_or_create(name="moderators")[0])
    trajectory = make_trajectory(owner=owner, steps=2)
    step_feedback_give(
        trajectory=trajectory, step=2, author=Author(user=other_user), correction=WORDS
    )
    note = StepNote.objects.get()
    note_report(note=note, reason="abuse", user=owner, client_ip="10.0.0.1")
    browser_login(browser_page.context, moderator)
    page = browser_page.page

    def act(label: str) -> None:
        browser_page.goto("/admin/feedback/stepnotereview/")
        page.locator(f'input[name="_selected_action"][value="{note.pk}"]').check()
        page.locator('select[name="action"]').select_option(label=label)
        page.get_by_role("button", name="Go").click()

    act("Hold the selected feedback (only its author and moderators read it)")
    assert "1 piece(s) of feedback held." in page.locator("ul.messagelist").last.inner_text()
    assert StepNote.objects.get().state == NoteState.HELD
    act("Delete the selected feedback for good (its reports too)")
    assert "1 piece(s) of feedback deleted." in page.locator("ul.messagelist").last.inner_text()
    assert not StepNote.objects.exists()

    browser_page.goto(f"/admin/moderation/auditentry/?q={trajectory.share_id}")
    listing = page.locator("#result_list").inner_text()
    for label in (
        "Feedback held by a moderator",
        "Feedback deleted by a moderator",
        "Feedback reported by a reader",
    ):
        assert label in listing
    browser_page.screenshot("feedback-audit-log", full_page=True)
    deleted = AuditEntry.objects.get(action="feedback_deleted")
    browser_page.goto(f"/admin/moderation/auditentry/{deleted.pk}/change/")
    body = page.locator("#content").inner_text()
    assert note.public_id in body and "a moderator (mod-browser)" in body
    assert WORDS not in body
    assert browser_page.page_errors == [] and browser_page.console_errors == []
