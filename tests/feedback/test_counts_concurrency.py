"""Two readers marking the same trajectory at the same moment: both marks are counted.

Real concurrent transactions (threads, each with its own connection) on PostgreSQL. Each
inserts its mark, then recounts before either has committed; the recount's row lock makes the
second wait for the first's commit and count both (without it each counts only its own, and
the last write leaves 1). The lock must not deadlock with the marks' foreign-key locks."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from apps.feedback.counts import trajectory_counts_recount
from apps.feedback.models import FirstWrongMark
from apps.trajectories.models import FlaggedDecile, Trajectory
from tests.conftest import skip_or_fail
from tests.ingest_helpers import make_trajectory

ROUNDS = 3


def _mark(trajectory, reader, inserted: threading.Barrier, errors: list) -> None:
    try:
        with transaction.atomic():
            FirstWrongMark.objects.create(
                trajectory=trajectory,
                position=1,
                fingerprint="f" * 32,
                author=reader,
                author_key=f"user:{reader.pk}",
            )
            inserted.wait(timeout=10)  # both marks written, neither committed
            trajectory_counts_recount(trajectory_id=trajectory.pk)
    except BaseException as error:  # a deadlock would surface here
        errors.append(error)
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_two_marks_committed_at_once_are_both_counted(owner, django_user_model):
    if connection.vendor != "postgresql":
        skip_or_fail("concurrent transactions need PostgreSQL (set DATABASE_URL)")
    readers = [django_user_model.objects.create_user(f"reader{i}") for i in range(2)]
    for round_ in range(ROUNDS):
        trajectory = make_trajectory(owner=owner, task=f"race {round_}")
        inserted = threading.Barrier(2)
        errors: list[BaseException] = []

        threads = [
            threading.Thread(target=_mark, args=(trajectory, reader, inserted, errors))
            for reader in readers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == []
        assert Trajectory.objects.get(pk=trajectory.pk).first_wrong_count == 2
        assert list(
            FlaggedDecile.objects.filter(trajectory=trajectory).values_list("decile", "marks")
        ) == [(2, 2)]
