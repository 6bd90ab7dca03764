"""Input and output of the reports and takedowns API."""

from __future__ import annotations

from rest_framework import serializers

from apps.moderation.models import ReportReason
from apps.moderation.services.limits import TEXT_LIMIT


class ReportInputSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=ReportReason.choices, help_text="What is wrong with the trajectory."
    )
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=TEXT_LIMIT,
        default="",
        help_text="Which step, what you saw. Do not paste a secret you found: say where it is.",
    )
    email = serializers.EmailField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Optional: only moderators see it, to ask a question. Never shown.",
    )


class ReportOutputSerializer(serializers.Serializer):
    trajectory = serializers.CharField(help_text="The share id reported.")
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()
    message = serializers.CharField()


class TakedownInputSerializer(serializers.Serializer):
    email = serializers.EmailField(
        help_text="A link to confirm the request is sent there, and the outcome later."
    )
    text = serializers.CharField(
        max_length=TEXT_LIMIT, help_text="Which personal data of yours is in it, in which steps."
    )

    def validate_text(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("say what in the trajectory is yours")
        return value


class TakedownOutputSerializer(serializers.Serializer):
    trajectory = serializers.CharField(help_text="The share id the request is about.")
    state = serializers.CharField(help_text='"unconfirmed" until the emailed link is followed.')
    message = serializers.CharField()
