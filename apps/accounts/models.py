from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A TrajHub account. Moderators are members of the "moderators" group or staff."""

    # The GitHub avatar, fetched once into our own storage (the CSP allows images from the site
    # only) and served from /u/<username>/avatar; empty: none.
    avatar_path = models.CharField(max_length=200, blank=True)

    @property
    def is_moderator(self) -> bool:
        if self.is_staff or self.is_superuser:
            return True
        # Cached per instance: permission checks run on every page and API call.
        if not hasattr(self, "_is_moderator"):
            self._is_moderator = self.groups.filter(name="moderators").exists()
        return self._is_moderator


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 of the secret is stored; the secret is shown once."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise the token.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class NoticeKind(models.TextChoices):
    """What a notice tells a contributor. Each kind has a subject and a body template under
    apps/accounts/templates/accounts/notices/, and its own unsubscribe link."""

    HELD = "held", "Held for review"
    REJECTED = "rejected", "Rejected"
    HIDDEN = "hidden", "Hidden by a moderator"
    REPORTED = "reported", "Reported"
    TAKEDOWN = "takedown", "Taken down"
    IMAGE_DROPPED = "image_dropped", "An image removed by a moderator"
    RELEASE_ANNOUNCED = "release_announced", "About to go into a release"
    EXPORT_READY = "export_ready", "Your data export is ready"
    SECRET_PUBLISHED = "secret_published", "A secret published in a release card"
    APPROVED = "approved", "Approved by a moderator"
    REPORT_OUTCOME = "report_outcome", "What happened to your report"
    CORRECTED = "corrected", "A reader corrected a step"
    FLAGGED = "flagged", "A reader marked where it went wrong"


class Notice(models.Model):
    """Something that happened to a contributor's share (or account), told by email and, for
    accounts, listed in the dashboard.

    It names the trajectory by share id, not by key: accounts import nothing of the other apps,
    and a notice (say, a takedown) outlives the trajectory. `email` is the anonymous recipient's
    address only until the email has gone out: the task clears it after sending.
    """

    user = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.CASCADE, related_name="notices"
    )
    email = models.EmailField(blank=True)
    kind = models.CharField(max_length=20, choices=NoticeKind.choices)
    share_id = models.CharField(max_length=64, blank=True)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    reason = models.TextField(blank=True)
    link = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"], name="notice_user_recent")]

    def __str__(self) -> str:
        return f"{self.kind} notice {self.pk}"

    @property
    def link_href(self) -> str:
        """The link if it is one a page may show (http(s) or a path of ours), else empty."""
        link = self.link.strip()
        if link.startswith(("https://", "http://")) or (
            link.startswith("/") and not link.startswith("//")
        ):
            return link
        return ""


class NoticeOptOut(models.Model):
    """An address that unsubscribed from one kind of notice email.

    The address is kept only as an HMAC (notices.address_hash): enough to recognise it, useless
    to anyone who reads the table.
    """

    address_hash = models.CharField(max_length=64)
    kind = models.CharField(max_length=20, choices=NoticeKind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["address_hash", "kind"], name="optout_unique"),
        ]

    def __str__(self) -> str:
        return f"opt-out {self.kind} {self.address_hash[:8]}"


class EmailDeletionRequest(models.Model):
    """A request, made without an account, to delete everything shared anonymously under an
    email address: the link sent there carries a secret of which only a SHA-256 is kept. It
    expires (TRAJHUB_EMAIL_DELETION_HOURS) and works once (`used_at`)."""

    secret_hash = models.CharField(max_length=64, unique=True)
    email = models.EmailField()
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"email deletion request {self.pk}"


class ExportState(models.TextChoices):
    PENDING = "pending", "Waiting to be built"
    BUILDING = "building", "Being built"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class DataExport(models.Model):
    """A zip archive of everything an account holds, built by a task into the private storage
    ("default"). Only its account can download it; a newer one replaces it."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="data_exports")
    state = models.CharField(
        max_length=10, choices=ExportState.choices, default=ExportState.PENDING
    )
    path = models.CharField(max_length=300, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    trajectories = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One export in the works per account: asking again while it builds adds nothing.
            models.UniqueConstraint(
                fields=["user"],
                condition=models.Q(state__in=["pending", "building"]),
                name="export_one_in_progress",
            ),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.state})"
