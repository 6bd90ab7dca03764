"""The trajectory output serializer builds its answer directly (issue 24: DRF's generic path
was most of a list page's time): the same values as DRF's own field machinery gives, for the
owner and for visitors (redacted), with and without dates, tokens and cost."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rest_framework import serializers
from rest_framework.test import APIRequestFactory

from apps.trajectories.api.serializers import (
    TrajectoryDetailOutputSerializer,
    TrajectoryOutputSerializer,
)
from apps.trajectories.api.views import _serializer_context
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.redactions import with_redaction_index
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


def _generic(serializer: serializers.ModelSerializer, instance: Trajectory) -> dict:
    return dict(serializers.ModelSerializer.to_representation(serializer, instance))


def test_the_direct_answer_is_what_drf_gives(owner):
    plain = make_trajectory(owner=owner, task="list the files")
    secret = make_trajectory(
        owner=owner, task="mail jane.doe@example-mail.com", redactions={"jane": "<NAME_1>"}
    )
    Trajectory.objects.filter(pk=plain.pk).update(
        total_tokens=1234,
        total_cost=0.5,
        started_at=datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        title="jane's run",
    )
    Trajectory.objects.filter(pk=secret.pk).update(title="for jane", agent="jane-bot")
    factory = APIRequestFactory()
    from rest_framework.request import Request

    for user in (None, owner):
        request = factory.get("/api/v1/trajectories")
        request.user = user
        context = _serializer_context(Request(request))
        for row in with_redaction_index(Trajectory.objects.filter(pk__in=[plain.pk, secret.pk])):
            for serializer_class in (TrajectoryOutputSerializer, TrajectoryDetailOutputSerializer):
                serializer = serializer_class(row, context=context)
                direct = serializer.data
                assert dict(direct) == _generic(serializer, row)
                assert list(direct) == list(serializer_class.Meta.fields)
        if user is None:
            shown = TrajectoryOutputSerializer(
                with_redaction_index(Trajectory.objects.filter(pk=secret.pk)).get(),
                context=context,
            ).data
            assert "jane" not in str(shown) and "<NAME_1>" in shown["title"]
