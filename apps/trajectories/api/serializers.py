"""Input and output serializers of the trajectory API (inputs validate, outputs shape)."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from apps.trajectories.models import Polarity, Trajectory, Visibility
from apps.trajectories.outcome import RESOLVED, UNRESOLVED, run_outcome
from apps.trajectories.redaction import identity, redact_data, redactor
from apps.trajectories.selectors.list_rows import ListRow
from apps.trajectories.selectors.redactions import own_redactions

if TYPE_CHECKING:
    from apps.trajectories.services import StoredTrajectory

EXPORT_CHOICES = ("original", "openhands", "openai", "sharegpt", "atif", "adp")


class ShareOptionsInputSerializer(serializers.Serializer):
    """Options of POST /trajectories: multipart form fields, or query parameters with a JSON body."""

    visibility = serializers.ChoiceField(choices=Visibility.choices, default=Visibility.PRIVATE)
    polarity = serializers.ChoiceField(choices=Polarity.choices, required=False, allow_blank=True)
    feedback_text = serializers.CharField(
        required=False, allow_blank=True, max_length=10_000, trim_whitespace=False
    )
    session_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    title = serializers.CharField(required=False, allow_blank=True, max_length=300)
    license_agreed = serializers.BooleanField(required=False, default=False)
    format = serializers.CharField(required=False, allow_blank=True, max_length=40)
    email = serializers.EmailField(
        required=False, allow_blank=True, help_text="Anonymous shares only; never shown."
    )
    # What the options may be together (a public share needs the licence agreed) is the
    # service's to say, once (services.ingest.validate_options): this reads their types.


class ShareUploadSerializer(ShareOptionsInputSerializer):
    """The multipart form (for the schema): a file plus the share options."""

    file = serializers.FileField(help_text="A trajectory file in any supported format (.gz too).")


# What the owner may say of the outcome (services.trajectory_outcome_set; "" clears it).
OWNER_OUTCOME_CHOICES = [(RESOLVED, "it worked"), (UNRESOLVED, "it did not")]


class TrajectoryUpdateInputSerializer(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    title = serializers.CharField(required=False, allow_blank=True, max_length=300)
    polarity = serializers.ChoiceField(choices=Polarity.choices, required=False)
    feedback_text = serializers.CharField(
        required=False, allow_blank=True, max_length=10_000, trim_whitespace=False
    )
    license_agreed = serializers.BooleanField(required=False)
    outcome = serializers.ChoiceField(
        choices=OWNER_OUTCOME_CHOICES,
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text=(
            "The owner's word on how the run went; empty or null clears it. Refused where the "
            "format records an outcome of its own (outcome_source says which)."
        ),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        unknown = (
            set(self.initial_data) - set(self.fields) if hasattr(self, "initial_data") else set()
        )
        if unknown:
            name = sorted(unknown)[0]
            raise serializers.ValidationError({name: "this field cannot be changed"})
        if not attrs:
            raise serializers.ValidationError(
                "nothing to change: send visibility, title, polarity, feedback_text, "
                "license_agreed or outcome"
            )
        return attrs


class DownloadQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=EXPORT_CHOICES, default="openhands")


def _iso(value: datetime | None, zone: tzinfo) -> str | None:
    """A date as DRF's DateTimeField writes it (ISO 8601 in the current time zone `zone`, "Z"
    for UTC)."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(zone)
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _redact_for(instance: Trajectory, context: dict[str, Any]):
    manage = context.get("can_manage")
    if manage is not None and manage(instance):
        return identity
    # The serializer shows the trajectory's own strings only: its own redactions suffice.
    return redactor(own_redactions(instance))


