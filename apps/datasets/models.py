from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.trajectories.models import Trajectory


class ReleaseStatus(models.TextChoices):
    BUILDING = "building", "Building"
    ANNOUNCED = "announced", "Announced (contributors may take trajectories out)"
    PUBLISHED = "published", "Published"
    FAILED = "failed", "Failed"


# A release in one of these states holds the build: at most one at a time (Meta.constraints).
ACTIVE = (ReleaseStatus.BUILDING, ReleaseStatus.ANNOUNCED)


class Release(models.Model):
    """One dataset release: its content (ReleaseEntry), its files (ReleaseFile) and its card.

    building → published (nothing new to announce), or building → announced → building →
    published (contributors heard of it first), or → failed (the build raised or its worker
    died). Only a published release is visible anywhere; its files live under `prefix` in the
    "releases" storage and are immutable.
    """

    version = models.PositiveIntegerField(unique=True)
    status = models.CharField(
        max_length=10, choices=ReleaseStatus.choices, default=ReleaseStatus.BUILDING
    )
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set as soon as one of this published release's trajectories is deleted, leaves public()
    # or is taken out by its contributor (public_set_changed): the page and the API say so at
    # once, and a removal-only build is queued.
    superseded_at = models.DateTimeField(null=True, blank=True)
    # The later published release that left those trajectories out: the page points to the
    # newest once there is one.
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    # Built only to leave out what was removed since `previous`: nothing added, nobody to tell.
    removal_only = models.BooleanField(default=False)
    # The version an announced release was announced as (in its notices), when a removal-only
    # release published during its opt-out window took that number: versions stay in the order
    # releases are published, and the pages say what it was announced as.
    announced_as = models.PositiveIntegerField(null=True, blank=True)
    files_deleted = models.BooleanField(default=False, help_text="Superseded files taken down.")
    prefix = models.CharField(max_length=100, blank=True)
    scanner_version = models.CharField(max_length=100, blank=True)
    num_rows = models.PositiveIntegerField(default=0)
    download_size = models.PositiveBigIntegerField(default=0)
    added_ids = models.JSONField(default=list, blank=True)
    removed_ids = models.JSONField(default=list, blank=True)
    # Step feedback (ReleaseFeedback) new since `previous`, and what of the previous release's
    # left: [{"kind", "id" (a note's public id), "trajectory_id", "step"}] for corrections and
    # comments, [{"kind", "trajectory_id", "step", "count"}] for ratings and first-wrong marks
    # (they have no id of their own to list, and their authors are never named).
    feedback_added = models.PositiveIntegerField(default=0)
    feedback_removed = models.JSONField(default=list, blank=True)
    # What the quality gate left out, by rule: {"too_short": 3, "duplicate": 1, ...}.
    excluded = models.JSONField(default=dict, blank=True)
    card = models.TextField(blank=True, help_text="README.md as published.")
    error = models.TextField(blank=True)
    # Progress of the current step, for the page and the command.
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)

    created_at = models.DateTimeField(auto_now_add=True)
    # Touched as row groups are written: a building release whose worker died stops moving.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    announced_at = models.DateTimeField(null=True, blank=True)
    opt_out_until = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["status"],
                condition=Q(status__in=["building", "announced"]),
                name="release_one_active",
            ),
        ]

    def __str__(self) -> str:
        return f"release {self.version} ({self.status})"

    def get_absolute_url(self) -> str:
        return f"/releases/{self.version}/"

    @property
    def name(self) -> str:
        return f"v{self.version}"

    @property
    def is_superseded(self) -> bool:
        return self.superseded_at is not None or self.superseded_by_id is not None


class ReleaseEntry(models.Model):
    """A trajectory in a release. Fixed when the release is announced (or built); `share_id`
    stays when the trajectory is deleted, so later releases can list it as removed."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="entries")
    trajectory = models.ForeignKey(
        Trajectory, null=True, on_delete=models.SET_NULL, related_name="release_entries"
    )
    share_id = models.CharField(max_length=64)
    # New in this release (never in a published one before): its contributor was told.
    is_new = models.BooleanField(default=False)

    class Meta:
        ordering = ["release_id", "trajectory_id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "share_id"], name="release_entry_unique"),
        ]
        indexes = [models.Index(fields=["trajectory", "release"], name="release_entry_traj")]

    def __str__(self) -> str:
        return f"{self.share_id[:12]} in {self.release_id}"


class ReleaseFile(models.Model):
    """One published file of a release: where it is, its size, checksum and row count."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    config = models.CharField(max_length=40, blank=True, help_text="Empty for card/manifest.")
    path = models.CharField(max_length=300, help_text="Inside the release folder.")
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    num_rows = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["release_id", "path"]
        constraints = [
            models.UniqueConstraint(fields=["release", "path"], name="release_file_unique"),
        ]

    def __str__(self) -> str:
        return self.path


class ReleaseShard(models.Model):
    """One shard of a build split across workers (TRAJHUB_RELEASE_SHARD_TASKS): the trajectory
    id range it covers and, once its task is done, the files it wrote (the last shard task to
    finish publishes). There is no result backend: these rows are the coordination."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveIntegerField()
    first_id = models.BigIntegerField()
    last_id = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # [{"config", "path", "size", "sha256", "num_rows"}] of what the shard wrote.
    files = models.JSONField(default=list, blank=True)
    worker = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["release_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["release", "index"], name="release_shard_unique"),
        ]

    def __str__(self) -> str:
        return f"shard {self.index} of {self.release_id}"


class OptOut(models.Model):
    """A contributor took this trajectory out of releases: it stays out of every release built
    from now on until its contributor puts it back (deleting this row)."""

    trajectory = models.OneToOneField(Trajectory, on_delete=models.CASCADE, related_name="opt_out")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"opt-out {self.trajectory_id}"


class ReleaseFeedback(models.Model):
    """A piece of step feedback (apps.feedback: a rating, a first-wrong mark, a correction or a
    comment) in a release, fixed when its content is (at publish): what the next release
    compares with to list what was removed, and what tells that a published release holds
    feedback that was deleted or may no longer be released. `item_id` is the feedback row's
    key (no foreign key: four tables, and the entry outlives the row); the trajectory's share id
    and the step stay for the removed list. Never shown: the public lists name notes by their
    public id and ratings only by their step."""

    class Kind(models.TextChoices):
        RATING = "rating", "Rating"
        FIRST_WRONG = "first_wrong", "First-wrong mark"
        CORRECTION = "correction", "Correction"
        COMMENT = "comment", "Comment"

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="feedback")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    item_id = models.BigIntegerField()
    trajectory_id = models.BigIntegerField()
    share_id = models.CharField(max_length=64)
    step = models.PositiveIntegerField()
    # A note's public id ("" for ratings and marks).
    public_id = models.CharField(max_length=24, blank=True)

    class Meta:
        ordering = ["release_id", "trajectory_id", "step", "kind", "item_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "kind", "item_id"], name="release_feedback_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["trajectory_id", "release"], name="release_feedback_traj"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.item_id} in {self.release_id}"
