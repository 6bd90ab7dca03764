"""GET /api/v1/releases and /api/v1/releases/<version>: published releases only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import ApiError, ErrorOutputSerializer
from apps.core.api.views import JsonApiView
from apps.datasets import selectors
from apps.datasets.api.serializers import ReleaseDetailOutputSerializer, ReleaseOutputSerializer


class ReleaseListView(JsonApiView):
    @extend_schema(
        operation_id="releases_list",
        summary="Published dataset releases, newest first",
        # The answer is {"results": [...]}, not a bare list.
        responses={
            200: inline_serializer("ReleaseList", {"results": ReleaseOutputSerializer(many=True)}),
            401: ErrorOutputSerializer,
        },
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
        responses={
            200: ReleaseDetailOutputSerializer,
            401: ErrorOutputSerializer,
            404: ErrorOutputSerializer,
        },
    )
    def get(self, request: Request, version: int) -> Response:
        release = selectors.release_get_published(version)
        if release is None:
            raise ApiError(f"no published release {version}", "version", status_code=404)
        context = {"newest": selectors.release_latest()}
        return Response(ReleaseDetailOutputSerializer(release, context=context).data)
