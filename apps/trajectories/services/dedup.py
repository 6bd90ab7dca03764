"""Which stored trajectory a new share continues: the same client session, or stored events
that are a prefix of the new ones (or the new ones a prefix of them), within one submitter."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import orjson
from django.db import connection
from django.db.models import QuerySet

from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.prepare import _event_fingerprint, _Prepared

if TYPE_CHECKING:
    from apps.accounts.models import User


def _stored_chain(trajectory: Trajectory, count: int) -> list[str]:
    """Chain fingerprints of the first `count` stored events (to test "new is a prefix of it")."""
    chain: list[str] = []
    previous = b""
    rows = (
        Event.objects.filter(trajectory=trajectory, position__lt=count)
        .order_by("position")
        .values_list("source", "kind", "type", "original_id", "data")
    )
    for source, kind, type_, original_id, data in rows.iterator(chunk_size=500):
        dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        link = hashlib.sha256(
            previous + _event_fingerprint(source, kind, type_, original_id, dumped)
        )
        previous = link.digest()
        chain.append(link.hexdigest())
    return chain


def _advisory_lock(key: str) -> None:
    """Serialise ingests of one submitter scope (PostgreSQL; SQLite serialises all writes)."""
    if connection.vendor != "postgresql":
        return
    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [number])


def _scope(user: User | None, email: str) -> tuple[QuerySet[Trajectory] | None, str]:
    if user is not None:
        return Trajectory.objects.filter(owner=user), f"owner:{user.pk}"
    if email:
        return (
            Trajectory.objects.filter(owner__isnull=True, contact_email__iexact=email),
            f"email:{email.lower()}",
        )
    return None, ""


def _find_same_session(
    scope_qs: QuerySet[Trajectory], session_id: str, prepared: _Prepared
) -> tuple[Trajectory | None, str]:
    """The stored trajectory this share continues, and how: "session", "extends", "contained"."""
    count = len(prepared.events)
    if session_id:
        match = scope_qs.filter(client_session_id=session_id).order_by("-updated_at").first()
        if match is None:
            return None, ""
        if 0 < match.num_events <= count and (
            prepared.chain[match.num_events - 1] == match.chain_fingerprint
        ):
            return match, "extends"  # a later step of the same session: append the rest
        return match, "session"
    candidates = list(
        scope_qs.filter(head_fingerprint=prepared.head)
        .order_by("-num_events", "-id")
        .only("id", "num_events", "chain_fingerprint")
    )
    for candidate in candidates:  # the longest stored prefix of the new events wins
        if 0 < candidate.num_events <= count and (
            prepared.chain[candidate.num_events - 1] == candidate.chain_fingerprint
        ):
            return candidate, "extends"
    for candidate in candidates:
        if candidate.num_events > count and _stored_chain(candidate, count) == prepared.chain:
            return candidate, "contained"
    return None, ""
