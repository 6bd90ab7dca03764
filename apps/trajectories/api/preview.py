"""POST /api/v1/trajectories/preview: what the importers make of a file, without storing anything.

The upload page calls it before the person shares, to show the detected format, the number of
trajectories and events, and every error in plain words. Same body and field limits as the share
API; it writes nothing and logs nothing of the content.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from apps.trajectories.api.errors import ApiError, PayloadTooLarge
from apps.trajectories.importers import FORMATS, parse
from apps.trajectories.services import ingest_limits

MAX_LISTED = 100  # items and errors listed one by one; the counts always cover everything


class PreviewThrottle(SimpleRateThrottle):
    """Parsing costs CPU: bound it per client address (signed in or not)."""

    scope = "trajectory_preview"
    rate = "300/hour"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class _RawParser(JSONParser):
    """Keep the body as bytes: the importers decode it themselves (and JSON Lines too)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class TrajectoryPreviewView(APIView):
    parser_classes = [MultiPartParser, _RawParser]
    throttle_classes = [PreviewThrottle]

    @extend_schema(
        summary="Preview an upload without storing it",
        description=(
            "Runs format detection and import on a file (multipart field `file`, or the raw body) "
            "and answers with the format, the number of trajectories and events, and the errors. "
            "Nothing is stored."
        ),
        request={
            "multipart/form-data": inline_serializer(
                "PreviewUpload", {"file": serializers.FileField()}
            )
        },
        responses={
            200: inline_serializer(
                "Preview",
                {
                    "format": serializers.CharField(),
                    "format_label": serializers.CharField(),
                    "trajectories": serializers.IntegerField(),
                    "events": serializers.IntegerField(),
                    "items": serializers.ListField(child=serializers.DictField()),
                    "errors": serializers.ListField(child=serializers.DictField()),
                },
            ),
            400: OpenApiResponse(description="Not a trajectory: {error: {message, where}}"),
            413: OpenApiResponse(description="Over the size limit"),
        },
    )
    def post(self, request: Request) -> Response:
        limit = settings.TRAJHUB_MAX_BODY_BYTES
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        # Refuse before reading: the multipart envelope adds a little, not megabytes.
        if declared > limit + 64 * 1024:
            raise _too_large(declared, limit)
        upload = request.FILES.get("file")
        if upload is not None:
            if upload.size > limit:
                raise _too_large(upload.size, limit)
            data = upload.read()
        elif request.content_type and request.content_type.startswith("multipart/"):
            raise ApiError("send the file in the multipart field 'file'", "file")
        else:
            data = request.data if isinstance(request.data, bytes) else b""
            if len(data) > limit:
                raise _too_large(len(data), limit)
        format_name = request.query_params.get("format") or None
        # A FormatError (nothing readable) becomes the API's 400 {"error": {message, where}}.
        result = parse(data, format=format_name, limits=ingest_limits())
        module = FORMATS.get(result.format)
        trajectories = result.trajectories
        items = [
            {
                "where": item.where,
                "title": item.trajectory.title,
                "agent": item.trajectory.agent,
                "model": item.trajectory.model,
                "events": len(item.trajectory.events),
            }
            for item in result.items
            if item.trajectory is not None
        ]
        errors = [
            {"where": item.error.where, "message": item.error.message}
            for item in result.errors
            if item.error is not None
        ]
        return Response(
            {
                "format": result.format,
                "format_label": getattr(module, "LABEL", result.format),
                "trajectories": len(trajectories),
                "events": sum(len(trajectory.events) for trajectory in trajectories),
                "items": items[:MAX_LISTED],
                "items_truncated": max(0, len(items) - MAX_LISTED),
                "errors": errors[:MAX_LISTED],
                "errors_truncated": max(0, len(errors) - MAX_LISTED),
            }
        )


def _too_large(size: int, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the file is {size:,} bytes, over the limit of {limit:,}", "file")