class TrajectoryOutputSerializer(serializers.ModelSerializer):
    """A trajectory as the API shows it. Public callers get its text (title, feedback, agent,
    model, version) with the redaction placeholders, as the page shows it."""

    id = serializers.CharField(source="share_id", read_only=True)
    url = serializers.SerializerMethodField()
    api_url = serializers.SerializerMethodField()
    agent = serializers.SerializerMethodField()
    model = serializers.SerializerMethodField()
    agent_version = serializers.SerializerMethodField()
    owner = serializers.SerializerMethodField()
    title = serializers.SerializerMethodField()
    feedback_text = serializers.SerializerMethodField()
    stars = serializers.IntegerField(source="star_count", read_only=True)
    corrections = serializers.IntegerField(source="correction_count", read_only=True)
    first_wrong_marks = serializers.IntegerField(source="first_wrong_count", read_only=True)

    class Meta:
        model = Trajectory
        fields = [
            "id",
            "url",
            "api_url",
            "title",
            "owner",
            "source_format",
            "agent",
            "model",
            "agent_version",
            "polarity",
            "feedback_text",
            "visibility",
            "review_state",
            "license",
            "num_events",
            "stars",
            "corrections",
            "first_wrong_marks",
            "num_bytes",
            "started_at",
            "ended_at",
            "total_tokens",
            "total_cost",
            "outcome",
            "outcome_score",
            "outcome_source",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def to_representation(self, instance: Trajectory | ListRow) -> dict[str, Any]:
        """The fields of Meta.fields, built directly: DRF's generic path (a field object per
        column, five redactors made per row, a timezone conversion per date through the field
        machinery) was most of a list page's time (issue 24). The same values as DRF's
        (tests/api/test_list_serializer.py compares the two). The list passes the rows it read
        as values (selectors/list_rows.py), which carry the owner's name instead of the owner."""
        if isinstance(instance, ListRow):
            owner = instance.owner_username
        else:
            owner = instance.owner.username if instance.owner_id else None
        redact = _redact_for(instance, self.context)
        zone = timezone.get_current_timezone()
        share_id = instance.share_id
        site = settings.SITE_URL
        return {
            "id": share_id,
            "url": f"{site}/t/{share_id}/",
            "api_url": f"{site}/api/v1/trajectories/{share_id}",
            "title": redact(instance.title),
            "owner": owner,
            "source_format": instance.source_format,
            "agent": redact(instance.agent),
            "model": redact(instance.model_name),
            "agent_version": redact(instance.agent_version),
            "polarity": instance.polarity,
            "feedback_text": redact(instance.feedback_text),
            "visibility": instance.visibility,
            "review_state": instance.review_state,
            "license": instance.license,
            "num_events": instance.num_events,
            "stars": instance.star_count,
            "corrections": instance.correction_count,
            "first_wrong_marks": instance.first_wrong_count,
            "num_bytes": instance.num_bytes,
            "started_at": _iso(instance.started_at, zone),
            "ended_at": _iso(instance.ended_at, zone),
            "total_tokens": instance.total_tokens,
            "total_cost": None if instance.total_cost is None else float(instance.total_cost),
            # The stored outcome (outcome.stored_verdict): no text, nothing to redact.
            "outcome": instance.outcome,
            "outcome_score": instance.outcome_score,
            "outcome_source": instance.outcome_source,
            "created_at": _iso(instance.created_at, zone),
            "updated_at": _iso(instance.updated_at, zone),
        }

    def get_url(self, instance: Trajectory) -> str:
        return f"{settings.SITE_URL}/t/{instance.share_id}/"

    def get_api_url(self, instance: Trajectory) -> str:
        return f"{settings.SITE_URL}/api/v1/trajectories/{instance.share_id}"

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_owner(self, instance: Trajectory) -> str | None:
        return instance.owner.username if instance.owner_id else None

    def get_title(self, instance: Trajectory) -> str:
        return _redact_for(instance, self.context)(instance.title)

    def get_feedback_text(self, instance: Trajectory) -> str:
        return _redact_for(instance, self.context)(instance.feedback_text)

    def get_agent(self, instance: Trajectory) -> str:
        return _redact_for(instance, self.context)(instance.agent)

    def get_model(self, instance: Trajectory) -> str:
        return _redact_for(instance, self.context)(instance.model_name)

    def get_agent_version(self, instance: Trajectory) -> str:
        return _redact_for(instance, self.context)(instance.agent_version)


class RunResultSerializer(serializers.Serializer):
    """What the run came to, where its format says (evaluation rows, SWE-agent's info)."""

    patch = serializers.CharField(required=False, help_text="The final patch (git diff), whole.")
    resolved = serializers.BooleanField(required=False, allow_null=True)
    instance_id = serializers.CharField(required=False)
    exit_status = serializers.CharField(required=False)
    cost = serializers.FloatField(required=False)
    tokens = serializers.IntegerField(required=False)
    score = serializers.CharField(required=False)
    error = serializers.CharField(required=False)
    model_stats = serializers.DictField(required=False)


class TrajectoryDetailOutputSerializer(TrajectoryOutputSerializer):
    """One trajectory: the list's fields and the run's result (null when it has none)."""

    result = serializers.SerializerMethodField()

    class Meta(TrajectoryOutputSerializer.Meta):
        fields = [*TrajectoryOutputSerializer.Meta.fields, "result"]
        read_only_fields = fields

    def to_representation(self, instance: Trajectory) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["result"] = self.get_result(instance)
        return data

    @extend_schema_field(RunResultSerializer(allow_null=True))
    def get_result(self, instance: Trajectory) -> dict[str, Any] | None:
        redact = _redact_for(instance, self.context)
        metadata = (
            instance.metadata if redact is identity else redact_data(instance.metadata, redact)
        )
        result = run_outcome(metadata)
        return result.as_dict() if result else None


class StoredTrajectoryOutputSerializer(TrajectoryOutputSerializer):
    """An item of the POST answer: the trajectory, whether it is new, and its password (once)."""

    # Serialised from what ingest returns, a services.StoredTrajectory (to_representation).

    created = serializers.BooleanField(read_only=True)
    password = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="Anonymous shares: the deletion password, shown once.",
    )

    class Meta(TrajectoryOutputSerializer.Meta):
        fields = [*TrajectoryOutputSerializer.Meta.fields, "created", "password"]
        read_only_fields = fields

    def to_representation(self, instance: StoredTrajectory) -> dict[str, Any]:
        # The trajectory's own fields (`created` and `password` are not among its attributes),
        # then the two that the stored item says.
        data = super().to_representation(instance.trajectory)
        data["created"] = instance.created
        data["password"] = instance.password
        return data


class ItemErrorSerializer(serializers.Serializer):
    where = serializers.CharField()
    message = serializers.CharField()


class IngestOutputSerializer(serializers.Serializer):
    trajectories = StoredTrajectoryOutputSerializer(many=True)
    errors = ItemErrorSerializer(many=True)
    warnings = ItemErrorSerializer(
        many=True, help_text="What stored trajectories left out (events that are not events)."
    )


def page_of(name: str, item: serializers.Serializer) -> serializers.Serializer:
    """The schema of a cursor-paginated answer: {next, previous, results: [item]}."""
    return inline_serializer(
        name,
        {
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item.__class__(many=True),
        },
    )


class EventOutputSerializer(serializers.Serializer):
    """An event (already redacted by the selector for callers who are not owner or moderator)."""

    position = serializers.IntegerField()
    id = serializers.CharField(source="original_id")
    timestamp = serializers.DateTimeField(allow_null=True)
    source = serializers.CharField()
    kind = serializers.CharField()
    type = serializers.CharField()
    cause = serializers.CharField()
    text = serializers.CharField()
    data = serializers.JSONField(
        help_text='The original fields; embedded images are "trajhub-image:<sha256>" references.'
    )
