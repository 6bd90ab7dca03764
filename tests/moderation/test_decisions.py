"""The moderators' decisions (services/decisions.py): approve, hide, reject, and the transitions
and people refused."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from apps.moderation.errors import ModerationError
from apps.moderation.models import AuditEntry
from apps.moderation.services.decisions import (
    trajectory_approve,
    trajectory_hide,
    trajectory_reject,
)
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


def test_approve_a_held_trajectory_publishes_it_and_audits(moderator):
    trajectory = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=trajectory)
    trajectory_approve(trajectory=trajectory, moderator=moderator, note="test key, revoked")
    assert trajectory.review_state == "approved" and trajectory.published_at is not None
    assert Trajectory.objects.public().filter(pk=trajectory.pk).exists()
    entry = AuditEntry.objects.filter(share_id=trajectory.share_id).first()
    assert (entry.actor, entry.action) == (moderator, "approved")
    assert (entry.actor_kind, entry.actor_username) == ("moderator", "moderator")
    assert entry.reason == "test key, revoked"
    assert entry.details == {"from": "held", "to": "approved"}


def test_hide_then_reject(moderator):
    trajectory = make_trajectory(events=["ls"])
    trajectory_scan(trajectory=trajectory)
    published = Trajectory.objects.get(pk=trajectory.pk).published_at
    trajectory_hide(trajectory=trajectory, moderator=moderator, note="reported")
    assert trajectory.review_state == "hidden"
    assert not Trajectory.objects.public().filter(pk=trajectory.pk).exists()
    trajectory_reject(trajectory=trajectory, moderator=moderator)
    assert trajectory.review_state == "rejected"
    # Re-approving keeps the first publication date.
    trajectory_approve(trajectory=trajectory, moderator=moderator)
    assert trajectory.published_at == published
    actions = list(
        AuditEntry.objects.filter(share_id=trajectory.share_id)
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == ["scan_approved", "hidden", "rejected", "approved"]


def test_invalid_transitions_are_refused(moderator):
    pending = make_trajectory(events=["ls"])
    with pytest.raises(ModerationError, match="not scanned yet"):
        trajectory_approve(trajectory=pending, moderator=moderator)
    held = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=held)
    with pytest.raises(ModerationError, match="cannot be hidden"):
        trajectory_hide(trajectory=held, moderator=moderator)
    assert Trajectory.objects.get(pk=held.pk).review_state == "held"
    assert not AuditEntry.objects.filter(actor=moderator).exists()


def test_only_moderators_can_act(other_user):
    trajectory = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=trajectory)
    with pytest.raises(PermissionDenied):
        trajectory_approve(trajectory=trajectory, moderator=other_user)
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"
