"""What search finds a trajectory by: its search text and (PostgreSQL) search vector, always
with the trajectory's redactions applied.

Built in one place only, `trajectory_search_refresh`, from the redacted view: by the scan (the
first time, and whenever it changes the map), and after every later redaction, image drop or
edit. Ingest never writes either column (a re-share empties them), so raw text never enters
the search index, not even between a share and its scan: a trajectory whose search text is not
built yet is found by no search.

The search text is sections (search_text.py): the title, the task (the first user message, as
/compare/ finds runs of the same task), then each other step's text. Ranking weighs them in that
order (the vector's weights A, B and D; SQLite's rule), and a result's snippet is a passage of
one step (both in selectors/search.py): they read these sections, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import F, Func, TextField, Value
from django.db.models.expressions import Combinable
from django.db.models.functions import Length, Substr

from apps.trajectories.dropped import image_dropper
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.redaction import redactor
from apps.trajectories.search_text import PLACEHOLDER_PATTERN, STEP_BREAK, cut

# Enough for search to find a trajectory by what happens in it; to_tsvector's cost grows with it.
SEARCH_TEXT_CHARS = 100_000
# The task is the first user message among the first steps (selectors/compare.py's rule).
TASK_POSITIONS = 3


def build_search_text(
    title: str, task: str, steps: Iterable[str], redactions: dict[str, str] | None
) -> str:
    """The sections, capped, with the trajectory's redactions applied: search must not find a
    trajectory by what its public pages hide (searching an email address would confirm that a
    trajectory contains it). Each text is redacted whole and only then cut: a secret straddling
    the cap, cut first, would no longer match its redaction and survive in part."""
    redact = redactor(redactions)
    parts = [cut(_clean(redact(title)), SEARCH_TEXT_CHARS // 2)]
    parts.append(cut(_clean(redact(task)), SEARCH_TEXT_CHARS - len(parts[0]) - 1))
    size = len(parts[0]) + 1 + len(parts[1])  # the length of the sections joined so far
    for text in steps:
        room = SEARCH_TEXT_CHARS - size - 1
        if room <= 0:
            break
        if text:
            parts.append(cut(_clean(redact(text)), room))
            size += 1 + len(parts[-1])
    return STEP_BREAK.join(parts)


def _clean(text: str) -> str:
    return text.replace(STEP_BREAK, " ")


def _words(expression: Combinable) -> Func:
    # Placeholders as words: see PLACEHOLDER_PATTERN.
    return Func(
        expression,
        Value(PLACEHOLDER_PATTERN),
        Value(r" \1 "),
        Value("g"),
        function="regexp_replace",
        output_field=TextField(),
    )


def search_vector_expression() -> Combinable:
    """The PostgreSQL search vector, made from the stored search text in SQL: the title weighted
    A, the task B, the steps D (ts_rank's defaults give them 1.0, 0.4 and 0.1). The one
    definition, used by the refresh below, the migration that rebuilt older vectors and the
    list benchmark."""
    from django.contrib.postgres.search import SearchVector

    def section(n: int) -> Func:
        return Func(
            F("search_text"),
            Value(STEP_BREAK),
            Value(n),
            function="split_part",
            output_field=TextField(),
        )

    steps = Substr(F("search_text"), Length(section(1)) + Length(section(2)) + 3)
    return (
        SearchVector(_words(section(1)), weight="A", config="english")
        + SearchVector(_words(section(2)), weight="B", config="english")
        + SearchVector(_words(steps), weight="D", config="english")
    )


@transaction.atomic
def trajectory_search_refresh(*, trajectory: Trajectory) -> Trajectory:
    """Build search_text (and the PostgreSQL search vector) from the title, the task and the
    other event texts with the trajectory's current redactions and dropped images applied: the
    one place that writes them. The scan calls it (the first time, and when it changed the map);
    so does whatever later changes `redactions` or `dropped_images`."""
    events = Event.objects.filter(trajectory=trajectory)
    task = (
        events.filter(position__lt=TASK_POSITIONS, source="user", kind="message")
        .order_by("position")
        .values_list("position", "text")
        .first()
    )
    texts = (
        events.exclude(position=task[0] if task else -1)
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
    trajectory.search_text = build_search_text(
        trajectory.title,
        drop(task[1]) if task else "",
        (drop(text) for text in texts),
        trajectory.redactions,
    )
    Trajectory.objects.filter(pk=trajectory.pk).update(search_text=trajectory.search_text)
    if connection.vendor == "postgresql":
        Trajectory.objects.filter(pk=trajectory.pk).update(search_vector=search_vector_expression())
    return trajectory


def search_built(trajectory: Trajectory) -> bool:
    """Whether the trajectory's search text was built since its content last changed. Ingest
    leaves it empty; once built it holds at least the section breaks (a trajectory with no title
    and no text has nothing to find, so building it again costs nothing)."""
    return bool(trajectory.search_text)
