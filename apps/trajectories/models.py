import secrets

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import MD5, Upper

from apps.trajectories.deciles import flagged_at_indexes
from apps.trajectories.querysets import TrajectoryQuerySet
from apps.trajectories.shown import SHOWN_MAX


def new_share_id() -> str:
    """64 lowercase hex characters, as OpenHands shows a feedback_id."""
    return secrets.token_hex(32)


# What Trajectory.objects.public() selects, for partial indexes (keep the two in step).
PUBLIC = Q(visibility="public", review_state="approved")


class Visibility(models.TextChoices):
    PRIVATE = "private", "Private"
    PUBLIC = "public", "Public"


class ReviewState(models.TextChoices):
    PENDING = "pending", "Pending scan"
    APPROVED = "approved", "Approved"
    HELD = "held", "Held for review"
    REJECTED = "rejected", "Rejected"
    HIDDEN = "hidden", "Hidden by a moderator"


class Polarity(models.TextChoices):
    POSITIVE = "positive", "Positive"
    NEGATIVE = "negative", "Negative"
    NONE = "none", "None"


class Outcome(models.TextChoices):
    """What the run came to (outcome.py makes it from the format's result, or the owner's)."""

    RESOLVED = "resolved", "Resolved"
    UNRESOLVED = "unresolved", "Not resolved"
    UNKNOWN = "unknown", "Unknown"


