from django.conf import settings
from django.db import models

from apps.trajectories.models import Trajectory


class FindingCategory(models.TextChoices):
    SECRET = "secret", "Secret"
    PERSONAL = "personal", "Personal data"


IMAGE_PATH = "image:"  # a finding's path in an image: "image:<sha256>"


class Finding(models.Model):
    """A secret or a piece of personal data that the scan found in a trajectory.

    Only a masked preview is kept here: the original lives in the event (and, for public
    surfaces, in Trajectory.redactions, which maps it to `placeholder`). `start`/`end` locate it in
    the string at `path` so the owner and moderators can see it highlighted.
    """

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="findings")
    # Event position; null for the trajectory's own fields (title, feedback text, metadata).
    position = models.PositiveIntegerField(null=True, blank=True)
    # Where in the event or trajectory: "text", "data.args.command", "data.extras[2]", "title".
    path = models.CharField(max_length=300)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    kind = models.CharField(max_length=40)
    category = models.CharField(max_length=10, choices=FindingCategory.choices)
    placeholder = models.CharField(max_length=60)
    preview = models.CharField(max_length=60, help_text="The value with its middle masked.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["trajectory_id", "position", "path", "start"]
        indexes = [models.Index(fields=["trajectory", "position"], name="finding_traj_position")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")), name="finding_span"
            ),
        ]

    def __str__(self) -> str:
        where = "trajectory" if self.position is None else f"event {self.position}"
        return f"{self.kind} in {where} {self.path}"


class AuditAction(models.TextChoices):
    SCAN_APPROVED = "scan_approved", "Approved by the scan"
    SCAN_HELD = "scan_held", "Held by the scan"
    APPROVED = "approved", "Approved"
    REDACTED_APPROVED = "redacted_approved", "Redacted and approved"
    IMAGE_DROPPED = "image_dropped", "Image dropped (replaced by a placeholder)"
    IMAGE_CLEARED = "image_cleared", "Image cleared (looked at: public though OCR did not read it)"
    REJECTED = "rejected", "Rejected"
    HIDDEN = "hidden", "Hidden"
    REPORTED = "reported", "Reported by a reader"
    REPORTS_HELD = "reports_held", "Held after readers' reports"
    REPORTS_DISMISSED = "reports_dismissed", "Readers' reports dismissed by a moderator"
    TAKEDOWN_REQUESTED = "takedown_requested", "Takedown requested (confirmed by email)"
    TAKEDOWN_GRANTED = "takedown_granted", "Takedown granted"
    TAKEDOWN_DECLINED = "takedown_declined", "Takedown declined"
    APPEALED = "appealed", "Second look asked for"
    APPEAL_DECLINED = "appeal_declined", "Rejection upheld after a second look"
    DELETED = "deleted", "Deleted"
    RELEASE_CARD_REBUILT = "release_card_rebuilt", "Release card rebuilt from the redacted view"
    # Step feedback (apps/feedback): `details` names the piece of feedback by its public id,
    # kind and step, never by its text.
    FEEDBACK_HELD = "feedback_held", "Feedback held by a moderator"
    FEEDBACK_SHOWN = "feedback_shown", "Feedback shown by a moderator"
    FEEDBACK_REJECTED = "feedback_rejected", "Feedback rejected by a moderator"
    FEEDBACK_REPORTS_RESOLVED = "fb_reports_resolved", "Reports on feedback resolved (no change)"
    FEEDBACK_DELETED = "feedback_deleted", "Feedback deleted by a moderator"
    FEEDBACK_REPORTED = "feedback_reported", "Feedback reported by a reader"
    CORRECTION_REJECTED = "correction_rejected", "Correction rejected by the owner"
    CORRECTION_RESTORED = "correction_restored", "Owner's rejection of a correction taken back"
    FEEDBACK_OFF = "feedback_off", "Feedback switched off by the owner"
    FEEDBACK_ON = "feedback_on", "Feedback switched on by the owner"


class ActorKind(models.TextChoices):
    """Who did it, named as such: a null user alone cannot tell the scan from a password holder."""

    SCAN = "scan", "the scan"
    MODERATOR = "moderator", "a moderator"
    STAFF = "staff", "staff"
    OWNER = "owner", "the owner"
    HOLDER = "holder", "the anonymous holder (deletion password)"
    EMAIL_LINK = "email_link", "someone following an email deletion link"
    REPORT = "report", "a reader's report"
    TAKEDOWN = "takedown", "a takedown requester (email confirmed)"
    ACCOUNT_DELETION = "account_deletion", "an account deletion"
    OPERATOR = "operator", "an operator's command"
    UNKNOWN = "unknown", "not recorded"


class AppendOnlyError(RuntimeError):
    """The audit log is append-only: an entry is never changed or deleted."""


class AuditQuerySet(models.QuerySet):
    """Bulk writes that would rewrite history are refused (the row-level guard is on the model;
    on PostgreSQL a trigger refuses them to raw SQL as well, migration 0002)."""

    def update(self, **kwargs):
        raise AppendOnlyError("audit entries cannot be changed")

    def delete(self):
        raise AppendOnlyError("audit entries cannot be deleted")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnlyError("audit entries cannot be changed")


