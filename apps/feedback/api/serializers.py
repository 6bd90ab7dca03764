"""Input and output serializers of the step feedback API (outputs shape the schema: the views
answer with the selectors' own JSON, which these describe)."""

from __future__ import annotations

from rest_framework import serializers

from apps.feedback.models import CorrectionMode, NoteKind, NoteState, Rating, ReportReason

INPUT_FIELDS = {"rating", "first_wrong", "correction", "mode", "comment", "license_agreed"}


class FeedbackInputSerializer(serializers.Serializer):
    """POST: any of the fields; each one left out keeps what was given before."""

    rating = serializers.ChoiceField(
        choices=Rating.choices, allow_null=True, required=False, help_text="null takes it back."
    )
    first_wrong = serializers.BooleanField(
        required=False, help_text="This agent step is where it first went wrong."
    )
    correction = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text='What the agent should have done instead (agent steps only); "" deletes it.',
    )
    mode = serializers.ChoiceField(
        choices=CorrectionMode.choices,
        required=False,
        default=CorrectionMode.MESSAGE,
        help_text="action: `correction` is the step's action edited (a command, code, a tool "
        "call's arguments), shown as a diff against the redacted step.",
    )
    comment = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, help_text='"" deletes it.'
    )
    license_agreed = serializers.BooleanField(
        required=False,
        help_text="The licence question (asked with one's first correction or comment): true "
        "lets the text be released under the site's licence; false: never released.",
    )


class NoteReportInputSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=ReportReason.choices)
    text = serializers.CharField(required=False, allow_blank=True, default="")


class NoteOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=NoteKind.choices)
    mode = serializers.CharField()
    author = serializers.CharField()
    text = serializers.CharField(help_text="Redacted, unless it is the caller's own.")
    original = serializers.CharField(help_text="The redacted step an action correction edits.")
    diff = serializers.CharField(help_text="Unified diff lines of an action correction.")
    state = serializers.ChoiceField(choices=NoteState.choices)
    rejected_by_owner = serializers.BooleanField()
    outdated = serializers.BooleanField(help_text="The step changed since (a re-import).")
    mine = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class RatingsOutputSerializer(serializers.Serializer):
    good = serializers.IntegerField()
    bad = serializers.IntegerField()


class MineOutputSerializer(serializers.Serializer):
    rating = serializers.CharField(allow_null=True)
    first_wrong = serializers.BooleanField()
    first_wrong_step = serializers.IntegerField(allow_null=True)
    license = serializers.CharField(
        allow_null=True, help_text='null: not asked yet; "": declined; else the licence agreed.'
    )


class StepFeedbackOutputSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    agent_step = serializers.BooleanField(help_text="Only agent steps take first_wrong/correction.")
    enabled = serializers.BooleanField(help_text="false: the owner switched feedback off.")
    can_give = serializers.BooleanField()
    ratings = RatingsOutputSerializer()
    first_wrong = serializers.IntegerField(help_text="Readers who mark it the first wrong step.")
    outdated = serializers.IntegerField(help_text="Ratings given before the step changed.")
    corrections = NoteOutputSerializer(many=True)
    comments = NoteOutputSerializer(many=True)
    mine = MineOutputSerializer()


class SummaryOutputSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    can_give = serializers.BooleanField()
    signed_in = serializers.BooleanField()
    steps = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text='Per step ("14"): good, bad, first_wrong, corrections, comments.',
    )
    mine = serializers.DictField()