class Trajectory(models.Model):
    """One shared agent session: metadata, ownership, visibility and review state.

    The events live in Event; the raw upload in storage (raw_path). Deleting a trajectory leaves
    a Tombstone so that releases can list it as removed.
    """

    share_id = models.CharField(max_length=64, unique=True, default=new_share_id, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="trajectories",
    )
    # Never shown, never released, never logged: it only lets an anonymous sharer delete by email.
    contact_email = models.EmailField(blank=True)
    # An HMAC of the session id (services/dedup.py session_digest), never the id itself: with the
    # account or the email it proves a re-share comes from the same submitter, so it is a secret.
    # Anonymous shares keep one only when the client sent it (one derived from the file proves
    # nothing).
    client_session_id = models.CharField(max_length=200, blank=True)
    # Anonymous shares that extend an earlier one of the same email without proving to be its
    # submitter's form a chain: the first member's share id, on every member (also the first),
    # so that lists show only the longest public one (TrajectoryQuerySet.listed).
    chain_key = models.CharField(max_length=64, blank=True)
    title = models.CharField(max_length=300, blank=True)
    source_format = models.CharField(max_length=40)
    agent = models.CharField(max_length=100, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    agent_version = models.CharField(max_length=100, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    polarity = models.CharField(max_length=10, choices=Polarity.choices, default=Polarity.NONE)
    feedback_text = models.TextField(blank=True)
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    review_state = models.CharField(
        max_length=10, choices=ReviewState.choices, default=ReviewState.PENDING
    )
    license = models.CharField(max_length=50, blank=True, help_text="Agreed when made public.")
    # Hashes (Django password hashers) of every deletion password issued for an anonymous share.
    deletion_password_hashes = models.JSONField(default=list, blank=True)
    # Consistent placeholders for public surfaces, written by the scan: {"original": "<EMAIL_1>"}.
    redactions = models.JSONField(default=dict, blank=True)
    # The scan engine and rules that made `redactions` (apps.moderation.scanning.scanner.version()); when
    # they change, the rescan sweep scans public trajectories again.
    scan_version = models.CharField(max_length=100, blank=True, db_index=True)
    scanned_at = models.DateTimeField(null=True, blank=True)
    # sha256 of the images a moderator dropped (Image.dropped_at), kept here by the moderation
    # services so that every surface knows without another query: everyone but the owner and
    # moderators sees "trajhub-image:removed" in their place.
    dropped_images = models.JSONField(default=list, blank=True)
    # sha256 of its images that neither OCR nor a moderator has read (image_rule.py): withheld
    # from everyone but the owner and moderators unless TRAJHUB_IMAGES_PUBLISH_UNREAD. Written
    # by the scan and when a moderator clears an image, like `dropped_images`.
    unchecked_images = models.JSONField(default=list, blank=True)
    # sha256 of its images in which OCR found text the scan flags and that no moderator has
    # cleared or dropped (image_rule.py): withheld from everyone but the owner and moderators on
    # the site as in releases, whatever the trajectory's review state (a picture cannot be
    # redacted). Written by the scan and by clearances, like `unchecked_images`.
    flagged_images = models.JSONField(default=list, blank=True)
    # What a request needs of `redactions` without reading it (services/redaction_index.py):
    # {"own": the originals found in the title, feedback, agent, model, version and metadata,
    # with their placeholders; "count": len(redactions); "strings"/"metadata": digests of what
    # "own" was gathered from}; each event's own in Event.redactions. Read only while
    # `indexed_at` is set, which a database trigger clears whenever `redactions` changes, and
    # where the digests still match what is read (selectors/redactions.py).
    redaction_index = models.JSONField(null=True, blank=True, editable=False)
    indexed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The redacted view of the agent, model and version (written with the index, from the same
    # map, with the contributor's addresses replaced as in releases): what filters, facets and
    # the release card read, so that none of them can match or print a raw value. Read only
    # while `indexed_at` is set (a changed map makes them stale until the index is rebuilt).
    shown_agent = models.CharField(max_length=SHOWN_MAX, blank=True, editable=False)
    shown_model = models.CharField(max_length=SHOWN_MAX, blank=True, editable=False)
    shown_agent_version = models.CharField(max_length=SHOWN_MAX, blank=True, editable=False)

    # The run's outcome (outcome.stored_verdict), written at ingest, re-import and when the owner
    # sets it: resolved / unresolved / unknown, a score in [0, 1] where known, and the code of
    # where it came from (outcome.SOURCE_LABELS: a format's report, "owner", "" for none). The
    # format's own verdict wins; the owner's "it worked" / "it did not" is kept apart in
    # `owner_outcome` ("" none) and counts only where the format records none.
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.UNKNOWN)
    outcome_score = models.FloatField(null=True, blank=True)
    outcome_source = models.CharField(max_length=30, blank=True)
    owner_outcome = models.CharField(max_length=10, blank=True)

    num_events = models.PositiveIntegerField(default=0)
    # Stars given by signed-in users (apps.stars keeps it in step with its Star rows).
    star_count = models.PositiveIntegerField(default=0)
    # Readers' step feedback, as lists sort and filter by it (apps.feedback recounts them on
    # every change of its rows: this app never reads feedback). Corrections anyone may read
    # (shown, not rejected by the owner, not outdated) and current first-wrong marks; both 0
    # while the owner has feedback switched off. Where the marks are: FlaggedDecile, deciles.py.
    correction_count = models.PositiveIntegerField(default=0)
    first_wrong_count = models.PositiveIntegerField(default=0)
    first_wrong_deciles = models.PositiveSmallIntegerField(default=0, editable=False)
    num_bytes = models.PositiveBigIntegerField(default=0, help_text="Size of the raw upload.")
    # Dedup of payloads without a session id: fingerprint of the first event, and of the chain of
    # all events, so "stored events are a prefix of the new ones" is two comparisons.
    head_fingerprint = models.CharField(max_length=64, blank=True)
    chain_fingerprint = models.CharField(max_length=64, blank=True)

    raw_path = models.CharField(max_length=300, blank=True)
    raw_sha256 = models.CharField(max_length=64, blank=True)
    raw_filename = models.CharField(max_length=255, blank=True)
    raw_content_type = models.CharField(max_length=100, blank=True)

    # Totals taken from the events where the format carries them.
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    total_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    total_cost = models.FloatField(null=True, blank=True)

    search_text = models.TextField(blank=True, help_text="Title and event text, capped; search.")
    search_vector = SearchVectorField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The first time it entered public(): from then on its events prove nothing (dedup.py).
    published_at = models.DateTimeField(null=True, blank=True)

    objects = TrajectoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "trajectories"
        indexes = [
            models.Index(
                fields=["visibility", "review_state", "-created_at"], name="traj_public_recent"
            ),
            models.Index(fields=["owner", "client_session_id"], name="traj_owner_session"),
            models.Index(fields=["owner", "head_fingerprint"], name="traj_owner_head"),
            models.Index(fields=["contact_email", "head_fingerprint"], name="traj_email_head"),
            models.Index(fields=["review_state"], name="traj_review_state"),
            # dedup.py: whether a share's first events were shown anywhere (any submitter).
            models.Index(fields=["head_fingerprint"], name="traj_head"),
            # listed(): the longer public members of a chain, looked up per listed chain member.
            models.Index(
                "chain_key",
                F("num_events").desc(),
                name="traj_public_chain",
                condition=PUBLIC & ~Q(chain_key=""),
            ),
            # The public list's filters and orderings (the shared FilterSet: agent and model are
            # case-insensitive), partial on public() so they stay small and each keeps the list
            # a short index scan over 100,000 rows (bench/bench_list.py).
            models.Index(
                F("num_events").desc(),
                F("id").desc(),
                name="traj_public_events",
                condition=PUBLIC,
            ),
            models.Index(
                F("star_count").desc(),
                F("id").desc(),
                name="traj_public_stars",
                condition=PUBLIC,
            ),
            models.Index(
                F("correction_count").desc(),
                F("id").desc(),
                name="traj_public_corrections",
                condition=PUBLIC,
            ),
            # ?has_corrections=1 and ?flagged=1, newest first: small indexes of only the rows
            # they list, so a page and its count read those rows and no others.
            models.Index(
                F("created_at").desc(),
                F("id").desc(),
                name="traj_public_corrected",
                condition=PUBLIC & Q(correction_count__gt=0),
            ),
            models.Index(
                F("created_at").desc(),
                F("id").desc(),
                name="traj_public_flagged",
                condition=PUBLIC & Q(first_wrong_count__gt=0),
            ),
            *flagged_at_indexes(PUBLIC),  # ?flagged_at=<tenth>, newest first
            models.Index(
                Upper("shown_agent"),
                F("created_at").desc(),
                name="traj_public_shown_agent",
                condition=PUBLIC,
            ),
            models.Index(
                Upper("shown_model"),
                F("created_at").desc(),
                name="traj_public_shown_model",
                condition=PUBLIC,
            ),
            models.Index(
                "source_format",
                F("created_at").desc(),
                name="traj_public_format",
                condition=PUBLIC,
            ),
            # ?outcome= on the public list, newest first (bench/bench_list.py).
            models.Index(
                "outcome",
                F("created_at").desc(),
                name="traj_public_outcome",
                condition=PUBLIC,
            ),
            # /compare/'s "Compare with…": other public runs of the same task (selectors/compare).
            models.Index("title", name="traj_public_title", condition=PUBLIC),
            # (metadata -> 'instance_id'), the expression of the `metadata__instance_id=` lookup.
            models.Index(F("metadata__instance_id"), name="traj_public_instance", condition=PUBLIC),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(share_id__regex=r"^[0-9a-f]{64}$"), name="traj_share_id_hex"
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.share_id[:12]

    def get_absolute_url(self) -> str:
        return f"/t/{self.share_id}/"

    @property
    def shown_title(self) -> str:
        """The title from the redacted view, as its public page prints it (never the raw one):
        what notices and mails name the trajectory by, whoever they go to."""
        from apps.trajectories.redaction import redactor

        return redactor(self.redactions)(self.title or "").strip() or "Untitled trajectory"

    @property
    def is_public(self) -> bool:
        return self.visibility == Visibility.PUBLIC and self.review_state == ReviewState.APPROVED

    @property
    def review_label(self) -> str:
        """The review state as its owner reads it. The scan holds a private trajectory with
        findings as it would a public one (so that making it public waits for a moderator),
        but nothing of it waits for anyone while it stays private: it reads "Private", not
        "Held for review". Moderators' pages show the state itself."""
        if self.visibility != Visibility.PUBLIC and self.review_state == ReviewState.HELD:
            return str(Visibility.PRIVATE.label)
        return str(self.get_review_state_display())


class EventSource(models.TextChoices):
    USER = "user", "User"
    AGENT = "agent", "Agent"
    ENVIRONMENT = "environment", "Environment"


class EventKind(models.TextChoices):
    MESSAGE = "message", "Message"
    ACTION = "action", "Action"
    OBSERVATION = "observation", "Observation"
    SYSTEM = "system", "System"


class Event(models.Model):
    """One step of a trajectory, in canonical form, with its original fields kept in `data`."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="events")
    position = models.PositiveIntegerField()
    original_id = models.CharField(max_length=100, blank=True)
    timestamp = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=12, choices=EventSource.choices)
    kind = models.CharField(max_length=12, choices=EventKind.choices)
    type = models.CharField(max_length=60)
    cause = models.CharField(max_length=100, blank=True, help_text="Original id of the action.")
    text = models.TextField(blank=True, help_text="Human-readable text for display and search.")
    # Original fields (args / extras / tool call data ...). Images are replaced by
    # "trajhub-image:<sha256>" references to Image rows.
    data = models.JSONField(default=dict, blank=True)
    # Written with the trajectory's redaction index (see Trajectory.redaction_index): the
    # originals the trajectory's redactions replace in this event's strings, with their
    # placeholders (NULL: none), `text` with them replaced (NULL: nothing replaced), and digests
    # of the text and of the other fields they were made from (NULL: not indexed). Read only
    # while the trajectory's index is current and the digests match the row.
    redactions = models.JSONField(null=True, blank=True, editable=False)
    index_digest = models.CharField(max_length=32, null=True, blank=True, editable=False)  # noqa: DJ001
    # NULL, not "": ingest's COPY leaves the column out, and NULL reads "nothing replaced".
    redacted_text = models.TextField(null=True, blank=True, editable=False)  # noqa: DJ001

    class Meta:
        ordering = ["trajectory_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "position"], name="event_unique_position"
            ),
        ]
        indexes = [
            # "Compare with…": runs whose first user message is this one (selectors/compare).
            # Partial: only the early user messages, a few rows a trajectory; md5, since a
            # message can be longer than a B-tree entry may be.
            models.Index(
                MD5("text"),
                name="event_first_message_md5",
                condition=Q(source="user", kind="message", position__lt=3),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.trajectory_id}#{self.position} {self.kind}:{self.type}"


class Image(models.Model):
    """A content-addressed image moved out of an event (screenshot, plot, attached picture)."""

    sha256 = models.CharField(max_length=64, unique=True)
    content_type = models.CharField(max_length=50)
    size = models.PositiveIntegerField()
    path = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # A moderator dropped it (it shows a secret): a placeholder on every surface but the owner's
    # and moderators' own view, and in releases. Content-addressed, so the same bytes, and the
    # same secret, are dropped in every trajectory that refers to them.
    dropped_at = models.DateTimeField(null=True, blank=True)
    # The scan version the OCR scan of these bytes ran with ("": never OCR-scanned) and how many
    # findings it made: releases take only images scanned and found clean.
    ocr_version = models.CharField(max_length=100, blank=True)
    ocr_findings = models.PositiveIntegerField(default=0)
    # A moderator looked at it and cleared it: public under every rule (image_rule.py) unless
    # dropped. Where OCR is off or missing, this is what makes an image public.
    cleared_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.sha256[:12]


class TrajectoryImage(models.Model):
    """Which trajectory refers to which image: an image nobody refers to is deleted."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="image_links")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="trajectory_links")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "image"], name="trajimage_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.trajectory_id} -> {self.image_id}"


class Tombstone(models.Model):
    """What stays of a deleted trajectory: its id and when, so releases list it as removed."""

    share_id = models.CharField(max_length=64, unique=True)
    deleted_at = models.DateTimeField(auto_now_add=True)
    was_public = models.BooleanField(default=False)
    reason = models.CharField(max_length=40, default="owner")

    def __str__(self) -> str:
        return f"deleted {self.share_id[:12]}"


class EventSummary(models.Model):
    """What a page view needs of a trajectory's events without reading them: the number of
    events, the counts by type (the type filter) and the timeline strip (one letter a step, the
    steps that failed, those with a screenshot). Written with the events (ingest, re-import;
    services/summary.py), so a page reads one row whatever the trajectory's length.

    Made only of each event's position, kind, type, source and a few keys of its data, which the
    trajectory's chain fingerprint covers: the row is current while `chain_fingerprint` and
    `total` match the trajectory's (selectors/viewer.py checks, and remakes it when not)."""

    trajectory = models.OneToOneField(
        Trajectory, on_delete=models.CASCADE, primary_key=True, related_name="event_summary"
    )
    chain_fingerprint = models.CharField(max_length=64, blank=True)
    total = models.PositiveIntegerField(default=0)
    # [[type, number of events], ...], most frequent first.
    types = models.JSONField(default=list)
    families = models.TextField(blank=True)
    errors = models.JSONField(default=list)
    screenshots = models.JSONField(default=list)
    # What /compare/ aligns, for the first COMPARE_MAX_STEPS steps: [kind, type, source,
    # signature, digest of the summary] a step (selectors/compare.py); null: not made yet. The
    # summaries themselves are read only for the rows a page shows.
    compare_steps = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"summary of {self.trajectory_id} ({self.total} events)"


class FindIndex(models.Model):
    """A trajectory's find index (services/find_index.py): every word of its events' redacted
    text, with the steps it is in and how often, so that find answers from the words a query
    matches instead of reading every event. Made from the redacted text only (never the raw
    text) by the redaction index's refresh, after the scan and after every change of the map;
    read only while `indexed_at` equals the trajectory's (a database trigger clears that on any
    change of the map, and a re-share or re-import clears it with the events)."""

    trajectory = models.OneToOneField(
        Trajectory, on_delete=models.CASCADE, primary_key=True, related_name="find_index"
    )
    indexed_at = models.DateTimeField()
    chain_fingerprint = models.CharField(max_length=64, blank=True)
    total = models.PositiveIntegerField(default=0)
    # The casefolded words, one a line between newlines ("\nword\n...\n"): a query is looked
    # for in this text, so a word matches anywhere inside, as a browser's find does.
    terms = models.TextField(blank=True)
    # The event types, whose postings follow the words' (a query matches a step's type too).
    types = models.JSONField(default=list)
    # uint32 little-endian: offsets[i] .. offsets[i+1] are term i's (step, count) pairs in
    # `postings` (term i being the i-th word, then the types).
    offsets = models.BinaryField()
    postings = models.BinaryField()
    # uint32 positions of the events whose redacted text differs from their text (the owner
    # sees the text: find reads those few events' text for the owner).
    replaced = models.BinaryField()
    # What the index holds (services/find_index.py FIND_INDEX_VERSION): 1, words and steps
    # only; 2, also where each word is, so that a query of several words answers from it.
    version = models.PositiveSmallIntegerField(default=1)
    # Version 2. Each word of the text has an ordinal, counted over the whole trajectory in
    # step order; step_words[s] is the ordinal of step s's first word (uint32, one a step).
    step_words = models.BinaryField(default=b"")
    # Version 2: each step's type, as its number in `types` (uint16, one a step).
    step_types = models.BinaryField(default=b"")
    # The runs of non-word characters between, before and after words (ids into this list;
    # longer or rarer ones are not kept: services/find_index.py).
    separators = models.JSONField(default=list)
    # occurrence_offsets[i] .. [i+1] are word i's occurrences: (ordinal uint32, separator
    # before uint16, separator after uint16) records, in ordinal order.
    occurrence_offsets = models.BinaryField(default=b"")
    occurrences = models.BinaryField(default=b"")

    def __str__(self) -> str:
        return f"find index of {self.trajectory_id}"


class FlaggedDecile(models.Model):
    """Where readers marked the first wrong step: per trajectory, each tenth of its steps with
    marks (`decile` 0-9) and how many; kept by apps.feedback, read by the stats histogram."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+")
    decile = models.PositiveSmallIntegerField()
    marks = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "decile"], name="flagged_decile_once"),
            models.CheckConstraint(
                condition=Q(decile__gte=0, decile__lte=9), name="flagged_decile_range"
            ),
        ]
        indexes = [models.Index(fields=["decile", "trajectory"], name="flagged_decile")]

    def __str__(self) -> str:
        return f"{self.marks} first-wrong mark(s) of {self.trajectory_id} in decile {self.decile}"
