"""Feedback on the steps of a trajectory.

Every row is anchored to a step by its position (0-based: the page's `#step-n` is position + 1)
and a fingerprint of the step's content when it was given (anchors.fingerprint). After a
re-import or an update, a row whose step no longer has that fingerprint is marked `outdated`:
kept, shown as such, never counted with the current ones and left out of releases.

Who gave it is an account, or the anonymous sharer holding the share's password (`author` is
then null): `author_key` ("user:<id>" or "holder") is what the one-per-author constraints use.
"""

import secrets

from django.conf import settings
from django.db import models

from apps.trajectories.models import Trajectory

HOLDER_KEY = "holder"


def new_note_id() -> str:
    """What names a note in URLs and the API: random, never the database key."""
    return secrets.token_hex(12)


class Rating(models.TextChoices):
    GOOD = "good", "Good"
    BAD = "bad", "Bad"


class NoteKind(models.TextChoices):
    CORRECTION = "correction", "Correction"
    COMMENT = "comment", "Comment"


class CorrectionMode(models.TextChoices):
    MESSAGE = "message", "What the agent should have done instead, in words"
    ACTION = "action", "The step's action, edited"


class NoteState(models.TextChoices):
    """Where a correction or comment stands. Only `shown` ones reach anyone but their author
    and moderators."""

    SHOWN = "shown", "Shown"
    HELD = "held", "Held for a moderator"
    REJECTED = "rejected", "Rejected by a moderator"


class Anchored(models.Model):
    """What every piece of feedback has: its trajectory, step, fingerprint and author."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    fingerprint = models.CharField(max_length=32)
    outdated = models.BooleanField(default=False)
    # Deleting the account deletes its feedback (and so takes its ratings out of the counts).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    author_key = models.CharField(max_length=40)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    @property
    def step(self) -> int:
        return self.position + 1


class StepRating(Anchored):
    """A reader's (or the owner's) good / bad on one step: one per author per step."""

    value = models.CharField(max_length=4, choices=Rating.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "position", "author_key"], name="rating_one_per_author"
            ),
        ]
        indexes = [models.Index(fields=["trajectory", "position"], name="rating_step")]

    def __str__(self) -> str:
        return f"{self.value} on step {self.step} of {self.trajectory_id}"


class FirstWrongMark(Anchored):
    """ "This is where it went wrong": an author's mark on one agent step. One per author per
    trajectory (the *first* wrong step is one step): marking another step moves it."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "author_key"], name="first_wrong_one_per_author"
            ),
        ]
        indexes = [models.Index(fields=["trajectory", "position"], name="first_wrong_step")]

    def __str__(self) -> str:
        return f"first wrong: step {self.step} of {self.trajectory_id}"


class StepNote(Anchored):
    """A correction or a comment on one step, in its author's words (hostile text and private
    data: scanned before anyone else sees it). One of each kind per author per step; editing
    replaces the text and scans it again.

    `text` is what the author wrote; `findings` the scan's spans in it ({kind, start, end}),
    replaced by placeholders wherever anyone but the author and moderators reads it, after the
    trajectory's own redactions. `shown_text` is that redacted text as made with the map whose
    digest is `shown_map`: read while the map is unchanged, made again otherwise.
    """

    public_id = models.CharField(max_length=24, unique=True, default=new_note_id, editable=False)
    kind = models.CharField(max_length=10, choices=NoteKind.choices)
    mode = models.CharField(max_length=10, choices=CorrectionMode.choices, blank=True)
    text = models.TextField()
    # An action correction: the step's action as the form offered it (from the redacted view),
    # so the diff shows what the author changed.
    original = models.TextField(blank=True)
    state = models.CharField(max_length=10, choices=NoteState.choices, default=NoteState.HELD)
    hold_reason = models.CharField(max_length=200, blank=True)
    findings = models.JSONField(default=list, blank=True)
    shown_text = models.TextField(blank=True)
    shown_original = models.TextField(blank=True)
    shown_map = models.CharField(max_length=64, blank=True)
    # The owner's "this correction is wrong": shown as such, left out of the preference data.
    owner_rejected_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["trajectory_id", "position", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "position", "author_key", "kind"],
                name="note_one_per_author_kind",
            ),
            models.CheckConstraint(
                condition=models.Q(kind="correction") | models.Q(mode=""),
                name="note_mode_only_corrections",
            ),
        ]
        indexes = [
            models.Index(fields=["trajectory", "position"], name="note_step"),
            models.Index(fields=["state"], name="note_state"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} on step {self.step} of {self.trajectory_id}"


class ReportReason(models.TextChoices):
    SECRET = "secret", "It shows a secret or personal data"
    ABUSE = "abuse", "Abusive, harmful or illegal"
    SPAM = "spam", "Spam or off topic"
    WRONG = "wrong", "Misleading or wrong"


class NoteReport(models.Model):
    """A reader's report on a correction or comment. Enough distinct reporters hold it for a
    moderator (TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT)."""

    note = models.ForeignKey(StepNote, on_delete=models.CASCADE, related_name="reports")
    reason = models.CharField(max_length=10, choices=ReportReason.choices)
    text = models.TextField(blank=True)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "user:<id>": one report per account and note while open.
    reporter_key = models.CharField(max_length=40)
    address_key = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["note", "reporter_key"],
                condition=models.Q(resolved_at__isnull=True),
                name="note_report_one_open",
            ),
        ]

    def __str__(self) -> str:
        return f"report ({self.reason}) on note {self.note_id}"


class FeedbackSwitch(models.Model):
    """Feedback switched off by the owner for one trajectory: nothing new can be given, and
    what was given stays, hidden from everyone but the owner and moderators, until the row is
    deleted (switched on again)."""

    trajectory = models.OneToOneField(Trajectory, on_delete=models.CASCADE, related_name="+")
    switched_off_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"feedback off for {self.trajectory_id}"


class StepNoteReview(StepNote):
    """Held and reported corrections and comments, in Django admin's review queue. A proxy."""

    class Meta:
        proxy = True
        verbose_name = "feedback review item"
        verbose_name_plural = "feedback review queue"


class FeedbackLicence(models.Model):
    """An author's answer to the licence question, asked with their first correction or
    comment: `license` the site's licence they agreed to release their feedback text under, ""
    when they declined (their text is then never released; asked once either way)."""

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # "user:<id>", or "holder:<share id>" for an anonymous sharer (per share: no account).
    author_key = models.CharField(max_length=80, unique=True)
    license = models.CharField(max_length=50, blank=True)
    answered_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"feedback licence of {self.author_key}: {self.license or 'declined'}"
