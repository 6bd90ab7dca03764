"""Events made ready to store: cleaned (cleaning.py), serialised once, fingerprinted as a chain
(each link covers the event and all before it: dedup.py compares chains)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.models import EventRow
from apps.trajectories.services.cleaning import _Cleaner, _clip, _ImageStore, _needs_cleaning


@dataclass
class _PreparedEvent(EventRow):
    data_json: bytes  # sorted keys: also the input of the fingerprint
    fingerprint: bytes


@dataclass
class _Prepared:
    events: list[_PreparedEvent]
    images: dict[str, tuple[int, str]] = field(default_factory=dict)  # sha -> (size, type)
    metadata: dict[str, Any] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)  # chain fingerprint after each event

    @property
    def head(self) -> str:
        return self.chain[0] if self.chain else ""


def _prepare_events(
    events: list[CanonicalEvent], metadata: dict[str, Any], store_image: _ImageStore
) -> _Prepared:
    """Clean every event (NULs, images out), serialise its data, fingerprint the chain.

    The canonical events are emptied as they are done, so the original strings (screenshots as
    data URLs) can be freed while the rest is prepared.
    """
    cleaner = _Cleaner(store_image)
    prepared: list[_PreparedEvent] = []
    chain: list[str] = []
    previous = b""
    for position, event in enumerate(events):
        data = event.data if isinstance(event.data, dict) else {"value": event.data}
        dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        if _needs_cleaning(dumped):
            data = cleaner.value(data)
            dumped = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        text = event.text or ""
        if "\x00" in text or "data:image/" in text:
            text = cleaner.text(text)
        fingerprint = _event_fingerprint(
            event.source, event.kind, event.type, event.original_id, dumped
        )
        link = hashlib.sha256(previous + fingerprint).digest()
        chain.append(link.hex())
        previous = link
        prepared.append(
            _PreparedEvent(
                position=position,
                original_id=_clip(event.original_id, 100),
                timestamp=_safe_timestamp(event.timestamp),
                source=_clip(event.source, 12),
                kind=_clip(event.kind, 12),
                type=_clip(event.type, 60),
                cause=_clip(event.cause, 100),
                text=text,
                data=data,
                data_json=dumped,
                fingerprint=fingerprint,
            )
        )
        event.data, event.text = {}, ""
    clean_metadata = cleaner.value(metadata or {})
    return _Prepared(events=prepared, images=cleaner.images, chain=chain, metadata=clean_metadata)


def _safe_timestamp(value: Any) -> datetime | None:
    """A timestamp the database and Python can both hold, else None (the event is kept)."""
    if not isinstance(value, datetime):
        return None
    try:
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return utc if 1 < utc.year < 9999 else None


def _event_fingerprint(
    source: str, kind: str, type_: str, original_id: str, dumped: bytes
) -> bytes:
    head = orjson.dumps([source, kind, type_, original_id])
    return hashlib.sha256(head + b"\n" + dumped).digest()
