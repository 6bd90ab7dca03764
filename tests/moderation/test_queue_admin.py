"""The review queue in Django admin: what is in it, its filters, an item's page with the
findings in context (escaped), the decisions there and in bulk, claims; the moderators group's
exact permissions; staff managing accounts and API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import ApiToken
from apps.moderation.claims import claim_take
from apps.moderation.models import Appeal, AuditEntry, Report, TakedownRequest
from apps.moderation.receivers import MODERATOR_PERMISSIONS
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import SEEN, bulk, make_trajectory

pytestmark = pytest.mark.django_db

QUEUE = "admin:moderation_queueitem_changelist"


def item_url(trajectory) -> str:
    return reverse("admin:moderation_queueitem_change", args=[trajectory.pk])


def logged_in(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def held(**fields) -> Trajectory:
    trajectory = make_trajectory(events=[f"export OPENAI_API_KEY={s.openai_key()}"], **fields)
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def approved(**fields) -> Trajectory:
    trajectory = make_trajectory(events=["ls -la"], **fields)
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def listed(client, **params) -> str:
    response = client.get(reverse(QUEUE), params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def second_moderator(django_user_model):
    user = django_user_model.objects.create_user("second-mod", is_staff=True)
    user.groups.add(Group.objects.get(name="moderators"))
    return user


def test_the_queue_holds_what_waits_for_a_decision(admin_moderator):
    waiting = held(title="held by the scan")
    reported = approved(title="reported one")
    Report.objects.create(trajectory=reported, reason="spam", reporter_key="addr:x")
    taken = approved(title="takedown one")
    TakedownRequest.objects.create(trajectory=taken, email="", text="mine", state="open")
    unconfirmed = approved(title="unconfirmed takedown")
    TakedownRequest.objects.create(trajectory=unconfirmed, email="a@example.org", text="x")
    appealed = make_trajectory(events=["ls"], title="appealed one", review_state="rejected")
    Appeal.objects.create(trajectory=appealed, text="please")
    approved(title="nothing to decide")
    held(title="private held", visibility="private")
    make_trajectory(events=["ls"], title="not scanned yet")

    page = listed(logged_in(admin_moderator))
    for trajectory in (waiting, reported, taken, appealed):
        assert trajectory.share_id[:12] in page
    for title in ("nothing to decide", "private held", "not scanned yet", "unconfirmed takedown"):
        assert title not in page
    assert "1 report" in page and "takedown request" in page and "appeal" in page


def test_filters_state_kind_reports_agent_and_age(admin_moderator):
    key_held = held(title="key one", agent="CodeActAgent")
    reported = approved(title="reported one", agent="BrowsingAgent")
    Report.objects.create(trajectory=reported, reason="spam", reporter_key="addr:x")
    old = held(title="old one")
    Trajectory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=30))
    kind = key_held.findings.first().kind
    client = logged_in(admin_moderator)

    def ids(**params) -> set[str]:
        page = listed(client, **params)
        return {t.share_id[:12] for t in (key_held, reported, old) if t.share_id[:12] in page}

    assert ids(review_state__exact="held") == {key_held.share_id[:12], old.share_id[:12]}
    assert ids(kind=kind) == {key_held.share_id[:12], old.share_id[:12]}
    assert ids(reports="yes") == {reported.share_id[:12]}
    assert ids(agent="BrowsingAgent") == {reported.share_id[:12]}
    assert ids(age="older") == {old.share_id[:12]}
    assert ids(age="1d") == {key_held.share_id[:12], reported.share_id[:12]}
    assert ids(why="reported") == {reported.share_id[:12]}


def test_the_queue_page_runs_a_fixed_number_of_queries(admin_moderator, django_user_model):
    client = logged_in(admin_moderator)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            listed(client)
        return len(captured)

    held(owner=django_user_model.objects.create_user("q0"))
    few = queries()
    for index in range(8):
        trajectory = held(owner=django_user_model.objects.create_user(f"q{index + 1}"))
        Report.objects.create(trajectory=trajectory, reason="spam", reporter_key=f"addr:{index}")
        claim_take(trajectory=trajectory, moderator=admin_moderator)
    assert queries() == few


def test_an_items_page_shows_findings_in_context_highlighted_and_escaped(admin_moderator):
    key = s.openai_key()
    trajectory = make_trajectory(
        events=[f"<script>alert(1)</script> export OPENAI_API_KEY={key} # <b>done</b>"]
    )
    trajectory_scan(trajectory=trajectory)
    Report.objects.create(
        trajectory=trajectory,
        reason="secret",
        text="<img src=x onerror=alert(2)>",
        email="reporter@example.org",
        reporter_key="addr:y",
    )
    page = logged_in(admin_moderator).get(item_url(trajectory)).content.decode()
    assert f"<mark>{key}</mark>" in page  # moderators see the original, highlighted
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "&lt;b&gt;done&lt;/b&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page and "<img src=x" not in page
    assert "reporter@example.org" not in page and "(left an email)" in page
    assert "step 1, text" in page


def _decide(client, trajectory, decision, **data):
    return client.post(
        item_url(trajectory),
        {"decision": decision, "seen_state": trajectory.review_state, **data},
        follow=True,
    )


@pytest.mark.parametrize(
    ("decision", "start", "end", "data"),
    [
        ("approve", "held", "approved", {}),
        ("reject", "held", "rejected", {"reason": "a live key"}),
        ("hide", "approved", "hidden", {"reason": "spam"}),
    ],
)
def test_decisions_on_the_items_page(admin_moderator, decision, start, end, data):
    trajectory = held() if start == "held" else approved()
    if start == "approved":
        Report.objects.create(trajectory=trajectory, reason="spam", reporter_key="addr:z")
    response = _decide(logged_in(admin_moderator), trajectory, decision, **data)
    assert response.status_code == 200
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == end
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action=end)
    assert entry.actor == admin_moderator and entry.reason == data.get("reason", "")


def test_reject_needs_a_reason(admin_moderator):
    trajectory = held()
    response = _decide(logged_in(admin_moderator), trajectory, "reject")
    assert b"give a reason to reject" in response.content
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"


def test_redact_and_approve_hides_what_the_scan_missed_everywhere(admin_moderator):
    trajectory = held(title="deploy with hunter2-corp-password")
    response = _decide(
        logged_in(admin_moderator),
        trajectory,
        "redact_approve",
        redact="hunter2-corp-password\n",
    )
    assert b"Redacted and approved" in response.content
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"
    assert trajectory.redactions["hunter2-corp-password"] == "<REDACTED_1>"
    page = Client().get(trajectory.get_absolute_url()).content.decode()
    assert "hunter2-corp-password" not in page and "&lt;REDACTED_1&gt;" in page
    api = Client().get(f"/api/v1/trajectories/{trajectory.share_id}").content.decode()
    assert "hunter2-corp-password" not in api
    trajectory_scan(trajectory=trajectory)  # a rescan keeps it
    trajectory.refresh_from_db()
    assert trajectory.redactions["hunter2-corp-password"] == "<REDACTED_1>"
    assert AuditEntry.objects.filter(action="redacted_approved").exists()


def test_a_stale_page_is_refused_with_what_happened(admin_moderator, second_moderator):
    trajectory = held()
    seen = trajectory.review_state
    _decide(logged_in(second_moderator), trajectory, "approve")
    response = logged_in(admin_moderator).post(
        item_url(trajectory),
        {"decision": "reject", "seen_state": seen, "reason": "key"},
        follow=True,
    )
    assert b"changed by someone else meanwhile" in response.content
    assert b"it is now approved by a moderator (second-mod)" in response.content
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "approved"


def test_a_claim_shows_and_keeps_others_off(admin_moderator, second_moderator):
    trajectory = held()
    _decide(logged_in(admin_moderator), trajectory, "claim")
    assert "mod-staff until" in listed(logged_in(second_moderator))
    response = _decide(logged_in(second_moderator), trajectory, "approve")
    assert b"claimed by mod-staff" in response.content
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"
    _decide(logged_in(admin_moderator), trajectory, "release")
    _decide(logged_in(second_moderator), trajectory, "approve")
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "approved"


def test_bulk_reject_with_a_reason_and_bulk_redact_and_approve(admin_moderator):
    first, second = held(), held()
    client = logged_in(admin_moderator)
    bulk(client, reverse(QUEUE), "reject", [first], reason="live keys")
    assert Trajectory.objects.get(pk=first.pk).review_state == "rejected"
    assert AuditEntry.objects.get(share_id=first.share_id, action="rejected").reason == "live keys"
    bulk(client, reverse(QUEUE), "redact_approve", [second], redact="export OPENAI")
    second.refresh_from_db()
    assert second.review_state == "approved" and "export OPENAI" in second.redactions


@pytest.mark.parametrize("action", ["approve", "reject", "hide"])
def test_bulk_decisions_skip_rows_that_changed_since_the_list_was_shown(
    admin_moderator, second_moderator, action
):
    """The list carries each row's state token; a row another moderator decided, or whose
    content changed, after the list was shown is skipped and named in the message."""
    start = "approved" if action == "hide" else "held"
    rows = [held(), held(), held()]
    for row in rows:
        Trajectory.objects.filter(pk=row.pk).update(review_state=start)
    client = logged_in(admin_moderator)
    # Approved ones are not in the queue: the trajectory list shows them (same actions).
    url = reverse(QUEUE) if start == "held" else reverse("admin:trajectories_trajectory_changelist")
    tokens = dict(SEEN.findall(client.get(url).content.decode()))
    assert {str(row.pk) for row in rows} <= set(tokens)
    decided, changed, untouched = rows
    # Meanwhile: another moderator decides one, and the third is re-shared with new content.
    other = {"approve": "rejected", "reject": "approved", "hide": "hidden"}[action]
    Trajectory.objects.filter(pk=decided.pk).update(review_state=other)
    Trajectory.objects.get(pk=changed.pk).save()  # a content change: updated_at moves
    response = client.post(
        url,
        {
            "action": action,
            "_selected_action": [row.pk for row in rows],
            "reason": "looked at the list",
            **{f"seen-{row.pk}": tokens[str(row.pk)] for row in rows},
        },
        follow=True,
    )
    text = response.content.decode()
    end = {"approve": "approved", "reject": "rejected", "hide": "hidden"}[action]
    assert Trajectory.objects.get(pk=untouched.pk).review_state == end
    assert Trajectory.objects.get(pk=decided.pk).review_state == other
    assert Trajectory.objects.get(pk=changed.pk).review_state == start
    assert "1 trajectories" in text
    said = f"Skipped {decided.share_id[:12]}: changed since you saw the list (it was {start}, "
    assert said + f"it is now {other}); nothing was done" in text
    assert f"Skipped {changed.share_id[:12]}: changed since you saw the list (its content" in text
    actions = AuditEntry.objects.filter(actor=admin_moderator).values_list("share_id", flat=True)
    assert list(actions) == [untouched.share_id]


def test_bulk_decisions_refuse_rows_the_list_did_not_show(admin_moderator):
    """No token (a "select all" over other pages, a forged post): nothing is done to the row."""
    row = held()
    response = logged_in(admin_moderator).post(
        reverse(QUEUE), {"action": "approve", "_selected_action": [row.pk]}, follow=True
    )
    assert f"Skipped {row.share_id[:12]}: not on the list you saw" in response.content.decode()
    assert Trajectory.objects.get(pk=row.pk).review_state == "held"


def test_takedown_and_appeal_decisions_on_the_items_page(admin_moderator):
    taken = approved()
    request = TakedownRequest.objects.create(
        trajectory=taken, email="p@example.org", text="mine", state="open"
    )
    _decide(logged_in(admin_moderator), taken, "grant_takedown", takedown=request.pk, reason="yes")
    assert Trajectory.objects.get(pk=taken.pk).review_state == "hidden"
    assert TakedownRequest.objects.get().state == "granted"
    appealed = make_trajectory(events=["ls"], review_state="rejected")
    Appeal.objects.create(trajectory=appealed, text="please")
    _decide(logged_in(admin_moderator), appealed, "uphold", reason="still a key")
    assert Appeal.objects.get().resolution == "declined"
    assert appealed.share_id[:12] not in listed(logged_in(admin_moderator))


@pytest.mark.parametrize("who", [None, "owner", "other_user", "moderator"])
def test_nobody_else_reaches_the_queue(request, who):
    trajectory = held()
    client = logged_in(request.getfixturevalue(who) if who else None)
    for url in (reverse(QUEUE), item_url(trajectory)):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    response = client.post(item_url(trajectory), {"decision": "approve", "seen_state": "held"})
    assert response.status_code == 302
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"


def test_staff_work_the_queue_too(staff):
    trajectory = held()
    assert trajectory.share_id[:12] in listed(logged_in(staff))
    _decide(logged_in(staff), trajectory, "approve")
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="approved")
    assert entry.actor_kind == "staff"


def test_the_moderators_group_has_exactly_the_permissions_moderating_needs(admin_moderator):
    group = Group.objects.get(name="moderators")
    granted = {
        (p.content_type.app_label, p.codename)
        for p in group.permissions.select_related("content_type")
    }
    assert granted == MODERATOR_PERMISSIONS
    assert all(
        codename.startswith("view_") or codename == "decide_review" for _, codename in granted
    )
    assert not admin_moderator.is_superuser
    assert not admin_moderator.has_perm("accounts.view_user")
    assert not admin_moderator.has_perm("trajectories.delete_trajectory")


def test_staff_manage_accounts_and_revoke_tokens_moderators_cannot(
    admin_moderator, owner, django_user_model
):
    token = ApiToken.objects.create(user=owner, prefix="thb_abc", key_hash="0" * 64)
    users = reverse("admin:accounts_user_changelist")
    tokens = reverse("admin:accounts_apitoken_changelist")
    moderator = logged_in(admin_moderator)
    assert moderator.get(users).status_code == 403
    assert moderator.get(tokens).status_code == 403
    root = logged_in(django_user_model.objects.create_superuser("root", password="x"))
    assert b"owner" in root.get(users).content
    listing = root.get(tokens).content
    assert b"thb_abc" in listing and b"0" * 64 not in listing
    assert root.get(reverse("admin:accounts_apitoken_add")).status_code == 403
    root.post(tokens, {"action": "delete_selected", "_selected_action": [token.pk], "post": "yes"})
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    assert (
        moderator.post(
            reverse("admin:accounts_user_delete", args=[owner.pk]), {"post": "yes"}
        ).status_code
        == 403
    )


def test_redact_and_approve_never_approves_without_the_redaction(admin_moderator, monkeypatch):
    """The trajectory changes while its rescan runs (the rescan is stale and writes nothing):
    the approval is refused rather than published without the moderator's redaction."""
    from apps.moderation.errors import ModerationError
    from apps.moderation.services import redact, scan

    trajectory = held(title="deploy with hunter2-corp-password")
    real_find = scan.find_in_trajectory

    def find_then_change(scanner, t, *args):
        found = real_find(scanner, t, *args)
        Trajectory.objects.filter(pk=t.pk).update(chain_fingerprint="changed meanwhile")
        return found

    monkeypatch.setattr(scan, "find_in_trajectory", find_then_change)
    with pytest.raises(ModerationError, match="changed while it was being redacted"):
        redact.trajectory_redact_approve(
            trajectory=trajectory, moderator=admin_moderator, values=["hunter2-corp-password"]
        )
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"


def test_one_value_found_nine_times_is_one_finding_with_its_count(admin_moderator):
    # The queue said "9 (9 secrets)" and the item's page listed nine findings for one key
    # pasted into nine commands.
    import re

    key = s.openai_key()
    trajectory = make_trajectory(
        events=[f"export OPENAI_API_KEY={key} && step {n}" for n in range(9)]
        + [f"mail {s.openai_key()}"]
    )
    trajectory_scan(trajectory=trajectory)
    assert trajectory.findings.count() == 10  # each occurrence is still recorded
    client = logged_in(admin_moderator)
    page = listed(client)
    assert "2 (2 secrets), found 10 times" in page
    item = client.get(item_url(trajectory)).content.decode()
    assert "Findings (2, found 10 times)" in item
    rows = re.findall(r"<tr><td>(step \d+, [^<]+)</td><td>(\d+) times?</td>", item)
    assert rows == [("step 1, text", "9"), ("step 10, text", "1")]
    assert item.count(f"<mark>{key}</mark>") == 1
