from django.conf import settings
from rest_framework import serializers

from apps.learn.retrieval.search import FORMATS


class RetrieveInputSerializer(serializers.Serializer):
    instruction = serializers.CharField(max_length=20_000, trim_whitespace=True)
    observation = serializers.CharField(
        max_length=200_000, required=False, allow_blank=True, default=""
    )
    history = serializers.ListField(
        child=serializers.CharField(max_length=200_000, allow_blank=True),
        required=False,
        default=list,
        max_length=200,
    )
    k = serializers.IntegerField(min_value=1, required=False, default=5)
    format = serializers.ChoiceField(choices=FORMATS, required=False, default="text")
    model_based = serializers.BooleanField(
        required=False, default=False, help_text="an LLM writes a search query (needs a token)"
    )
    corrections = serializers.BooleanField(
        required=False,
        default=True,
        help_text="serve readers' accepted corrections next to the steps they correct",
    )

    def validate_k(self, value: int) -> int:
        if value > settings.TRAJHUB_RETRIEVE_MAX_K:
            raise serializers.ValidationError(f"k is at most {settings.TRAJHUB_RETRIEVE_MAX_K}")
        return value

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields)
        if unknown:
            raise serializers.ValidationError({sorted(unknown)[0]: "unknown field"})
        return attrs


class RetrievedCorrectionSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="the correction's public id")
    at = serializers.IntegerField(help_text="index in `steps` of the step it corrects")
    step = serializers.IntegerField(help_text="that step's number on the trajectory's page")
    mode = serializers.ChoiceField(
        choices=["message", "action"],
        help_text="message: what the agent should have done, in words; action: the step's "
        "action as it should have been",
    )
    text = serializers.CharField(help_text="redacted as the public pages show it")


class RetrievedExampleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    instruction = serializers.CharField()
    trajectory_id = serializers.CharField()
    url = serializers.URLField()
    window = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2)
    score = serializers.FloatField()
    retriever = serializers.ChoiceField(
        choices=["instruction_bm25", "observation_bm25", "dense", "model"]
    )
    steps = serializers.ListField(child=serializers.DictField())
    corrections = RetrievedCorrectionSerializer(many=True)


class RetrieveOutputSerializer(serializers.Serializer):
    examples = RetrievedExampleSerializer(many=True)
    prompt = serializers.CharField()
