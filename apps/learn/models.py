from django.db import models


class RunState(models.TextChoices):
    SYNTHESIZING = "synthesizing", "Synthesizing"
    FILTERING = "filtering", "Filtering"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class SynthesisRun(models.Model):
    """One pass of backward construction and filtering, with its LLM usage and filter counts.

    Counters are updated with F() expressions by many workers at once; `stats` holds, per
    filter, how many examples it kept and dropped (written by the filter phase, which is one
    task at a time per run).
    """

    state = models.CharField(max_length=14, choices=RunState.choices, default=RunState.SYNTHESIZING)
    model = models.CharField(max_length=200)
    judge_models = models.JSONField(default=list)
    prompt_version = models.PositiveIntegerField()
    limit = models.PositiveIntegerField(null=True, blank=True)
    trajectories_total = models.PositiveIntegerField(default=0)
    trajectories_done = models.PositiveIntegerField(default=0)
    llm_calls = models.PositiveIntegerField("LLM calls", default=0)
    llm_retries = models.PositiveIntegerField("LLM retries", default=0)
    llm_failures = models.PositiveIntegerField("LLM failures", default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.state})"


class WindowState(models.TextChoices):
    PENDING = "pending", "Pending"
    CLAIMED = "claimed", "Being written"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Window(models.Model):
    """A slice (o_i, a_i+1, ..., o_j) of a public trajectory, as the public pages show it
    (redacted, cut), and where it is in the source. One row per window, ever: the unique
    constraint is what makes a resumed run skip what is done."""

    trajectory = models.ForeignKey(
        "trajectories.Trajectory", on_delete=models.CASCADE, related_name="learn_windows"
    )
    run = models.ForeignKey(SynthesisRun, on_delete=models.SET_NULL, null=True, blank=True)
    start_step = models.PositiveIntegerField(help_text="i: index of the first observation")
    end_step = models.PositiveIntegerField(help_text="j: index of the last observation")
    start_position = models.PositiveIntegerField(help_text="position of the first event")
    end_position = models.PositiveIntegerField(help_text="position of the last event")
    num_actions = models.PositiveIntegerField()
    # (action, observation) pairs identical to the one before, removed from this window.
    repeats_removed = models.PositiveIntegerField(default=0)
    steps = models.JSONField(default=list, help_text="[{role, text, first, last}] (redacted, cut)")
    # The redactions the text was made with: a change makes the window (and examples) go.
    redactions_hash = models.CharField(max_length=64)
    state = models.CharField(
        max_length=10, choices=WindowState.choices, default=WindowState.PENDING
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["trajectory_id", "start_step", "end_step"]
        constraints = [
            models.UniqueConstraint(
                fields=["trajectory", "start_step", "end_step"], name="learn_window_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(start_step__lt=models.F("end_step")), name="learn_window_order"
            ),
        ]
        indexes = [models.Index(fields=["state", "claimed_at"], name="learn_window_state")]

    def __str__(self) -> str:
        return f"window {self.start_position}-{self.end_position} of {self.trajectory_id}"


class ExampleState(models.TextChoices):
    CANDIDATE = "candidate", "Not filtered yet"
    KEPT = "kept", "Kept"
    DROPPED = "dropped", "Dropped"


class Example(models.Model):
    """An instruction the LLM wrote for a window, with the filters' verdicts.

    Only kept examples of trajectories in public() reach an export or /retrieve.
    """

    window = models.ForeignKey(Window, on_delete=models.CASCADE, related_name="examples")
    trajectory = models.ForeignKey(
        "trajectories.Trajectory", on_delete=models.CASCADE, related_name="learn_examples"
    )
    run = models.ForeignKey(SynthesisRun, on_delete=models.SET_NULL, null=True, blank=True)
    prompt_type = models.CharField(max_length=12)
    prompt_version = models.PositiveIntegerField()
    model = models.CharField(max_length=200)
    instruction = models.TextField()
    state = models.CharField(
        max_length=10, choices=ExampleState.choices, default=ExampleState.CANDIDATE
    )
    dropped_by = models.CharField(max_length=40, blank=True)
    # [{"filter": name, "kept": bool, "reason": str, ...}] in the order the filters ran.
    verdicts = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["window", "prompt_type"], name="learn_example_unique"),
        ]
        indexes = [models.Index(fields=["state", "id"], name="learn_example_state")]

    def __str__(self) -> str:
        return self.instruction[:80]
