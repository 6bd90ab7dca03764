"""The find index of a trajectory (models.FindIndex): made from its events' redacted text, so
that find as you type answers from the words a query matches, not by reading every event.

Made by the redaction index's refresh (services/redaction_index.py), after the scan that
follows every ingest and re-import and after every change of the map (a moderator's
redaction, a rescan), from `Event.redacted_text` (or the text where the map replaces nothing in
it): a redacted value is never in it, only its placeholder. It is stamped with the
trajectory's `indexed_at`, which the map's trigger and any change of the events clear, so a
reader never uses an index made from another map or other events (selectors/find.py).

Words are the runs of `\\w` characters of the casefolded text: a query made of word characters
matches inside words, and its number of hits in a step is the sum over the words it matches of
(hits in the word) x (times the word is in the step), exactly what counting it in the text
gives, since a match cannot cross a character that is not a word character.

A query of several words (or one with a non-word character next to its word) is answered from
where each word is (version 2): every word of the text has an ordinal, and each occurrence
keeps the separators before and after it (the runs of non-word characters, as ids). The query
"cargo test" is then a word ending in "cargo" at ordinal k whose separator after is exactly
" " (not the end of its step), followed by a word starting with "test" at k + 1: the phrase's
steps and hits come from the occurrences of the words it matches, not from the text.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from datetime import datetime
from typing import Any

import numpy as np

from apps.trajectories.models import Event, FindIndex

WORD = re.compile(r"\w+")
# Split with the words kept: [separator, word, separator, ..., word, separator].
WORD_SPLIT = re.compile(r"(\w+)")
BATCH = 500
DTYPE = np.dtype("<u4")
FIND_INDEX_VERSION = 2
OCCURRENCE = np.dtype([("ordinal", "<u4"), ("before", "<u2"), ("after", "<u2")])
# A separator id's top bit: it is the start or the end of its step's text (no word beyond).
EDGE = 0x8000
# A separator not kept (longer than SEPARATOR_MAX characters, or past the first UNKNOWN ones):
# find reads the steps whose match depends on one.
UNKNOWN = 0x7FFF
SEPARATOR_MAX = 64


def _text_of(text: str | None, redacted: str | None) -> str:
    return (text or "") if redacted is None else redacted


def find_index_build(*, trajectory_id: int, indexed_at: datetime, chain_fingerprint: str) -> None:
    """Make and store the trajectory's find index from its events' redacted text. The caller
    (the redaction index's refresh) holds the trajectory's row lock and has just made the
    redacted text current."""
    term_ids: dict[str, int] = {}
    ids, positions, counts = array("I"), array("I"), array("I")
    by_type: dict[str, array] = {}
    type_numbers: dict[str, int] = {}
    replaced = array("I")
    places = _Places()
    total = 0
    rows = (
        Event.objects.filter(trajectory_id=trajectory_id)
        .order_by("position")
        .values_list("position", "type", "text", "redacted_text")
    )
    for position, type_, text, redacted in rows.iterator(chunk_size=BATCH):
        total += 1
        if redacted is not None and redacted != text:
            replaced.append(position)
        by_type.setdefault(type_ or "", array("I")).append(position)
        parts = WORD_SPLIT.split(_text_of(text, redacted).casefold())
        terms = [term_ids.setdefault(word, len(term_ids)) for word in parts[1::2]]
        # The types are numbered in the order they first come, as `types` lists them.
        places.add(terms, parts[0::2], type_numbers.setdefault(type_ or "", len(type_numbers)))
        for term, n in Counter(terms).items():
            ids.append(term)
            positions.append(position)
            counts.append(n)
    types = list(by_type)
    for offset, name in enumerate(types):
        steps = by_type[name]
        ids.extend(array("I", [len(term_ids) + offset]) * len(steps))
        positions.extend(steps)
        counts.extend(array("I", [1]) * len(steps))
    terms_total = len(term_ids) + len(types)
    id_array = np.frombuffer(ids, dtype=np.uint32) if ids else np.zeros(0, np.uint32)
    # Grouped by term, each term's steps still in step order (the sort is stable).
    order = np.argsort(id_array, kind="stable")
    pairs = np.empty((len(order), 2), dtype=DTYPE)
    if len(order):
        pairs[:, 0] = np.frombuffer(positions, dtype=np.uint32)[order]
        pairs[:, 1] = np.frombuffer(counts, dtype=np.uint32)[order]
    offsets = np.zeros(terms_total + 1, dtype=DTYPE)
    np.cumsum(np.bincount(id_array, minlength=terms_total), out=offsets[1:])
    FindIndex.objects.update_or_create(
        trajectory_id=trajectory_id,
        defaults={
            "indexed_at": indexed_at,
            "chain_fingerprint": chain_fingerprint,
            "total": total,
            "terms": "\n" + "".join(word + "\n" for word in term_ids),
            "types": types,
            "offsets": offsets.tobytes(),
            "postings": pairs.tobytes(),
            "replaced": np.asarray(replaced, dtype=DTYPE).tobytes(),
            "version": FIND_INDEX_VERSION,
            **places.fields(len(term_ids)),
        },
    )


class _Places:
    """Where each word is (version 2), gathered step by step with `add`."""

    def __init__(self) -> None:
        self.separator_ids: dict[str, int] = {}
        self.step_words = array("I")
        self.step_types = array("H")
        self.terms, self.ordinals = array("I"), array("I")
        self.before, self.after = array("H"), array("H")
        self.ordinal = 0

    def separator(self, text: str) -> int:
        if len(text) > SEPARATOR_MAX:
            return UNKNOWN
        found = self.separator_ids.get(text)
        if found is None:
            if len(self.separator_ids) >= UNKNOWN:
                return UNKNOWN
            found = self.separator_ids[text] = len(self.separator_ids)
        return found

    def add(self, terms: list[int], separators: list[str], type_number: int) -> None:
        """The next step's words (as term ids), the separators around them (one more) and its
        type's number."""
        self.step_words.append(self.ordinal)
        self.step_types.append(type_number)
        if not terms:
            return
        ids = [self.separator(text) for text in separators]
        ids[0] |= EDGE
        ids[-1] |= EDGE
        self.terms.extend(terms)
        self.ordinals.extend(range(self.ordinal, self.ordinal + len(terms)))
        self.before.extend(ids[:-1])
        self.after.extend(ids[1:])
        self.ordinal += len(terms)

    def fields(self, words: int) -> dict[str, Any]:
        """The index's columns: occurrences grouped by word, each word's in ordinal order
        (the sort is stable)."""
        terms = np.frombuffer(self.terms, dtype=np.uint32) if self.terms else np.zeros(0, np.uint32)
        order = np.argsort(terms, kind="stable")
        records = np.empty(len(order), dtype=OCCURRENCE)
        if len(order):
            records["ordinal"] = np.frombuffer(self.ordinals, dtype=np.uint32)[order]
            records["before"] = np.frombuffer(self.before, dtype=np.uint16)[order]
            records["after"] = np.frombuffer(self.after, dtype=np.uint16)[order]
        offsets = np.zeros(words + 1, dtype=DTYPE)
        np.cumsum(np.bincount(terms, minlength=words), out=offsets[1:])
        return {
            "step_words": np.asarray(self.step_words, dtype=DTYPE).tobytes(),
            "step_types": np.asarray(self.step_types, dtype="<u2").tobytes(),
            "separators": list(self.separator_ids),
            "occurrence_offsets": offsets.tobytes(),
            "occurrences": records.tobytes(),
        }


def find_index_ensure(
    *, trajectory_id: int, indexed_at: datetime | None, chain_fingerprint: str
) -> None:
    """Build the index unless the one stored was made for this `indexed_at` and these events,
    by this version of the builder."""
    if (
        indexed_at is not None
        and not FindIndex.objects.filter(
            trajectory_id=trajectory_id,
            indexed_at=indexed_at,
            chain_fingerprint=chain_fingerprint,
            version=FIND_INDEX_VERSION,
        ).exists()
    ):
        find_index_build(
            trajectory_id=trajectory_id,
            indexed_at=indexed_at,
            chain_fingerprint=chain_fingerprint,
        )


def find_index_restamp(*, trajectory_id: int, old: datetime | None, new: datetime) -> bool:
    """The events and the map are unchanged, only the trajectory's own strings were indexed
    again: the find index made with `old` holds for `new`. False if there was none."""
    if old is None:
        return False
    return (
        FindIndex.objects.filter(
            trajectory_id=trajectory_id, indexed_at=old, version=FIND_INDEX_VERSION
        ).update(indexed_at=new)
        == 1
    )
