"""GET /api/v1/releases and /api/v1/releases/<version>: published releases only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.datasets import selectors
from apps.datasets.api.serializers import ReleaseDetailOutputSerializer, ReleaseOutputSerializer
from apps.trajectories.api.errors import ApiError
from apps.trajectories.api.views import JsonApiView


class ReleaseListView(JsonApiView):
    @extend_schema(
        operation_id="releases_list",
        summary="Published dataset releases, newest first",
        responses=ReleaseOutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        releases = list(selectors.release_list_published().select_related("previous"))
        newest = releases[0] if releases else None
        data = ReleaseOutputSerializer(releases, many=True, context={"newest": newest}).data
        return Response({"results": data})


class ReleaseDetailView(JsonApiView):
    @extend_schema(
        operation_id="releases_detail",
        summary="One release: card, files with sizes and checksums, ids added and removed",
        responses=ReleaseDetailOutputSerializer,
    )
    def get(self, request: Request, version: int) -> Response:
        release = selectors.release_get_published(version)
        if release is None:
            raise ApiError(f"no published release {version}", "version", status_code=404)
        context = {"newest": selectors.release_latest()}
        return Response(ReleaseDetailOutputSerializer(release, context=context).data)
