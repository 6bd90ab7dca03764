"""What search finds a trajectory by: its search text and (PostgreSQL) search vector, always
with the trajectory's redactions applied.

Built in one place only, `trajectory_search_refresh`, from the redacted view: by the scan (the
first time, and whenever it changes the map), and after every later redaction, image drop or
edit. Ingest never writes either column (a re-share empties them), so raw text never enters
the search index, not even between a share and its scan: a trajectory whose search text is not
built yet is found by no search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db import connection, transaction

from apps.trajectories.dropped import image_dropper
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import redactor

# Enough for search to find a trajectory by what happens in it; to_tsvector's cost grows with it.
SEARCH_TEXT_CHARS = 100_000


def _build_search_text(title: str, texts: Iterable[str], redactions: dict[str, str] | None) -> str:
    """Title and event texts, capped, with the trajectory's redactions applied: search must not
    find a trajectory by what its public pages hide (searching an email address would confirm
    that a trajectory contains it). Each text is redacted whole and only then cut: a secret
    straddling the cap, cut first, would no longer match its redaction and survive in part."""
    redact = redactor(redactions)
    parts = [redact(title)]
    size = len(parts[0])
    for text in texts:
        if size >= SEARCH_TEXT_CHARS:
            break
        if text:
            parts.append(redact(text)[: SEARCH_TEXT_CHARS - size])
            size += len(parts[-1]) + 1
    return "\n".join(parts)[:SEARCH_TEXT_CHARS]


# A placeholder (<EMAIL_1>, <GITHUB_PAT_2>): PostgreSQL's parser takes it for an HTML tag and
# drops it, so the vector sees it as plain words (SQLite's icontains finds it as it stands).
PLACEHOLDER_PATTERN = r"<([A-Z][A-Z0-9_-]*_[0-9]+)>"


def _update_search_vector(trajectory: Trajectory) -> None:
    """The PostgreSQL search vector: the (redacted) title weighted above the event text, each
    placeholder a phrase that websearch finds by the placeholder itself."""
    if connection.vendor != "postgresql":
        return
    from django.contrib.postgres.search import SearchVector
    from django.db.models import F, Func, TextField, Value

    title = re.sub(PLACEHOLDER_PATTERN, r" \1 ", redactor(trajectory.redactions)(trajectory.title))
    text = Func(
        F("search_text"),
        Value(PLACEHOLDER_PATTERN),
        Value(r" \1 "),
        Value("g"),
        function="regexp_replace",
        output_field=TextField(),
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(
        search_vector=SearchVector(Value(title), weight="A", config="english")
        + SearchVector(text, weight="B", config="english")
    )


@transaction.atomic
def trajectory_search_refresh(*, trajectory: Trajectory) -> Trajectory:
    """Build search_text (and the PostgreSQL search vector) from the title and event texts with
    the trajectory's current redactions and dropped images applied: the one place that writes
    them. The scan calls it (the first time, and when it changed the map); so does whatever
    later changes `redactions` or `dropped_images`."""
    texts = (
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .values_list("text", flat=True)
        .iterator(chunk_size=500)
    )
    # Snippets of search results show this text: references to dropped and withheld images go
    # too (withheld whatever the setting: the search text outlives a change of it).
    drop = image_dropper(
        trajectory.dropped_images,
        [*(trajectory.unchecked_images or ()), *(trajectory.flagged_images or ())],
    )
    trajectory.search_text = _build_search_text(
        trajectory.title, (drop(text) for text in texts), trajectory.redactions
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(search_text=trajectory.search_text)
    _update_search_vector(trajectory)
    return trajectory


def search_built(trajectory: Trajectory) -> bool:
    """Whether the trajectory's search text was built since its content last changed. Ingest
    leaves it empty; once built it holds at least the title (a trajectory with no title and no
    text has nothing to find, so building it again costs nothing)."""
    return bool(trajectory.search_text)
