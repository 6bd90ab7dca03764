"""The scan reached through its tasks, the signal receiver, the sweep and the command."""

from __future__ import annotations

import orjson
import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from apps.moderation.models import AuditEntry, Finding
from apps.moderation.tasks import SWEEP_LOCK, scan_sweep, scan_trajectory
from apps.trajectories.models import Trajectory
from apps.trajectories.redaction import redactor
from apps.trajectories.services.notify import announce_stored
from apps.trajectories.signals import trajectory_deleted, trajectory_stored
from tests.ingest_helpers import v0_events
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


def state(trajectory: Trajectory) -> str:
    return Trajectory.objects.get(pk=trajectory.pk).review_state


def test_task_scans_through_celery_eager_path():
    trajectory = make_trajectory(events=["ls"])
    scan_trajectory.delay(trajectory.pk)
    assert state(trajectory) == "approved"


def test_task_for_a_vanished_trajectory_does_nothing():
    assert scan_trajectory.delay(2**40).get() is None


def test_stored_signal_queues_the_scan_on_commit(django_capture_on_commit_callbacks):
    trajectory = make_trajectory(events=[f"token {s.slack_token()}"])
    # The stored signal is sent once the transaction commits (one on_commit, the sender's)...
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        announce_stored(trajectory.pk, created=True)
    # Nothing runs before the transaction commits...
    assert state(trajectory) == "pending" and len(callbacks) == 1
    callbacks[0]()
    # ...then the scan holds it.
    assert state(trajectory) == "held"


def test_stored_signal_queues_the_scan_at_once(django_capture_on_commit_callbacks):
    trajectory = make_trajectory(events=[f"token {s.slack_token()}"])
    # ...and the receiver queues the scan without waiting for another commit.
    with django_capture_on_commit_callbacks(execute=False):
        trajectory_stored.send(sender=Trajectory, trajectory_id=trajectory.pk, created=True)
        assert state(trajectory) == "held"


def test_deleted_signal_is_audited():
    trajectory_deleted.send(sender=Trajectory, share_id="a" * 64, was_public=True)
    entry = AuditEntry.objects.get(share_id="a" * 64)
    assert entry.action == "deleted" and entry.details == {"was_public": True}


def test_sweep_scans_old_pending_only_and_is_idempotent():
    old_clean = make_trajectory(events=["ls"], age_seconds=600)
    old_secret = make_trajectory(events=[s.aws_key_id()], age_seconds=600)
    fresh = make_trajectory(events=["ls"])  # its on-commit scan is still due
    assert scan_sweep.delay().get() == 2
    assert (state(old_clean), state(old_secret), state(fresh)) == ("approved", "held", "pending")
    audits = AuditEntry.objects.count()
    assert scan_sweep() == 0  # a second run finds nothing left and writes nothing
    assert AuditEntry.objects.count() == audits == 2


def test_sweep_is_bounded(settings):
    settings.TRAJHUB_SCAN_SWEEP_BATCH = 2
    for _ in range(3):
        make_trajectory(events=["ls"], age_seconds=600)
    assert scan_sweep() == 2
    assert Trajectory.objects.filter(review_state="pending").count() == 1
    assert scan_sweep() == 1


def test_sweep_skips_while_another_sweep_holds_the_lock():
    trajectory = make_trajectory(events=["ls"], age_seconds=600)
    assert cache.add(SWEEP_LOCK, "1", timeout=60)
    assert scan_sweep() == 0
    assert state(trajectory) == "pending"
    cache.delete(SWEEP_LOCK)
    assert scan_sweep() == 1


def test_scan_pending_command(capsys):
    make_trajectory(events=["ls"])
    make_trajectory(events=[s.google_key()])
    call_command("scan_pending")
    assert "scanned 2 trajectories: 1 approved, 1 held" in capsys.readouterr().out
    call_command("scan_pending")
    assert "scanned 0 trajectories" in capsys.readouterr().out


def test_scan_pending_command_rescans_named_trajectories(capsys):
    trajectory = make_trajectory(events=["mail jane.roe@gmail.com"], review_state="approved")
    call_command("scan_pending", trajectory.share_id)
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved"  # a decision is not revisited...
    assert trajectory.redactions == {"jane.roe@gmail.com": "<EMAIL_1>"}  # ...redactions are
    with pytest.raises(CommandError, match="no trajectory"):
        call_command("scan_pending", "f" * 64)


def test_ingested_share_is_scanned_and_redacted(django_capture_on_commit_callbacks):
    """End to end through the ingest service: a stored share ends up scanned."""
    from apps.trajectories.services import ShareOptions, trajectory_ingest

    key = s.openai_key()
    events = v0_events(2, task=f"use key {key} and mail jane.roe@gmail.com")
    with django_capture_on_commit_callbacks(execute=True):
        result = trajectory_ingest(
            data=orjson.dumps(events),
            user=None,
            options=ShareOptions(visibility="public", license_agreed=True),
        )
    trajectory = result.stored[0].trajectory
    trajectory.refresh_from_db()
    assert trajectory.review_state == "held"
    assert set(Finding.objects.filter(trajectory=trajectory).values_list("kind", flat=True)) == {
        "openai_api_key",
        "email",
    }
    first = trajectory.events.order_by("position").first()
    assert redactor(trajectory.redactions)(first.text) == (
        "use key <OPENAI_API_KEY_1> and mail <EMAIL_1>"
    )


def test_redis_broker_settings_redeliver_lost_tasks_soon(settings):
    """acks_late + reject_on_worker_lost: a killed pool process's task is requeued at once; a
    whole worker's unacknowledged task comes back after the visibility timeout, which is just
    longer than a task may run, not Redis' default hour. (tests/infra/test_worker_crash.py kills
    real workers.)"""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, config.settings as s; print(json.dumps([s.CELERY_TASK_ACKS_LATE, "
        "s.CELERY_TASK_REJECT_ON_WORKER_LOST, s.CELERY_BROKER_TRANSPORT_OPTIONS]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "REDIS_"))}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "REDIS_URL": "redis://127.0.0.1:6379/9"},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    acks_late, reject_on_lost, options = json.loads(out)
    assert acks_late is True and reject_on_lost is True
    assert settings.CELERY_TASK_TIME_LIMIT < options["visibility_timeout"] <= 3600 / 2
