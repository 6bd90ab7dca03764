"""The scan service (services/scan.py): placeholders, redaction on public surfaces, findings, the
scan's decision."""

from __future__ import annotations

import pytest

from apps.moderation.models import AuditEntry, Finding
from apps.moderation.services.placeholders import masked_preview
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import redact_data, redactor
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


def public_view(trajectory: Trajectory) -> list[tuple[str, dict]]:
    """What a public surface shows: events through the trajectory's redactor."""
    redact = redactor(trajectory.redactions)
    return [
        (redact(event.text), redact_data(event.data, redact))
        for event in trajectory.events.order_by("position")
    ]


def test_clean_public_trajectory_is_approved_and_published():
    trajectory = make_trajectory(events=["ls -la", "total 0"])
    result = trajectory_scan(trajectory=trajectory)
    assert result.changed and result.review_state == "approved" and result.counts == {}
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"
    assert trajectory.published_at is not None
    assert Trajectory.objects.public().filter(pk=trajectory.pk).exists()
    entry = AuditEntry.objects.get(share_id=trajectory.share_id)
    assert entry.action == "scan_approved" and entry.actor is None
    assert entry.details["from"] == "pending" and entry.details["to"] == "approved"


def test_personal_data_is_approved_and_shown_redacted_with_consistent_placeholders():
    events = [
        ("git config user.email jane.roe@gmail.com", {"args": {"command": "git config"}}),
        (
            "Author: Jane <jane.roe@gmail.com>, reviewer bob.smith@acme-corp.io",
            {"extras": {"emails": ["bob.smith@acme-corp.io", "jane.roe@gmail.com"]}},
        ),
        ("ping 8.8.4.4", {"args": {"command": "ping 8.8.4.4", "host": "8.8.4.4"}}),
    ]
    trajectory = make_trajectory(events=events, feedback_text="reach me at +1 415 555 2671")
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "approved"
    assert result.counts == {"email": 5, "ip_address": 3, "phone": 1}
    trajectory.refresh_from_db()
    assert trajectory.redactions == {
        "jane.roe@gmail.com": "<EMAIL_1>",
        "bob.smith@acme-corp.io": "<EMAIL_2>",
        "8.8.4.4": "<IP_ADDRESS_1>",
        "+1 415 555 2671": "<PHONE_1>",
    }
    shown = public_view(trajectory)
    assert shown[0][0] == "git config user.email <EMAIL_1>"
    assert shown[1] == (
        "Author: Jane <<EMAIL_1>>, reviewer <EMAIL_2>",
        {"extras": {"emails": ["<EMAIL_2>", "<EMAIL_1>"]}},
    )
    assert shown[2][1] == {"args": {"command": "ping <IP_ADDRESS_1>", "host": "<IP_ADDRESS_1>"}}
    assert redactor(trajectory.redactions)(trajectory.feedback_text) == "reach me at <PHONE_1>"


def test_findings_record_where_and_a_masked_preview_not_the_value():
    key = s.openai_key()
    trajectory = make_trajectory(
        events=[("run", {"args": {"env": {"OPENAI_API_KEY": key}, "command": "python x.py"}})],
        title="debugging",
    )
    trajectory_scan(trajectory=trajectory)
    finding = Finding.objects.get(trajectory=trajectory)
    assert (finding.position, finding.path, finding.kind, finding.category) == (
        0,
        "data.args.env.OPENAI_API_KEY",
        "openai_api_key",
        "secret",
    )
    assert (finding.start, finding.end) == (0, len(key))
    assert finding.placeholder == "<OPENAI_API_KEY_1>"
    assert key not in finding.preview and key[4:-2] not in finding.preview
    assert finding.preview == masked_preview(key) == f"{key[:4]}…{key[-2:]} (51 chars)"


def test_a_secret_holds_the_trajectory_and_is_redacted_anyway():
    key = s.github_token()
    trajectory = make_trajectory(events=[f"git push https://{key}@github.com/acme/app"])
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "held" and result.has_secrets
    trajectory.refresh_from_db()
    assert trajectory.review_state == "held" and trajectory.published_at is None
    assert not Trajectory.objects.public().filter(pk=trajectory.pk).exists()
    assert public_view(trajectory)[0][0] == "git push https://<GITHUB_TOKEN_1>@github.com/acme/app"
    assert AuditEntry.objects.get(share_id=trajectory.share_id).action == "scan_held"


def test_a_secret_named_only_by_its_json_key_is_found():
    value = s.body(24)
    trajectory = make_trajectory(events=[("docker run", {"env": {"DB_PASSWORD": value}})])
    result = trajectory_scan(trajectory=trajectory)
    assert result.counts == {"secret": 1} and result.review_state == "held"
    assert public_view(Trajectory.objects.get(pk=trajectory.pk))[0][1] == {
        "env": {"DB_PASSWORD": "<SECRET_1>"}
    }


