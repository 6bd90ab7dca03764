"""GET /api/v1/stats: the numbers of the /stats/ page, over public trajectories only."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.views import JsonApiView
from apps.stats.first_wrong import first_wrong_histogram
from apps.stats.selectors import collection_stats


class StatsView(JsonApiView):
    @extend_schema(
        operation_id="stats",
        summary="The public collection in numbers: per week, by agent, model, format and "
        "polarity; length and duration distributions; tokens and cost; releases; where "
        "readers mark the first wrong step (`first_wrong_at`: ten bars of the run's length, "
        "each with the browse page it counts)",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        return Response({**collection_stats(), "first_wrong_at": first_wrong_histogram()})
