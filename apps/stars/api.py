"""`/api/v1/trajectories/<id>/star`: GET whether you starred it and its count; PUT to star,
DELETE to take the star back (token or session; signed in only)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.views import JsonApiView
from apps.stars import selectors
from apps.stars.services import StarState, star_set
from apps.trajectories.models import Trajectory

_STATE = inline_serializer(
    "StarState", {"starred": serializers.BooleanField(), "stars": serializers.IntegerField()}
)
_ERRORS = {
    401: OpenApiResponse(description="Not signed in"),
    404: OpenApiResponse(description="No public trajectory with this id"),
    429: OpenApiResponse(description="Too many stars given or taken back in an hour"),
}


class TrajectoryStarView(JsonApiView):
    permission_classes = [IsAuthenticated]

    def _trajectory(self, share_id: str) -> Trajectory:
        return get_object_or_404(Trajectory.objects.public(), share_id=share_id)

    @staticmethod
    def _answer(state: StarState) -> Response:
        return Response({"starred": state.starred, "stars": state.stars})

    @extend_schema(summary="Whether you starred a trajectory", responses={200: _STATE, **_ERRORS})
    def get(self, request: Request, share_id: str) -> Response:
        trajectory = self._trajectory(share_id)
        starred = selectors.starred(request.user, trajectory)
        return self._answer(StarState(starred=starred, stars=trajectory.star_count))

    @extend_schema(summary="Star a trajectory", request=None, responses={200: _STATE, **_ERRORS})
    def put(self, request: Request, share_id: str) -> Response:
        trajectory = self._trajectory(share_id)
        return self._answer(star_set(user=request.user, trajectory=trajectory, starred=True))

    @extend_schema(summary="Take your star back", responses={200: _STATE, **_ERRORS})
    def delete(self, request: Request, share_id: str) -> Response:
        trajectory = self._trajectory(share_id)
        return self._answer(star_set(user=request.user, trajectory=trajectory, starred=False))
