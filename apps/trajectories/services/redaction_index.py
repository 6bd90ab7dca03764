"""The redaction index: what each surface needs of a trajectory's redactions, stored so that a
request reads only what it shows.

`Trajectory.redactions` is the one source of truth (the scan writes it). A trajectory with very
many findings (300,000 emails in 20,000 outputs) has a map of 12 MB: decoding it and indexing it
cost a list row, a page or a find about a second whatever they show. So, after every change of
the map or of the content, this service derives from it:

- `Event.redactions`: the originals the map replaces in this event's strings, with their
  placeholders (the same numbering: they are the map's own entries);
- `Event.redacted_text`: the event's text with the map applied (what find matches);
- `Trajectory.redaction_index`: {"own": the same for the title, feedback, agent, model, version
  and metadata; "count": the number of redactions; digests of what "own" was gathered from; "map": the whole
  map's digest, which retrieval compares with the one its examples were cut with}.

Why the restriction gives exactly the text the full map gives: the map is applied
leftmost-longest (redaction.Matcher). At each position the full map replaces the longest
original that starts there, which is in the restriction since the restriction is made of what
the full map replaced in that very string; an original of the restriction that starts there is
an original of the map, so no longer one exists. Positions where the full map replaces nothing
have no original of the map, hence none of the restriction. The two therefore replace the same
spans with the same placeholders, in every string in which the restriction was gathered. The
strings gathered are every string a surface redacts: the text and each string and key of the
event's JSON, as stored, as a terminal shows it (colour codes removed), with every image
reference dropped (what visitors get for a dropped image), and the JSON as "Show JSON" prints
it. An original whose placeholder is itself written in the event is added too, so that the
page marks that placeholder as before.
What this does not cover: a string a card derives by joining pieces (a diff of two edit
arguments, with its +/- prefixes) is redacted by the pieces' entries, so an original that
occurs only across such a join, and in none of the pieces, would be replaced by the full map
and not here. Visitors' pieces are redacted structurally before any card is built, as before.

The index is read only while it is current: `Trajectory.indexed_at` is set, and a database
trigger (migration 0008) clears it in any statement that changes `redactions`, whoever writes
it; and each piece still matches what it was made from: `redaction_index` keeps digests of the
trajectory's own strings, each event `index_digest` of its text and of its other fields, which
readers compare with the row they read (new events have none). Anything else (unscanned,
half-built, changed) reads the full map, never the raw text (selectors/redactions.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import orjson
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from apps.trajectories.dropped import IMAGE_REMOVED, IMAGE_WITHHELD
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import Matcher, Redact, redactor
from apps.trajectories.rendering.text import clean_terminal
from apps.trajectories.selectors.redactions import (
    OWN_STRINGS,
    event_digest,
    map_digest,
    metadata_digest,
    strings_digest,
)
from apps.trajectories.services.find_index import (
    FIND_INDEX_VERSION,
    find_index_build,
    find_index_ensure,
    find_index_restamp,
)
from apps.trajectories.shown import SHOWN_FIELDS, shown_values

logger = logging.getLogger(__name__)
User = get_user_model()

BATCH = 500
_IMAGE_REF = re.compile(r"trajhub-image:[0-9a-f]{64}")
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys included (what redact_data passes to the redactor)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _strings(item)


def _views(text: str) -> Iterator[str]:
    """A string as the surfaces redact it: stored, as a terminal shows it, images dropped."""
    yield text
    cleaned = clean_terminal(text)
    if cleaned != text:
        yield cleaned
    if "trajhub-image:" in text:
        yield _IMAGE_REF.sub(IMAGE_REMOVED, text)
        yield _IMAGE_REF.sub(IMAGE_WITHHELD, text)


class _Gatherer:
    """The full map's matcher, reused for every string of one trajectory."""

    def __init__(self, redactions: dict[str, str]):
        self.redactions = redactions
        # Many strings will be read: the index at once, not a look-up per position and length.
        self.matcher = Matcher(redactions).prepared()
        self._by_placeholder: dict[str, str] | None = None

    def own(self, strings: Iterator[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        if not self.matcher:
            return found
        redactions = self.redactions
        for string in strings:
            if not string:
                continue
            for view in _views(string):
                for start, end in self.matcher.spans(view):
                    original = view[start:end]
                    found[original] = redactions[original]
                if "<" in view:
                    self._placeholders(view, found)
        return found

    def _placeholders(self, text: str, found: dict[str, str]) -> None:
        for match in _PLACEHOLDER.finditer(text):
            if self._by_placeholder is None:
                self._by_placeholder = {}
                for key, placeholder in self.redactions.items():
                    self._by_placeholder.setdefault(placeholder, key)
            typed = self._by_placeholder.get(match.group(0))
            if typed is not None:
                found[typed] = self.redactions[typed]


def _write_events(rows: list[tuple[str | None, str | None, str, int]]) -> None:
    """One parameterised UPDATE per event, sent as one batch (psycopg pipelines executemany):
    Django's bulk_update builds a CASE per field and row, which took most of the index's time
    for 20,000 events."""
    quote = connection.ops.quote_name
    json = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    sql = (
        f"UPDATE {quote(Event._meta.db_table)} SET {quote('redactions')} = {json}, "
        f"{quote('redacted_text')} = %s, {quote('index_digest')} = %s WHERE {quote('id')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _own_in_step(trajectory: Trajectory) -> bool:
    index = trajectory.redaction_index
    return (
        isinstance(index, dict)
        and index.get("strings") == strings_digest(trajectory)
        and index.get("metadata") == metadata_digest(trajectory.metadata)
    )


def _json_views(data: Any) -> Iterator[str]:
    yield from _strings(data)
    if data:
        try:
            yield orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            pass


def _own_strings(trajectory: Trajectory) -> Iterator[str]:
    for name in OWN_STRINGS:
        yield getattr(trajectory, name)
    yield from _json_views(trajectory.metadata)


@transaction.atomic
def trajectory_redaction_index_refresh(*, trajectory_id: int) -> bool:
    """Rebuild the trajectory's redaction index from its current map and events, under the
    trajectory's row lock (writers of the map and the events take it too). Returns False when
    the trajectory is gone; does nothing when the index is current."""
    trajectory = (
        Trajectory.objects.select_for_update()
        .filter(pk=trajectory_id)
        .only(
            "redactions",
            "indexed_at",
            "redaction_index",
            "metadata",
            "contact_email",
            "owner_id",
            "chain_fingerprint",
            *OWN_STRINGS,
            *SHOWN_FIELDS,
        )
        .first()
    )
    if trajectory is None:
        return False
    emails = _contributor_emails(trajectory)
    stored = trajectory.redactions if isinstance(trajectory.redactions, dict) else {}
    redactions = {
        key: value
        for key, value in stored.items()
        if key and isinstance(key, str) and isinstance(value, str)
    }
    events_current = trajectory.indexed_at is not None and not (
        redactions
        and Event.objects.filter(trajectory_id=trajectory_id, index_digest__isnull=True).exists()
    )
    if events_current and _own_in_step(trajectory):
        # Current: the map has not changed since (the trigger would have cleared indexed_at),
        # nor the trajectory's own strings, and every event is indexed (new events are not).
        # The shown columns are made from the index's own entries (what the full map replaces
        # in these strings): rewritten only if they differ (a contact address changed).
        _write_shown(trajectory, (trajectory.redaction_index or {}).get("own") or {}, emails)
        find_index_ensure(
            trajectory_id=trajectory_id,
            indexed_at=trajectory.indexed_at,
            chain_fingerprint=trajectory.chain_fingerprint,
        )
        return True
    gather = _Gatherer(redactions)
    redact = redactor(redactions)
    if events_current:
        pass  # only the title, feedback or metadata changed (an owner's edit): "own" below
    elif not gather.matcher:
        # Nothing to replace, whatever the events hold: entries of an older map go.
        Event.objects.filter(trajectory_id=trajectory_id, index_digest__isnull=False).update(
            redactions=None, redacted_text=None, index_digest=None
        )
    else:
        _index_events(trajectory_id, gather, redact)
    own = gather.own(_own_strings(trajectory))
    shown = shown_values(_raw_shown(trajectory), own, emails)
    _store_index(trajectory, own=own, shown=shown, count=len(stored), events_current=events_current)
    return True


def _store_index(
    trajectory: Trajectory,
    *,
    own: dict[str, str],
    shown: dict[str, str],
    count: int,
    events_current: bool,
) -> None:
    """The trajectory's index and shown columns, then find's index from the redacted text just
    written (only restamped when neither the events nor the map changed: the owner's edit of a
    title)."""
    trajectory_id = trajectory.pk
    now = timezone.now()
    Trajectory.objects.filter(pk=trajectory_id).update(
        **shown,
        redaction_index={
            "own": own,
            "count": count,
            "strings": strings_digest(trajectory),
            "metadata": metadata_digest(trajectory.metadata),
            "map": map_digest(trajectory.redactions),
        },
        indexed_at=now,
    )
    if not (
        events_current
        and find_index_restamp(trajectory_id=trajectory_id, old=trajectory.indexed_at, new=now)
    ):
        find_index_build(
            trajectory_id=trajectory_id,
            indexed_at=now,
            chain_fingerprint=trajectory.chain_fingerprint,
        )


def _index_events(trajectory_id: int, gather: _Gatherer, redact: Redact) -> None:
    """Every event's entries (NULL: none), redacted text and digest, written where they differ
    from the row's: a map that gained or lost a few entries (a rescan after a rules upgrade, a
    moderator's redaction) rewrites the events they are in, not all."""
    rows = (
        Event.objects.filter(trajectory_id=trajectory_id)
        .order_by("position")
        .only(
            "pk",
            "original_id",
            "cause",
            "text",
            "data",
            "redactions",
            "redacted_text",
            "index_digest",
        )
        .iterator(chunk_size=BATCH)
    )
    changed: list[tuple[str | None, str | None, str, int]] = []
    for event in rows:
        found = gather.own(
            iter((event.text, event.original_id, event.cause, *_json_views(event.data)))
        )
        redacted = redact(event.text) if found else event.text
        text = redacted if redacted != event.text else None
        digest = event_digest(event)
        if (
            event.index_digest == digest
            and (event.redactions or None) == (found or None)
            and event.redacted_text == text
        ):
            continue
        changed.append((orjson.dumps(found).decode() if found else None, text, digest, event.pk))
        if len(changed) >= BATCH:
            _write_events(changed)
            changed = []
    if changed:
        _write_events(changed)


def _contributor_emails(trajectory: Trajectory) -> tuple[str, str]:
    owner_email = ""
    if trajectory.owner_id is not None:
        owner_email = (
            User.objects.filter(pk=trajectory.owner_id).values_list("email", flat=True).first()
            or ""
        )
    return trajectory.contact_email or "", owner_email


def _raw_shown(trajectory: Trajectory) -> dict[str, str]:
    return {field: getattr(trajectory, field) for field in SHOWN_FIELDS.values()}


def _write_shown(trajectory: Trajectory, own: dict[str, str], emails: tuple[str, str]) -> None:
    shown = shown_values(_raw_shown(trajectory), own, emails)
    if any(getattr(trajectory, column) != value for column, value in shown.items()):
        Trajectory.objects.filter(pk=trajectory.pk).update(**shown)


def redaction_index_sweep(*, limit: int) -> int:
    """Index up to `limit` trajectories whose index is not current: public ones first (their
    pages and lists are read by everyone), newest first; then those indexed before find had an
    index of its own, or one made by an older builder (the refresh makes it; until then find
    reads every event). Safe to run
    twice: each refresh takes the row lock and skips a current index. Fills the index of
    trajectories stored before it existed, and after edits whose refresh did not run (a lost
    task)."""
    ids: list[int] = []
    for stale in (
        Trajectory.objects.filter(indexed_at__isnull=True).public(),
        Trajectory.objects.filter(indexed_at__isnull=True),
        Trajectory.objects.filter(find_index__isnull=True).public(),
        Trajectory.objects.filter(find_index__isnull=True),
        # Made by an older builder (without word positions): find reads every event for a
        # query of several words until it is made again.
        Trajectory.objects.filter(find_index__version__lt=FIND_INDEX_VERSION).public(),
        Trajectory.objects.filter(find_index__version__lt=FIND_INDEX_VERSION),
    ):
        if len(ids) >= limit:
            break
        ids += list(
            stale.exclude(pk__in=ids)
            .order_by("-created_at")
            .values_list("pk", flat=True)[: limit - len(ids)]
        )
    done = 0
    for pk in ids:
        if trajectory_redaction_index_refresh(trajectory_id=pk):
            done += 1
    return done
