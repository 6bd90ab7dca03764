"""What search finds a trajectory by: its search text and (PostgreSQL) search vector, always
with the trajectory's redactions applied."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction

from apps.trajectories.dropped import image_dropper
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import redactor

# Enough for search to find a trajectory by what happens in it; to_tsvector's cost grows with it.
SEARCH_TEXT_CHARS = 100_000


def build_search_text(title: str, texts: Iterable[str], redactions: dict[str, str] | None) -> str:
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


def update_search_vector(trajectory: Trajectory) -> None:
    """The PostgreSQL search vector: the (redacted) title weighted above the event text."""
    if connection.vendor != "postgresql":
        return
    from django.contrib.postgres.search import SearchVector
    from django.db.models import Value

    title = redactor(trajectory.redactions)(trajectory.title)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        search_vector=SearchVector(Value(title), weight="A", config="english")
        + SearchVector("search_text", weight="B", config="english")
    )


@transaction.atomic
def trajectory_search_refresh(*, trajectory: Trajectory) -> Trajectory:
    """Rebuild search_text (and the PostgreSQL search vector) from the title and event texts
    with the trajectory's current redactions applied. Call it after changing `redactions` or
    `dropped_images`."""
    texts = (
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .values_list("text", flat=True)
        .iterator(chunk_size=500)
    )
    # Snippets of search results show this text: references to dropped and withheld images go
    # too (withheld whatever the setting: the search text outlives a change of it).
    drop = image_dropper(trajectory.dropped_images, trajectory.unchecked_images)
    trajectory.search_text = build_search_text(
        trajectory.title, (drop(text) for text in texts), trajectory.redactions
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(search_text=trajectory.search_text)
    update_search_vector(trajectory)
    return trajectory
