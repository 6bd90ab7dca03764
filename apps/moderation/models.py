from django.conf import settings
from django.db import models

from apps.trajectories.models import Trajectory


class FindingCategory(models.TextChoices):
    SECRET = "secret", "Secret"
    PERSONAL = "personal", "Personal data"


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
    APPROVED = "approved", "Approved by a moderator"
    REJECTED = "rejected", "Rejected by a moderator"
    HIDDEN = "hidden", "Hidden by a moderator"
    DELETED = "deleted", "Deleted"


class AuditEntry(models.Model):
    """One change of a trajectory's review state, by the scan (no actor) or a moderator.

    It names the trajectory by share id, not by key, so the record outlives a deletion.
    """

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="moderation_actions",
    )
    action = models.CharField(max_length=20, choices=AuditAction.choices)
    share_id = models.CharField(max_length=64, db_index=True)
    # {"from": state, "to": state, "note": ..., "findings": {kind: count}}; never an original value.
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.share_id[:12]}"