def test_secrets_in_title_and_metadata_are_scanned():
    key = s.huggingface_token()
    trajectory = make_trajectory(
        title=f"login {key}", metadata={"llm": {"api_key": s.openai_key()}}
    )
    result = trajectory_scan(trajectory=trajectory)
    assert result.counts == {"huggingface_token": 1, "openai_api_key": 1}
    assert set(Finding.objects.values_list("path", flat=True)) == {"title", "metadata.llm.api_key"}


def test_secrets_in_an_events_own_id_and_cause_are_scanned(client):
    # Issue 20's canary crawl: a Claude Code record's uuid (kept as the event's id) carrying a
    # token was shown whole by the events API, since the scan read only text and data.
    in_id, in_cause = s.github_token(), s.github_token()
    trajectory = make_trajectory(events=["ls", "total 0"])
    Event.objects.filter(trajectory=trajectory, position=0).update(original_id=f"u1 {in_id}")
    Event.objects.filter(trajectory=trajectory, position=1).update(cause=f"call {in_cause}")
    result = trajectory_scan(trajectory=trajectory)
    assert result.counts == {"github_token": 2}
    assert set(Finding.objects.values_list("position", "path")) == {
        (0, "original_id"),
        (1, "cause"),
    }
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    body = client.get(f"/api/v1/trajectories/{trajectory.share_id}/events").content.decode()
    assert in_id[4:20] not in body and in_cause[4:20] not in body
    assert "u1 <GITHUB_TOKEN_1>" in body and "call <GITHUB_TOKEN_2>" in body


@pytest.mark.parametrize("visibility", ["public", "private"])
def test_premoderation_holds_everything(settings, visibility):
    settings.TRAJHUB_PREMODERATION = True
    trajectory = make_trajectory(events=["echo hello"], visibility=visibility)
    assert trajectory_scan(trajectory=trajectory).review_state == "held"
    assert AuditEntry.objects.get(share_id=trajectory.share_id).details["premoderation"] is True


def test_auto_redact_kinds_setting_decides_what_is_approved(settings):
    settings.TRAJHUB_AUTO_REDACT_KINDS = ["email"]
    trajectory = make_trajectory(events=["ping 8.8.4.4"])
    assert trajectory_scan(trajectory=trajectory).review_state == "held"


def test_private_clean_trajectory_is_approved_but_not_published():
    trajectory = make_trajectory(events=["ls"], visibility="private")
    assert trajectory_scan(trajectory=trajectory).review_state == "approved"
    trajectory.refresh_from_db()
    assert trajectory.published_at is None
    assert not Trajectory.objects.public().filter(pk=trajectory.pk).exists()


def test_rescan_keeps_placeholders_and_replaces_findings():
    trajectory = make_trajectory(events=["mail jane.roe@gmail.com and bob.smith@acme-corp.io"])
    trajectory_scan(trajectory=trajectory)
    assert Finding.objects.filter(trajectory=trajectory).count() == 2
    # A re-share: new events, back to pending (as the ingest service does on update).
    Event.objects.filter(trajectory=trajectory).delete()
    Event.objects.create(
        trajectory=trajectory,
        position=0,
        source="agent",
        kind="message",
        type="message",
        text="only bob.smith@acme-corp.io and new carol@mail.io",
    )
    trajectory.review_state = "pending"
    trajectory.num_events = 1
    trajectory.save()
    result = trajectory_scan(trajectory=trajectory)
    assert result.changed and result.review_state == "approved"
    trajectory.refresh_from_db()
    # bob keeps <EMAIL_2>; jane is gone; carol takes the free number 1.
    assert trajectory.redactions == {
        "bob.smith@acme-corp.io": "<EMAIL_2>",
        "carol@mail.io": "<EMAIL_1>",
    }
    assert Finding.objects.filter(trajectory=trajectory).count() == 2


def test_scan_leaves_a_moderators_decision_alone():
    trajectory = make_trajectory(events=["ls"], review_state="rejected")
    result = trajectory_scan(trajectory=trajectory)
    assert not result.changed and result.review_state == "rejected"
    assert not AuditEntry.objects.exists()


def test_stale_scan_writes_nothing(monkeypatch):
    """The trajectory changes while it is being scanned: the scan must not approve old content."""
    from apps.moderation.services import scan

    trajectory = make_trajectory(events=["ls"])
    real_find = scan.find_in_trajectory

    def find_then_change(scanner, t, *args):
        found = real_find(scanner, t, *args)
        Trajectory.objects.filter(pk=t.pk).update(num_events=2, chain_fingerprint="new")
        return found

    monkeypatch.setattr(scan, "find_in_trajectory", find_then_change)
    result = trajectory_scan(trajectory=trajectory)
    assert result.stale and not result.changed
    trajectory.refresh_from_db()
    assert trajectory.review_state == "pending"
    assert not AuditEntry.objects.exists()


