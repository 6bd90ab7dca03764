"""The one lock (apps/core/locks.py): renewed while held, gone soon after a killed holder, and
released only by its holder."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from django.db import connection

from apps.core.locks import Lease, advisory_lock, transaction_lock


def test_a_lease_is_renewed_while_its_holder_runs_and_expires_soon_after_it_dies():
    """A holder longer than the expiry keeps its lease; a holder that stops renewing (killed)
    loses it within the expiry, and the next one runs."""
    with Lease("test:lock", 1) as held:
        assert held
        time.sleep(2.2)  # past the expiry: the holder's thread renewed it
        assert not Lease("test:lock", 1).acquire()
    assert Lease("test:lock", 1).acquire() is True  # released on exit
    cache.delete("test:lock")

    dead = Lease("test:lock", 1)
    assert dead.acquire()
    dead.stop_renewing()  # as a killed worker does
    time.sleep(1.5)
    taker = Lease("test:lock", 1)
    assert taker.acquire()
    taker.release()


def test_a_holder_whose_lease_expired_and_was_taken_cannot_release_the_new_holders():
    """The regression of issue 21: the sweeps released their lock with an unconditional
    delete, so a slow sweep whose lock had expired deleted the next sweep's lock, and a third
    sweep ran beside the second."""
    slow = Lease("test:lock", 1)
    assert slow.acquire()
    slow.stop_renewing()
    time.sleep(1.5)  # expired
    second = Lease("test:lock", 1)
    assert second.acquire()
    slow.release()  # the slow holder finishes late
    assert not Lease("test:lock", 1).acquire()  # the second still holds it
    second.release()
    assert Lease("test:lock", 1).acquire()
    cache.delete("test:lock")


def test_the_sweeps_leave_a_lock_they_do_not_hold(db):
    """A sweep that finds its lock held does nothing and leaves the holder's lock in place."""
    from apps.trajectories import tasks

    cache.set(tasks.ORPHAN_SWEEP_LOCK, "another worker's token", 60)
    cache.set(tasks.REDACTION_INDEX_SWEEP_LOCK, "another worker's token", 60)
    assert tasks.orphan_sweep() == 0
    assert tasks.redaction_index_sweep() == 0
    assert cache.get(tasks.ORPHAN_SWEEP_LOCK) == "another worker's token"
    assert cache.get(tasks.REDACTION_INDEX_SWEEP_LOCK) == "another worker's token"


def test_one_advisory_lock_holder_at_a_time(db):
    with advisory_lock("test:advisory", lease_seconds=5) as first:
        assert first
        seen: list[bool] = []

        def other() -> None:
            # Another connection (thread) is another session, as another worker would be.
            from django.db import connections

            try:
                with advisory_lock("test:advisory", lease_seconds=5) as held:
                    seen.append(held)
            finally:
                connections.close_all()

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(10)
        assert seen == [False]
    with advisory_lock("test:advisory", lease_seconds=5) as again:
        assert again  # released on exit


@pytest.mark.django_db(transaction=True)
def test_the_transaction_lock_waits_for_the_holders_transaction():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises all writes: the transaction lock is a no-op there")
    from django.db import connections, transaction

    order: list[str] = []
    taken = threading.Event()

    def holder() -> None:
        try:
            with transaction.atomic():
                transaction_lock("test:xact")
                taken.set()
                time.sleep(0.5)
                order.append("holder done")
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    assert taken.wait(10)
    with transaction.atomic():
        transaction_lock("test:xact")
        order.append("waiter in")
    thread.join(10)
    assert order == ["holder done", "waiter in"]
