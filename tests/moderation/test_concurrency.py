"""Two moderators deciding the same item at once: exactly one wins, the other is told.

Real concurrent transactions (threads, each with its own database connection) on PostgreSQL; the
conditional update on the state each moderator saw is what decides.
"""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections

from apps.moderation.errors import ModerationError
from apps.moderation.models import AuditEntry
from apps.moderation.services.decisions import trajectory_approve, trajectory_reject
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Trajectory
from tests.conftest import skip_or_fail
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

ROUNDS = 5


def _race(first, second) -> list[object]:
    """Run both at the same moment; each result is the trajectory or the error raised."""
    barrier = threading.Barrier(2)
    results: list[object] = [None, None]

    def run(index, action):
        try:
            barrier.wait(timeout=10)
            results[index] = action()
        except Exception as error:  # the loser's answer, asserted below
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_moderators_at_once_exactly_one_wins(django_user_model):
    if connection.vendor != "postgresql":
        skip_or_fail("concurrent transactions need PostgreSQL (set DATABASE_URL)")
    group, _ = Group.objects.get_or_create(name="moderators")
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    bob = django_user_model.objects.create_user("bob", is_staff=True)
    alice.groups.add(group)
    bob.groups.add(group)
    for _ in range(ROUNDS):
        trajectory = make_trajectory(events=[f"export KEY={s.openai_key()}"])
        trajectory_scan(trajectory=trajectory)
        # What each moderator's page showed: the same held trajectory.
        seen_by_alice = Trajectory.objects.get(pk=trajectory.pk)
        seen_by_bob = Trajectory.objects.get(pk=trajectory.pk)
        assert seen_by_alice.review_state == seen_by_bob.review_state == "held"

        results = _race(
            lambda a=seen_by_alice: trajectory_approve(trajectory=a, moderator=alice, note="ok"),
            lambda b=seen_by_bob: trajectory_reject(trajectory=b, moderator=bob, note="a key"),
        )
        errors = [r for r in results if isinstance(r, Exception)]
        winners = [r for r in results if isinstance(r, Trajectory)]
        assert len(winners) == 1 and len(errors) == 1, results
        assert isinstance(errors[0], ModerationError)
        assert "changed by someone else meanwhile" in str(errors[0])
        final = Trajectory.objects.get(pk=trajectory.pk).review_state
        assert final == winners[0].review_state
        # The message names what happened instead.
        assert f"it is now {final}" in str(errors[0])
        decisions = AuditEntry.objects.filter(
            share_id=trajectory.share_id, action__in=["approved", "rejected"]
        )
        assert decisions.count() == 1 and decisions.get().details["to"] == final
