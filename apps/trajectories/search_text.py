"""The stored search text's format: sections joined by STEP_BREAK, the title first, then the
task (the trajectory's first user message), then each other step's text. Pure Python.

services/search.py writes it (from the redacted view only); the ranking and the snippets of
selectors/search.py read it through `search_sections`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# ASCII's record separator: between sections, never inside one (taken out of the texts).
STEP_BREAK = "\x1e"

# A placeholder (<EMAIL_1>, <GITHUB_PAT_2>): PostgreSQL's parser takes it for an HTML tag and
# drops it, so the vector sees it as plain words (SQLite's icontains finds it as it stands).
PLACEHOLDER_PATTERN = r"<([A-Z][A-Z0-9_-]*_[0-9]+)>"
PLACEHOLDER = re.compile(PLACEHOLDER_PATTERN)


class SearchSections(NamedTuple):
    title: str
    task: str
    steps: list[str]


def search_sections(search_text: str) -> SearchSections:
    """The sections of a stored search text. A text without breaks (as written before there
    were sections: the title and event texts joined by line breaks) reads as its first line and
    one step."""
    if STEP_BREAK not in search_text:
        title, _, rest = search_text.partition("\n")
        return SearchSections(title, "", [rest] if rest else [])
    title, task, *steps = search_text.split(STEP_BREAK)
    return SearchSections(title, task, steps)


def cut(text: str, size: int) -> str:
    """`text` cut to at most `size` characters, never inside a placeholder (half a placeholder
    reads as text that was never there)."""
    if len(text) <= size:
        return text
    for match in PLACEHOLDER.finditer(text, max(0, size - 64), min(len(text), size + 64)):
        if match.start() < size < match.end():
            return text[: match.start()]
    return text[:size]


# The title and task of the search text as a vector, in SQL: what the partial GIN index
# traj_public_search_head (migration 0019) holds, so that a search finds the trajectories whose
# title or task match without reading every match's vector (selectors/search.py ranks those
# first). The index is on this expression: a query must use it as written.
HEAD_VECTOR_SQL = (
    "to_tsvector('english'::regconfig, regexp_replace("
    "split_part(search_text, chr(30), 1) || ' ' || split_part(search_text, chr(30), 2), "
    f"'{PLACEHOLDER_PATTERN}', ' \\1 ', 'g'))"
)
