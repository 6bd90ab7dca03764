"""Which step feedback may go into a dataset release, and its text as a release shows it.

The rules, one function each, read by apps.datasets (which sits above this app and builds the
release configs `step_feedback`, `preferences` and `stepwise`); this app never imports it:

- nothing outdated (its step changed since it was given), nothing on a trajectory whose owner
  switched feedback off;
- corrections and comments only when shown (passed the scan, or a moderator showed them) and
  only from authors who agreed to the site's licence for their feedback text (FeedbackLicence);
- ratings and first-wrong marks carry no text: they count whoever gave them.

Which trajectories are in a release is the release's business (its entries, from `public()`):
every function here takes them as trajectory ids (a list, or a queryset of them).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Case, CharField, F, QuerySet, Value, When
from django.db.models.functions import Concat

from apps.feedback.models import (
    HOLDER_KEY,
    FeedbackLicence,
    FeedbackSwitch,
    FirstWrongMark,
    NoteState,
    StepNote,
    StepRating,
)
from apps.feedback.screening import Shown, without_findings
from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.redactions import map_digest


def _current(model: Any, trajectory_ids: Any) -> QuerySet[Any]:
    return model.objects.filter(trajectory_id__in=trajectory_ids, outdated=False).exclude(
        trajectory_id__in=FeedbackSwitch.objects.values("trajectory_id")
    )


def releasable_ratings(trajectory_ids: Any) -> QuerySet[StepRating]:
    return _current(StepRating, trajectory_ids)


def releasable_marks(trajectory_ids: Any) -> QuerySet[FirstWrongMark]:
    return _current(FirstWrongMark, trajectory_ids)


def releasable_notes(trajectory_ids: Any) -> QuerySet[StepNote]:
    """Shown corrections and comments whose author agreed to release their text: an account's
    answer is under "user:<id>", an anonymous sharer's under "holder:<share id>" (per share)."""
    agreed = FeedbackLicence.objects.exclude(license="").values("author_key")
    return (
        _current(StepNote, trajectory_ids)
        .filter(state=NoteState.SHOWN)
        .annotate(
            licence_key=Case(
                When(
                    author_key=HOLDER_KEY,
                    then=Concat(Value(f"{HOLDER_KEY}:"), F("trajectory__share_id")),
                ),
                default=F("author_key"),
                output_field=CharField(),
            )
        )
        .filter(licence_key__in=agreed)
    )


def licences_of(keys: set[str]) -> dict[str, str]:
    """{licence key: the licence agreed} for these keys (see releasable_notes)."""
    return dict(
        FeedbackLicence.objects.filter(author_key__in=keys)
        .exclude(license="")
        .values_list("author_key", "license")
    )


def shown_with(note: StepNote, redactions: dict[str, Any] | None) -> Shown:
    """What everyone but the note's author and moderators reads of it, given the trajectory's
    whole map as loaded with the release's rows: the stored redacted text while the map is the
    one it was made with, else made again with this one (as screening.shown does, without
    reading the trajectory again)."""
    digest = map_digest(redactions)
    if note.shown_map and note.shown_map == digest:
        return Shown(text=note.shown_text, original=note.shown_original, map=digest)
    entries = {k: v for k, v in (redactions or {}).items() if isinstance(k, str) and k}
    redact = redactor(entries)
    return Shown(
        text=redact(without_findings(note.text, note.findings)),
        original=redact(note.original),
        map=digest,
    )
