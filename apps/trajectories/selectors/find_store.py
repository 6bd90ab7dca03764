"""The find index as find reads it: its row's head (words, offsets, types, where words are)
parsed once and kept in this process, and the records of the words a query matches.

Find as you type asks once a keystroke. Reading the head again for each (2.4 MB at 50,000
steps, decoded and parsed) cost 25-30 ms of every answer, and a short query ("r", "round 2")
that matches thousands of words read the postings or the occurrences whole (8 and 12 MB):
each keystroke's request took 40-300 ms, and the ones the browser had already given up on kept
the workers busy while the last one waited behind them. So the head and the columns read whole
are kept, a bounded number of bytes in all (TRAJHUB_FIND_CACHE_MB, least recently used out
first), and a request then costs the arithmetic over the records its words have.

What is kept is only ever used for the index row it was read from, and needs no query to know
it: the key is the row's stamps, the trajectory's `indexed_at` and `chain_fingerprint` as the
request reads them. Any change of the events or of the redaction map clears `indexed_at`, and
the refresh that makes the index again stamps both with a new time, so a trajectory whose
stamps are still those of a kept head has the events and the map it was made from (a row
made again by a newer builder keeps its stamps: a kept head of an older version is read
again when a query needs what the new one has).
It is made of the redacted text, the same for every caller; who may see what is decided
before (the view's access) and after (selectors/find.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from apps.trajectories.models import FindIndex, Trajectory
from apps.trajectories.services.find_index import DTYPE, FIND_INDEX_VERSION, OCCURRENCE

PAIR = np.dtype((DTYPE, (2,)))
# Up to this many words a query's records are read as slices of the column (PostgreSQL reads
# only those); past it, the column is read whole once and kept.
MANY_TERMS = 256
HEAD = ("terms", "types", "offsets", "replaced", "total", "version", "step_types")
PLACES = ("step_words", "separators", "occurrence_offsets")


@dataclass
class Head:
    """One find index row as find reads it (the columns of records apart)."""

    trajectory_id: int
    terms: bytes  # "\n" + one casefolded word a line
    newlines: np.ndarray  # where each word's line starts (its "\n") and the last one ends
    offsets: np.ndarray  # term -> its first posting (words, then one term per type)
    types: list[str]
    replaced: np.ndarray  # steps whose redacted text differs from their text
    total: int  # steps
    version: int
    step_types: np.ndarray | None  # each step's type number (version 2)
    step_words: np.ndarray | None  # each step's first word ordinal (version 2)
    separators: list[str]
    occurrence_offsets: np.ndarray | None
    whole: dict[str, np.ndarray] = field(default_factory=dict)  # columns read whole

    @property
    def words(self) -> int:
        return len(self.newlines) - 1 if len(self.newlines) else 0

    @property
    def placed(self) -> bool:
        return self.version == FIND_INDEX_VERSION

    def size(self) -> int:
        arrays = [self.newlines, self.offsets, self.replaced, self.step_types, self.step_words]
        arrays.append(self.occurrence_offsets)
        return (
            len(self.terms)
            + sum(a.nbytes for a in arrays if a is not None)
            + sum(a.nbytes for a in self.whole.values())
        )

    def postings(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (step, count) pairs of `terms`, term after term, and how many each has."""
        records, lengths = self._records("postings", self.offsets, terms, PAIR)
        return records.reshape(-1, 2), lengths

    def occurrences(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The occurrences (ordinal, separators before and after) of `terms`, term after
        term, and how many each has."""
        assert self.occurrence_offsets is not None
        return self._records("occurrences", self.occurrence_offsets, terms, OCCURRENCE)

    def _records(
        self, column: str, offsets: np.ndarray, terms: np.ndarray, dtype: np.dtype
    ) -> tuple[np.ndarray, np.ndarray]:
        terms = np.asarray(terms, dtype=np.int64)
        starts = offsets[terms].astype(np.int64)
        lengths = offsets[terms + 1].astype(np.int64) - starts
        if not len(terms):
            return np.zeros(0, dtype=dtype), lengths
        records = self.whole.get(column)
        if records is None and len(terms) <= MANY_TERMS and connection.vendor == "postgresql":
            return self._sliced(column, terms, starts, lengths, dtype), lengths
        if records is None:
            records = self._read_whole(column, dtype)
        return records[runs(starts, lengths)], lengths

    def _sliced(
        self,
        column: str,
        terms: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        dtype: np.dtype,
    ) -> np.ndarray:
        """Only the terms' slices of the column, read by PostgreSQL (stored uncompressed, out
        of line, so it reads just those pages)."""
        size = dtype.itemsize
        table = connection.ops.quote_name(FindIndex._meta.db_table)
        name = connection.ops.quote_name(column)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT s.n, substring(f.{name} FROM s.a FOR s.l) FROM {table} f, "
                "unnest(%s::int[], %s::int[], %s::int[]) AS s(n, a, l) "
                "WHERE f.trajectory_id = %s",
                [
                    list(range(len(terms))),
                    (starts * size + 1).tolist(),
                    (lengths * size).tolist(),
                    self.trajectory_id,
                ],
            )
            rows = dict(cursor.fetchall())
        return np.frombuffer(b"".join(bytes(rows[n]) for n in range(len(terms))), dtype=dtype)

    def _read_whole(self, column: str, dtype: np.dtype) -> np.ndarray:
        if connection.vendor == "postgresql":
            blob = _binary_column(self.trajectory_id, column)
        else:
            blob = (
                FindIndex.objects.filter(trajectory_id=self.trajectory_id)
                .values_list(column, flat=True)
                .first()
            )
        records = np.frombuffer(bytes(blob or b""), dtype=dtype)
        self.whole[column] = records
        _kept.fit()
        return records


def _binary_column(trajectory_id: int, column: str) -> bytes | None:
    """One column of the index row as PostgreSQL's binary format sends it: Django's cursors
    ask for text, where a bytea comes hex-encoded, twice its size, and decoding it took most of
    the cold read (20 MB at 50,000 steps: 250-400 ms as text, 85-150 ms binary, loaded). Run
    through Django's cursor wrapper, so it is logged and counted like any other query."""
    import psycopg

    connection.ensure_connection()
    raw = psycopg.Cursor(connection.connection)
    raw.format = psycopg.pq.Format.BINARY
    table = connection.ops.quote_name(FindIndex._meta.db_table)
    name = connection.ops.quote_name(column)
    # The stubs type these as taking Django's wrapper; they take a DB-API cursor and wrap it.
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    wrapped = wrap(raw)  # type: ignore[arg-type]
    with wrapped as cursor:
        cursor.execute(f"SELECT {name} FROM {table} WHERE trajectory_id = %s", [trajectory_id])
        row = cursor.fetchone()
    return None if row is None else row[0]


def runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes of runs of records (each from its start, its length long), one after
    another: every word's records gathered in one step, however many words."""
    if not len(lengths):
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]))


class _Kept:
    """The heads (and columns read whole) of the indexes read lately, least recent out first
    past the byte budget."""

    def __init__(self) -> None:
        self.heads: OrderedDict[tuple[Any, ...], Head] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Head | None:
        with self.lock:
            head = self.heads.get(key)
            if head is not None:
                self.heads.move_to_end(key)
            return head

    def put(self, key: tuple[Any, ...], head: Head) -> None:
        with self.lock:
            # One entry a trajectory: an older stamp of it is never asked for again.
            for old in [k for k in self.heads if k[0] == key[0]]:
                del self.heads[old]
            self.heads[key] = head
        self.fit()

    def fit(self) -> None:
        budget = int(settings.TRAJHUB_FIND_CACHE_MB) * 1024 * 1024
        with self.lock:
            used = sum(head.size() for head in self.heads.values())
            while self.heads and used > budget:
                _, head = self.heads.popitem(last=False)
                used -= head.size()

    def clear(self) -> None:
        with self.lock:
            self.heads.clear()


_kept = _Kept()


def clear() -> None:
    """Forget every index kept in this process (tests)."""
    _kept.clear()


def _blob(value: Any, dtype: Any) -> np.ndarray:
    return np.frombuffer(bytes(value or b""), dtype=dtype)


def head_of(trajectory: Trajectory, *, placed: bool) -> Head | None:
    """The trajectory's find index head if one was made for its current redaction index and
    events (and, `placed`, with where its words are): from this process's copy when that was
    read from the same row, else read and kept."""
    if trajectory.indexed_at is None:
        return None
    key = (trajectory.pk, trajectory.indexed_at, trajectory.chain_fingerprint)
    head = _kept.get(key)
    if head is None or (placed and not head.placed):
        # Not kept, or kept as an older builder made it, which the sweep makes again in place
        # (the same stamps): read the row.
        head = _read(trajectory, key)
    if head is None or head.total != trajectory.num_events:
        return None
    if placed and not head.placed:
        return None  # made before words had places: read (until the sweep makes it again)
    return head


def _read(trajectory: Trajectory, key: tuple[Any, ...]) -> Head | None:
    assert trajectory.indexed_at is not None
    values = (
        FindIndex.objects.filter(
            trajectory_id=trajectory.pk,
            indexed_at=trajectory.indexed_at,
            chain_fingerprint=trajectory.chain_fingerprint,
        )
        .values_list(*HEAD, *PLACES)
        .first()
    )
    if values is None:
        return None
    terms_text, types, offsets, replaced, total, version, step_types = values[:7]
    step_words, separators, occurrence_offsets = values[7:]
    terms = terms_text.encode()
    has_places = version == FIND_INDEX_VERSION
    head = Head(
        trajectory_id=trajectory.pk,
        terms=terms,
        newlines=np.flatnonzero(np.frombuffer(terms, dtype=np.uint8) == 10),
        offsets=_blob(offsets, DTYPE),
        types=list(types),
        replaced=_blob(replaced, DTYPE),
        total=total,
        version=version,
        step_types=_blob(step_types, "<u2") if has_places else None,
        step_words=_blob(step_words, DTYPE).astype(np.int64) if has_places else None,
        separators=list(separators or []),
        occurrence_offsets=_blob(occurrence_offsets, DTYPE) if has_places else None,
    )
    if total == trajectory.num_events:
        _kept.put(key, head)
    return head


def warm(trajectory: Trajectory) -> bool:
    """Read the trajectory's index, head and columns, into this process ahead of the reader's
    first keystroke (the viewer asks when its find box gets the focus): a long trajectory's
    first one-letter query otherwise waits for 20 MB to be read. False if it has none current."""
    head = head_of(trajectory, placed=False)
    if head is None:
        return False
    for column, dtype in (("postings", PAIR), ("occurrences", OCCURRENCE)):
        if column not in head.whole and (column == "postings" or head.placed):
            head._read_whole(column, dtype)
    return True
