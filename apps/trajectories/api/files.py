"""A trajectory's files through the API: the raw upload or an export (download), and the images
its events refer to."""

from __future__ import annotations

import re

from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request

from apps.core.api.errors import ERRORS, ApiError, ErrorOutputSerializer
from apps.core.api.views import JsonApiView
from apps.trajectories import selectors, services
from apps.trajectories.api.access import password_holder, request_user
from apps.trajectories.api.serializers import DownloadQuerySerializer
from apps.trajectories.image_rule import image_withheld, withheld_text
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.viewer import SAFE_IMAGE_TYPES, Access, trajectory_access

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class TrajectoryDownloadView(JsonApiView):
    """The raw upload (owner, moderators, and the holder of an anonymous share's password) or an
    export built from (redacted) events."""

    @extend_schema(
        operation_id="trajectories_download",
        summary="Download a trajectory",
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=["original", "openhands", "openai", "sharegpt", "atif", "adp"],
                description="original: the upload as sent (owner, moderators, password holder).",
            ),
            OpenApiParameter(
                "X-Deletion-Password",
                str,
                location=OpenApiParameter.HEADER,
                required=False,
                description="An anonymous share's password: opens it as its holder (the "
                "command-line client's `download --password`). Wrong passwords count in the "
                "same per-address limit as DELETE and the unlock page.",
            ),
        ],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY),
            # Past the wrong-password limit (services/passwords.py), with Retry-After.
            429: ErrorOutputSerializer,
            **ERRORS,
        },
    )
    def get(self, request: Request, share_id: str) -> HttpResponse:
        user = request_user(request)
        # Same access as the page: visible_to(user), plus the password holder of an anonymous
        # share who unlocked it in this browser session, or who sends its password (a script
        # has no session). A wrong password and an unknown id are the same 404.
        found = password_holder(request, share_id)
        if found is not None:
            access = Access(trajectory=found, is_owner=False, is_moderator=False, is_holder=True)
        else:
            access = trajectory_access(request, share_id)
        trajectory = access.trajectory
        query = DownloadQuerySerializer(
            data={"format": request.query_params.get("format")}
            if "format" in request.query_params
            else {}
        )
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["format"]
        if fmt == "original":
            if not access.can_download_original:
                raise ApiError(
                    "only the owner and moderators can download the original upload; "
                    "choose format=openhands, openai, sharegpt, atif or adp",
                    "format",
                    status_code=403,
                )
            content = services.raw_read(trajectory)
            name = _SAFE_NAME.sub("_", trajectory.raw_filename or "")[:100] or (
                f"{trajectory.share_id}.json"
            )
            if name.lower().endswith((".zip", ".eval")) and not content.startswith(b"PK"):
                # The raw copy of one sample of an Inspect .eval (or the file a zip held) is
                # JSON: named so, or Inspect would take it for a zip.
                name = name.rsplit(".", 1)[0] + ".json"
            content_type = (
                "application/json" if name.endswith(".json") else ("application/octet-stream")
            )
        else:
            content = _export(trajectory, user, fmt)
            name = f"{trajectory.share_id}.{fmt}.json"
            content_type = "application/json"
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = content_disposition_header(True, name)
        return response


def _export(trajectory: Trajectory, user, fmt: str) -> bytes:
    return selectors.trajectory_export(trajectory, user, fmt)


class TrajectoryImageView(JsonApiView):
    """An image of a trajectory (screenshots, plots), for those who may see the trajectory."""

    @extend_schema(
        operation_id="trajectories_image",
        summary="An image referenced by an event",
        responses={
            (200, "image/png"): OpenApiResponse(OpenApiTypes.BINARY),
            404: ErrorOutputSerializer,
            410: OpenApiResponse(
                ErrorOutputSerializer,
                description="A moderator removed this image (it showed a secret); only the "
                "owner and moderators still get it.",
            ),
            403: OpenApiResponse(
                ErrorOutputSerializer,
                description="Nobody has read this image for text yet (OCR is off or missing): "
                "only the owner and moderators get it until a moderator clears it.",
            ),
        },
    )
    def get(self, request: Request, share_id: str, sha256: str) -> HttpResponse:
        user = request_user(request)
        trajectory = selectors.trajectory_get_visible(share_id, user)
        image = selectors.image_of(trajectory, sha256)
        if image is None or image.content_type not in SAFE_IMAGE_TYPES:
            # Never anything a browser could run (SVG, HTML) from our origin.
            raise Http404("no such image in this trajectory")
        if image.dropped_at is not None and not selectors.can_manage(trajectory, user):
            raise ApiError("image removed by a moderator", "sha256", status_code=410)
        if image_withheld(image) and not selectors.can_manage(trajectory, user):
            raise ApiError(withheld_text(image), "sha256", status_code=403)
        response = HttpResponse(services.image_read(image), content_type=image.content_type)
        response["Cache-Control"] = "private, max-age=3600"
        return response