class AuditEntry(models.Model):
    """One decision or state change about a trajectory: who (a kind of actor, the account if any,
    and a snapshot of its username so the record survives the account), when, what and why.

    Append-only: the model refuses updates and deletes, the admin offers neither, and on
    PostgreSQL a trigger refuses them too. The one change allowed is the database's own
    SET NULL of `actor` when that account is deleted; `actor_username` keeps the name. It names
    the trajectory by share id, not by key, so the record outlives a deletion.
    """

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="moderation_actions",
    )
    actor_kind = models.CharField(
        max_length=20, choices=ActorKind.choices, default=ActorKind.UNKNOWN
    )
    actor_username = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=20, choices=AuditAction.choices)
    share_id = models.CharField(max_length=64, db_index=True)
    # Why, in the words of whoever acted (a moderator's reason, a reporter's category).
    reason = models.TextField(blank=True)
    # {"from": state, "to": state, "findings": {kind: count}, ...}; never an original value.
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.share_id[:12]}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise AppendOnlyError("audit entries cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("audit entries cannot be deleted")

    @property
    def actor_label(self) -> str:
        """ "a moderator (alice)", "the scan", "the owner (bob)": kind, then the name if any."""
        kind = ActorKind(self.actor_kind).label if self.actor_kind in ActorKind.values else ""
        return f"{kind} ({self.actor_username})" if self.actor_username else kind


class Claim(models.Model):
    """A moderator working on a trajectory of the queue. Until it expires (a setting) or is
    released by a decision, other moderators' decisions on it are refused."""

    trajectory = models.OneToOneField(Trajectory, on_delete=models.CASCADE, related_name="claim")
    moderator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims"
    )
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.trajectory_id} claimed by {self.moderator_id}"

    def describe(self) -> str:
        from django.utils import timezone

        until = timezone.localtime(self.expires_at).strftime("%H:%M:%S")
        return f"claimed by {self.moderator.get_username()} until {until}: theirs to decide"


class ManualRedaction(models.Model):
    """A value a moderator redacted by hand (one the scan missed). Every scan adds it to the
    trajectory's redactions as `<REDACTED_n>`, so a rescan keeps it hidden."""

    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="manual_redactions"
    )
    # The original, like Trajectory.redactions' keys: shown to no one but the owner/moderators.
    value = models.TextField()
    moderator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["trajectory_id", "id"]

    def __str__(self) -> str:
        return f"manual redaction in {self.trajectory_id}"


class ReportReason(models.TextChoices):
    SECRET = "secret", "It shows a secret (an API key, a token, a password)"
    PERSONAL = "personal", "It shows personal data"
    HARMFUL = "harmful", "Illegal, abusive or harmful content"
    SPAM = "spam", "Spam, or not an agent trajectory"
    OTHER = "other", "Something else"


class Report(models.Model):
    """A reader's report on a public trajectory. Reports from enough distinct accounts or client
    addresses within a window hold it for a moderator; a decision resolves the open ones.

    The reporter's email (optional) is for moderators only and never shown on a public page;
    the client address is kept only as an HMAC, enough to count distinct reporters.
    """

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="reports")
    reason = models.CharField(max_length=20, choices=ReportReason.choices)
    text = models.TextField(blank=True)
    email = models.EmailField(blank=True)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "user:<id>" or "addr:<HMAC of the client address>": who counts as one reporter.
    reporter_key = models.CharField(max_length=80)
    # HMAC of the client address, whoever reported: accounts behind one address are one reporter.
    address_key = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["trajectory", "resolved_at"], name="report_open")]

    def __str__(self) -> str:
        return f"report ({self.reason}) on {self.trajectory_id}"


class TakedownState(models.TextChoices):
    UNCONFIRMED = "unconfirmed", "Waiting for the email confirmation"
    OPEN = "open", "Confirmed, waiting for a moderator"
    GRANTED = "granted", "Granted: taken down"
    DECLINED = "declined", "Declined"


class TakedownRequest(models.Model):
    """ "My personal data is in this trajectory": a request to take it down, confirmed by a
    signed link sent to the requester's email, decided by a moderator, the outcome mailed back.
    The address is erased once the outcome has been sent."""

    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="takedown_requests"
    )
    email = models.EmailField(blank=True)
    text = models.TextField()
    state = models.CharField(
        max_length=12, choices=TakedownState.choices, default=TakedownState.UNCONFIRMED
    )
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["trajectory", "state"], name="takedown_state")]

    def __str__(self) -> str:
        return f"takedown request ({self.state}) on {self.trajectory_id}"


class Appeal(models.Model):
    """A contributor asking for a second look at a rejection, in their words; it puts the
    trajectory back in the review queue."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="appeals")
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"appeal on {self.trajectory_id}"


class QueueItem(Trajectory):
    """The review queue in Django admin: trajectories that wait for a decision (held by the
    scan or by reports, reported, with a takedown request or an appeal). A proxy: no table."""

    class Meta:
        proxy = True
        verbose_name = "review queue item"
        verbose_name_plural = "review queue"
        permissions = [("decide_review", "Can decide review-queue items")]
