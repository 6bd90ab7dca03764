"""Claims: a moderator takes an item; another's decision waits until the claim ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from apps.moderation.claims import claim_blocking, claim_take
from apps.moderation.errors import ModerationError
from apps.moderation.models import Claim
from apps.moderation.services.decisions import trajectory_approve
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def second_moderator(django_user_model):
    user = django_user_model.objects.create_user("second-mod", is_staff=True)
    user.groups.add(Group.objects.get(name="moderators"))
    return user


def held() -> Trajectory:
    trajectory = make_trajectory(events=[s.openai_key()])
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def test_a_claimed_item_is_the_claimants_to_decide(admin_moderator, second_moderator):
    trajectory = held()
    claim_take(trajectory=trajectory, moderator=admin_moderator)
    with pytest.raises(ModerationError, match="claimed by mod-staff until"):
        claim_take(trajectory=trajectory, moderator=second_moderator)
    with pytest.raises(ModerationError, match="claimed by mod-staff"):
        trajectory_approve(trajectory=trajectory, moderator=second_moderator)
    assert Trajectory.objects.get(pk=trajectory.pk).review_state == "held"
    # The claimant decides; the decision releases the claim.
    trajectory_approve(trajectory=trajectory, moderator=admin_moderator)
    assert not Claim.objects.filter(trajectory=trajectory).exists()


def test_a_claim_expires(admin_moderator, second_moderator, settings):
    settings.TRAJHUB_CLAIM_SECONDS = 60
    trajectory = held()
    claim = claim_take(trajectory=trajectory, moderator=admin_moderator)
    assert claim.expires_at - claim.claimed_at == timedelta(seconds=60)
    Claim.objects.filter(pk=claim.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert claim_blocking(trajectory=trajectory, moderator=second_moderator) is None
    taken = claim_take(trajectory=trajectory, moderator=second_moderator)
    assert taken.moderator == second_moderator
    with pytest.raises(ModerationError, match="claimed by second-mod"):
        trajectory_approve(trajectory=trajectory, moderator=admin_moderator)


def test_claiming_again_renews_ones_own_claim(admin_moderator):
    trajectory = held()
    first = claim_take(trajectory=trajectory, moderator=admin_moderator)
    again = claim_take(trajectory=trajectory, moderator=admin_moderator)
    assert again.pk == first.pk and again.expires_at >= first.expires_at