def test_scan_of_a_deleted_trajectory_is_a_no_op():
    trajectory = make_trajectory(events=["ls"])
    Trajectory.objects.filter(pk=trajectory.pk).delete()
    assert trajectory_scan(trajectory=trajectory).stale


def test_findings_are_capped_but_redactions_are_complete(settings):
    settings.TRAJHUB_SCAN_MAX_FINDINGS = 3
    emails = [f"user{i}@mail-{i}.io" for i in range(6)]
    trajectory = make_trajectory(events=[" ".join(emails)])
    result = trajectory_scan(trajectory=trajectory)
    assert result.counts == {"email": 6} and result.stored_findings == 3
    assert Finding.objects.filter(trajectory=trajectory).count() == 3
    trajectory.refresh_from_db()
    assert len(trajectory.redactions) == 6


def test_many_distinct_values_hold_a_trajectory_instead_of_approving_it(settings):
    """Issue 7: a share of 20,000 outputs with 15 distinct emails each was auto-approved with
    300,000 redactions. Past TRAJHUB_SCAN_MAX_DISTINCT distinct values a moderator decides."""
    settings.TRAJHUB_SCAN_MAX_DISTINCT = 30
    emails = [f"user{i}.leak@gmail.com" for i in range(40)]
    events = [" ".join(emails[i : i + 15]) for i in range(0, 40, 5)]
    many = make_trajectory(events=events)
    result = trajectory_scan(trajectory=many)
    assert result.review_state == "held" and result.counts == {
        "email": sum(len(emails[i : i + 15]) for i in range(0, 40, 5))
    }
    entry = AuditEntry.objects.get(share_id=many.share_id)
    assert entry.details["distinct_values"] == 40
    assert not Trajectory.objects.public().filter(pk=many.pk).exists()
    few = make_trajectory(events=[" ".join(emails[:30])])
    assert trajectory_scan(trajectory=few).review_state == "approved"


def test_a_home_folder_user_name_is_redacted_wherever_it_stands_in_the_trajectory():
    """Issue 22: local sessions are full of the user's home folder; the name in it is personal
    data, and so is the same name in a prompt, `whoami` output or a git author line of the same
    trajectory. The rest of the path stays, so the trajectory still reads."""
    events = [
        ("cd /Users/dkowalski/work/greet && ls", {"args": {"cwd": "/Users/dkowalski/work"}}),
        ("dkowalski@laptop greet % whoami\ndkowalski", {}),
        ("Author: dkowalski <dk@users.noreply.github.com>", {}),
        ("dkowalskis and xdkowalski are other words", {}),
    ]
    trajectory = make_trajectory(events=events, metadata={"cwd": "/home/dkowalski/greet"})
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "approved"  # redacted automatically, not held
    trajectory.refresh_from_db()
    view = public_view(trajectory)
    assert view[0] == (
        "cd /Users/<USER_NAME_1>/work/greet && ls",
        {"args": {"cwd": "/Users/<USER_NAME_1>/work"}},
    )
    assert view[1][0] == "<USER_NAME_1>@laptop greet % whoami\n<USER_NAME_1>"
    assert view[2][0].startswith("Author: <USER_NAME_1> <")
    # A redaction replaces its value wherever it stands, inside other words too.
    assert view[3][0] == "<USER_NAME_1>s and x<USER_NAME_1> are other words"
    assert redactor(trajectory.redactions)(trajectory.metadata["cwd"]) == (
        "/home/<USER_NAME_1>/greet"
    )


def test_a_machine_name_in_a_prompt_is_redacted_wherever_it_stands_in_the_trajectory():
    """Issue 22: host names become <HOST_n>: the prompt names the sharer's computer, and so do
    `hostname` output and a `.local` address of the same trajectory."""
    events = [
        "carol@carols-mbp-14 shop % hostname\ncarols-mbp-14",
        "ping carols-mbp-14.local",
        "ssh deploy@ci-runner-eu7:/srv && carol@carols-mbp-14 shop % exit",
    ]
    trajectory = make_trajectory(events=events)
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "approved"  # redacted automatically, not held
    assert result.counts["host"] == 3
    trajectory.refresh_from_db()
    view = [text for text, _ in public_view(trajectory)]
    assert view[0] == "carol@<HOST_1> shop % hostname\n<HOST_1>"
    assert view[1] == "ping <HOST_1>.local"
    assert view[2] == "ssh deploy@<HOST_2>:/srv && carol@<HOST_1> shop % exit"


def test_generic_home_folders_name_no_one():
    trajectory = make_trajectory(events=["cd /home/runner/work && ls /home/user /Users/Shared"])
    result = trajectory_scan(trajectory=trajectory)
    assert result.counts == {}
