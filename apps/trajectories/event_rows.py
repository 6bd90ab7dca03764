"""An event's own columns as plain values: what ingest writes and what selectors hand callers.
Pure Python, beside models.py (which keeps the tables)."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class EventRow:
    """An event's own columns as plain values, in table order (all but `trajectory`): the base of
    what ingest writes (services/events.py) and of what callers see (selectors.EventView)."""

    position: int
    original_id: str
    timestamp: Any
    source: str
    kind: str
    type: str
    cause: str
    text: str
    data: Any


# Their names: the columns ingest COPYs and the admin's event page shows.
EVENT_FIELDS = tuple(field.name for field in dataclasses.fields(EventRow))
