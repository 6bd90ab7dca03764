"""Chain fingerprints: each event's fingerprint, and the chain over them (each link covers the
event and all before it), so that "these events are a prefix of those" is one comparison.

Ingest fingerprints the events it prepares (services/events.py); dedup and the release gate
read the chain of stored events back from the database with `stored_chain`.
"""

from __future__ import annotations

import hashlib

import orjson

from apps.trajectories.models import Event, Trajectory


def event_fingerprint(source: str, kind: str, type_: str, original_id: str, dumped: bytes) -> bytes:
    """One event's fingerprint; `dumped`: its data as JSON with sorted keys."""
    head = orjson.dumps([source, kind, type_, original_id])
    return hashlib.sha256(head + b"\n" + dumped).digest()


def chain_link(previous: bytes, fingerprint: bytes) -> bytes:
    """The chain's link after an event: the link before it (b"" for the first) and its print."""
    return hashlib.sha256(previous + fingerprint).digest()


def stored_chain(trajectory: Trajectory, count: int) -> list[str]:
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
        previous = chain_link(previous, event_fingerprint(source, kind, type_, original_id, dumped))
        chain.append(previous.hex())
    return chain
