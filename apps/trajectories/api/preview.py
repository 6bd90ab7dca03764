"""POST /api/v1/trajectories/preview: what the importers make of a file, without storing anything.

The upload page calls it before the person shares, to show the detected format, the number of
trajectories and events, and every error in plain words. Same body and field limits as the share
API; it writes nothing and logs nothing of the content.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from apps.core.api.errors import ApiError, PayloadTooLarge
from apps.core.api.negotiation import AlwaysJson
from apps.core.api.parsers import RawBodyParser
from apps.core.http import (
    BodyError,
    check_declared_length,
    maybe_gunzip,
    read_request_body,
)
from apps.core.ratelimit import hashed_key
from apps.trajectories import preview
from apps.trajectories.importers import FORMATS, parse
from apps.trajectories.services import ingest_limits

MAX_LISTED = 100  # items and errors listed one by one; the counts always cover everything


class PreviewThrottle(SimpleRateThrottle):
    """Parsing costs CPU: bound it per client address (signed in or not)."""

    scope = "trajectory_preview"
    rate = "300/hour"

    def get_cache_key(self, request, view):
        ident = hashed_key(self.scope, self.get_ident(request))  # no client address in a key
        return self.cache_format % {"scope": self.scope, "ident": ident}


class TrajectoryPreviewView(APIView):
    # Any other body is read by the view itself (read_request_body), within the limits.
    parser_classes = [MultiPartParser, RawBodyParser]
    throttle_classes = [PreviewThrottle]
    # JSON whatever is asked, as the rest of the API: `?format=` names an importer here, which
    # DRF's default negotiation would take for a renderer (and answer 404).
    renderer_classes = [JSONRenderer]
    content_negotiation_class = AlwaysJson

    @extend_schema(
        summary="Preview an upload without storing it",
        description=(
            "Runs format detection and import on a file (multipart field `file`, or the raw body) "
            "and answers with the format, the number of trajectories and events, and the errors. "
            "`format` (query) forces an importer instead of detecting one. Nothing is stored."
        ),
        parameters=[
            OpenApiParameter("format", str, enum=sorted(FORMATS), description="Force a format.")
        ],
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
        # The same reading as the share API: Content-Length checked first, gzip (a .gz file
        # or Content-Encoding: gzip) inflated within the decompressed-size limit.
        try:
            content_type = (request.content_type or "").split(";")[0].strip().lower()
            if content_type == "multipart/form-data":
                check_declared_length(request._request)
                upload = request.FILES.get("file")
                if upload is None:
                    raise ApiError("send the file in the multipart field 'file'", "file")
                limit = settings.TRAJHUB_MAX_BODY_BYTES
                if upload.size is not None and upload.size > limit:
                    raise PayloadTooLarge(
                        f"the file is {upload.size:,} bytes, over the limit of {limit:,}", "file"
                    )
                data = maybe_gunzip(upload.read())
            else:
                data = read_request_body(request._request)
        except BodyError as exc:
            raise ApiError(exc.message, exc.where, status_code=exc.status) from None
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
                # What the sharer should look at before storing it (trajectories/preview.py).
                "files": preview.files_included(item.trajectory),
                **preview.reports(item.trajectory),
            }
            for item in result.items[:MAX_LISTED]
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
                "items_truncated": max(0, len(trajectories) - len(items)),
                "errors": errors[:MAX_LISTED],
                "errors_truncated": max(0, len(errors) - MAX_LISTED),
            }
        )
