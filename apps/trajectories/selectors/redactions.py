"""Reading a trajectory's redactions for what a request shows (services/redaction_index.py).

A row loaded through `with_redaction_index` carries its index and, in the same query, the
full map only where the index is not current (`FULL`). The index is used only where it is
current and still matches what is read: the trajectory's own strings against the digests kept
in the index, each shown event against its `index_digest`. An unscanned, half-built or changed
trajectory, or an event stored or changed since, reads the whole map, as every surface did
before the index, never the raw text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson
from django.db.models import Case, F, JSONField, Q, QuerySet, Value, When

from apps.trajectories.models import Trajectory

FULL = "redactions_when_not_indexed"
INDEX_CURRENT = Q(indexed_at__isnull=False)
INDEX_FIELDS = ("redaction_index", "indexed_at")
# The trajectory's own strings: what lists show and redact with the index's "own" entries.
OWN_STRINGS = ("title", "feedback_text", "agent", "model_name", "agent_version")
_DUMP = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def map_digest(redactions: Any) -> str:
    """sha256 of the whole map as stored (sorted keys): what a derived row records of the
    redactions it was cut with (Learn-by-interact's windows), kept in the index as "map" so a
    reader compares it without reading the map."""
    return hashlib.sha256(orjson.dumps(redactions or {}, option=orjson.OPT_SORT_KEYS)).hexdigest()


def text_digest(text: str | None) -> str:
    return _digest((text or "").encode("utf-8", "surrogatepass"))


def event_digest(event: Any) -> str:
    """Of what an event's entries were gathered from: its text, then its other fields."""
    rest = orjson.dumps([event.original_id, event.cause, event.data], option=_DUMP)
    return text_digest(event.text) + _digest(rest)


def strings_digest(trajectory: Any) -> str:
    return _digest(orjson.dumps([getattr(trajectory, name) for name in OWN_STRINGS]))


def metadata_digest(metadata: Any) -> str:
    try:
        return _digest(orjson.dumps(metadata, option=_DUMP))
    except TypeError:
        return ""


def with_redaction_index(queryset: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """The rows without `redactions`, with their index, and the map only where it is needed."""
    return queryset.defer("redactions").annotate(
        **{
            FULL: Case(
                When(INDEX_CURRENT, then=Value(None, output_field=JSONField())),
                default=F("redactions"),
                output_field=JSONField(),
            )
        }
    )


def _index(trajectory: Trajectory) -> dict[str, Any] | None:
    """The trajectory's index if it is loaded, current and made from the trajectory's own
    strings as loaded (and its metadata, where loaded: lists do not load or show it), else
    None: read the full map."""
    loaded = trajectory.__dict__
    if loaded.get("indexed_at") is None or loaded.get(FULL) is not None:
        return None
    index = loaded.get("redaction_index")
    if not isinstance(index, dict) or not isinstance(index.get("own"), dict):
        return None
    if index.get("count") == 0 and not index["own"]:
        return index  # no redactions at all (the trigger clears indexed_at if that changes)
    if any(name not in loaded for name in OWN_STRINGS):
        return None
    if index.get("strings") != strings_digest(trajectory):
        return None
    if "metadata" in loaded and index.get("metadata") != metadata_digest(loaded["metadata"]):
        return None
    return index


def full_redactions(trajectory: Trajectory) -> dict[str, str]:
    """The whole map: from the annotation when the query had to read it, else from the row."""
    full = trajectory.__dict__.get(FULL)
    if isinstance(full, dict):
        return full
    if "redactions" not in trajectory.__dict__:
        index = _index(trajectory)
        if index is not None and index.get("count") == 0:
            return {}  # none (the trigger clears indexed_at when that changes): no query
    redactions = trajectory.redactions
    return redactions if isinstance(redactions, dict) else {}


def own_redactions(trajectory: Trajectory) -> dict[str, str]:
    """What redacts the trajectory's own strings (title, feedback, agent, model, version, and
    metadata where loaded): its index's entries, or the full map."""
    index = _index(trajectory)
    return index["own"] if index is not None else full_redactions(trajectory)


def _event_in_step(event: Any) -> bool:
    loaded = event.__dict__
    if any(name not in loaded for name in ("index_digest", "text", "original_id", "cause", "data")):
        return False  # not loaded: never guess
    return loaded["index_digest"] is not None and loaded["index_digest"] == event_digest(event)


def shown_redactions(trajectory: Trajectory, events: Iterable[Any]) -> dict[str, str]:
    """What redacts the trajectory's own strings and those of `events` (loaded whole): the
    entries of each, or the full map. Only these strings: a caller that shows any other
    event's must pass it."""
    index = _index(trajectory)
    if index is None:
        return full_redactions(trajectory)
    own: dict[str, str] = index["own"]
    if index.get("count") == 0:
        return own
    merged: dict[str, str] | None = None
    for event in events:
        if not _event_in_step(event):
            return full_redactions(trajectory)
        entries = event.redactions
        if isinstance(entries, dict) and entries:
            if merged is None:
                merged = dict(own)
            merged.update(entries)
    # The index's own dict itself when no event adds to it: header, result and title then
    # share one Marks (marks_for caches by the map).
    return own if merged is None else merged


def redaction_count(trajectory: Trajectory) -> int:
    index = _index(trajectory)
    if index is not None and isinstance(index.get("count"), int):
        return index["count"]
    return len(full_redactions(trajectory))


def index_usable(trajectory: Trajectory) -> bool:
    """Whether find may read the events' stored redacted text (each checked by its digest)."""
    return _index(trajectory) is not None
