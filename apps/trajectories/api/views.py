"""The trajectory REST API (/api/v1/): list and share, one trajectory, its events (downloads and
images: files.py). Thin: validate input, call services/selectors, shape output."""

from __future__ import annotations

from typing import IO, Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import ERRORS, ApiError, ErrorOutputSerializer, UnsupportedMediaType
from apps.core.api.parsers import RawJsonParser
from apps.core.api.views import JsonApiView
from apps.core.http import (
    BodyError,
    check_declared_length,
    client_ip,
    maybe_gunzip,
    read_request_body_file,
)
from apps.trajectories import selectors, services
from apps.trajectories.api.access import password_holder, request_user
from apps.trajectories.api.pagination import EventCursorPagination, TrajectoryCursorPagination
from apps.trajectories.api.serializers import (
    EventOutputSerializer,
    IngestOutputSerializer,
    ShareOptionsInputSerializer,
    ShareUploadSerializer,
    StoredTrajectoryOutputSerializer,
    TrajectoryDetailOutputSerializer,
    TrajectoryOutputSerializer,
    TrajectoryUpdateInputSerializer,
    page_of,
)
from apps.trajectories.filters import DEFAULT_ORDERING, ORDERINGS, TrajectoryFilter
from apps.trajectories.importers import FormatError
from apps.trajectories.models import ReviewState, Visibility
from apps.trajectories.selectors.list_rows import list_rows, list_values
from apps.trajectories.selectors.redactions import with_redaction_index

# A zip archive as the body: an Inspect .eval log, a Claude Code session folder.
ZIP_TYPES = {"application/zip", "application/x-zip-compressed"}
JSON_TYPES = {
    "application/json",
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
    "application/jsonlines",
    "application/json-seq",
}
FILE_FIELD = "file"


def _body_error(exc: BodyError) -> ApiError:
    return ApiError(exc.message, exc.where, status_code=exc.status)


def _serializer_context(request: Request, **extra: Any) -> dict[str, Any]:
    user = request.user
    return {
        "request": request,
        "can_manage": lambda trajectory: selectors.can_manage(trajectory, user),
        **extra,
    }


# The list's query parameters: the shared FilterSet's, the pagination's and `owner`; with
# owner=me also the states only an owner may filter by.
LIST_PARAMETERS = {*TrajectoryFilter.base_filters, "owner", "cursor", "limit"}
OWN_FILTERS = {"visibility": list(Visibility.values), "review_state": list(ReviewState.values)}


def refuse_unknown_parameters(request: Request, known: set[str]) -> None:
    """A 400 naming the query parameters an endpoint does not take (a misspelt `page_size` or a
    filter it lacks would otherwise be ignored, and the answer look like a match). Pages keep
    ignoring them: a link with a tracking parameter still opens."""
    unknown = sorted(set(request.query_params) - known - {"format"})
    if unknown:
        raise ApiError(
            f"unknown query parameter{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}; "
            f"this endpoint takes {', '.join(sorted(known))}",
            unknown[0],
        )


class TrajectoryListView(JsonApiView):
    """GET: public trajectories (or ?owner=me: the caller's own). POST: share trajectories."""

    parser_classes = [RawJsonParser, MultiPartParser]
    ordering_key = DEFAULT_ORDERING

    @extend_schema(
        operation_id="trajectories_list",
        summary="List public trajectories",
        description=(
            "Public, approved trajectories, newest first (with `q`: the best match first), "
            "with cursor pagination. "
            "`owner=me` lists the caller's own trajectories of every visibility and review state."
        ),
        parameters=[
            OpenApiParameter("owner", str, enum=["me"], description="Only the caller's own."),
            OpenApiParameter(
                "visibility",
                str,
                enum=list(Visibility.values),
                description="With owner=me only: the caller's own of this visibility.",
            ),
            OpenApiParameter(
                "review_state",
                str,
                enum=list(ReviewState.values),
                description="With owner=me only: the caller's own in this review state.",
            ),
            OpenApiParameter("q", str, description="Full-text search."),
            OpenApiParameter("agent", str),
            OpenApiParameter("model", str),
            OpenApiParameter("polarity", str, enum=["positive", "negative", "none"]),
            OpenApiParameter("source_format", str),
            OpenApiParameter("created_after", OpenApiTypes.DATETIME),
            OpenApiParameter("created_before", OpenApiTypes.DATETIME),
            OpenApiParameter(
                "has_corrections",
                str,
                enum=["1", "0"],
                description="1: readers wrote corrections anyone may read; 0: none.",
            ),
            OpenApiParameter(
                "flagged",
                str,
                enum=["1", "0"],
                description="1: readers marked a first wrong step; 0: none did.",
            ),
            OpenApiParameter(
                "flagged_at",
                int,
                enum=list(range(10)),
                description="A first-wrong mark in this tenth of the steps (3: 30–40 %).",
            ),
            OpenApiParameter(
                "ordering",
                str,
                enum=list(ORDERINGS),
                description=(
                    "`relevance` (the default with `q`: title and task words weigh more than "
                    "step text), `-created` (the default without), `created`, `-stars`, "
                    "`-events`, `events`."
                ),
            ),
            OpenApiParameter("cursor", str),
            OpenApiParameter("limit", int, description="Page size (at most 200)."),
        ],
        responses={200: page_of("TrajectoryPage", TrajectoryOutputSerializer()), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        owner = request.query_params.get("owner", "")
        refuse_unknown_parameters(request, LIST_PARAMETERS | ({*OWN_FILTERS} if owner else set()))
        if owner:
            if owner != "me":
                raise ApiError("owner accepts only 'me'", "owner")
            user = request_user(request)
            if user is None:
                raise ApiError("sign in or send an API token to list your own", "owner", 401)
            queryset = selectors.trajectory_list_owned(user)
            for name, choices in OWN_FILTERS.items():
                value = request.query_params.get(name)
                if value is None:
                    continue
                if value not in choices:
                    raise ApiError(f"{name} is one of: {', '.join(choices)}", name)
                queryset = queryset.filter(**{name: value})
        else:
            queryset = selectors.trajectory_list_public()
        filterset = TrajectoryFilter(
            request.query_params, queryset=with_redaction_index(queryset), request=request
        )
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        self.ordering_key = filterset.ordering_key
        paginator = TrajectoryCursorPagination()
        # Only the columns the list shows, as values: no model instances, no JSON column
        # decoded but the redaction index (issue 24).
        page = paginator.paginate_queryset(list_values(filterset.qs), request, view=self)
        data = TrajectoryOutputSerializer(
            list_rows(page), many=True, context=_serializer_context(request)
        ).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="trajectories_create",
        summary="Share trajectories",
        description=(
            "Send a trajectory file in any supported format, as the JSON body (options as query "
            "parameters) or as a multipart upload (`file` plus the options as form fields). "
            "`Content-Encoding: gzip` is accepted, and so are zip archives (an Inspect `.eval` "
            "log, a Claude Code session folder, or one trajectory file zipped), within the same "
            "decompressed-size limit. Each trajectory in the file is stored or "
            "reported: 201 if all were stored, 207 if some were, 400 if none. Anonymous shares "
            "get a deletion password, shown only in this answer."
        ),
        parameters=[
            OpenApiParameter(name, str, description="With a JSON body: " + help_text)
            for name, help_text in (
                ("visibility", "private (default) or public"),
                ("polarity", "positive, negative or none"),
                ("feedback_text", "what went well or badly"),
                (
                    "session_id",
                    "the client's session id (kept only as an HMAC, never shown): a later share "
                    "with it continues the same trajectory, from the same account or, "
                    "anonymously, with the same email",
                ),
                ("title", "title"),
                ("license_agreed", "true to agree to the site's licence (needed for public)"),
                ("format", "force a format instead of detecting it"),
                ("email", "anonymous shares: a contact address, never shown"),
            )
        ],
        request={
            "application/json": OpenApiTypes.ANY,
            "multipart/form-data": ShareUploadSerializer,
        },
        responses={
            201: IngestOutputSerializer,
            207: IngestOutputSerializer,
            400: ErrorOutputSerializer,
            413: ErrorOutputSerializer,
            415: ErrorOutputSerializer,
            429: ErrorOutputSerializer,
        },
        examples=[
            OpenApiExample(
                "OpenHands event array",
                value=[
                    {"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}},
                ],
                request_only=True,
                media_type="application/json",
            )
        ],
    )
    def post(self, request: Request) -> Response:
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        data: bytes | IO[bytes]
        try:
            if content_type == "multipart/form-data":
                data, options_data, filename, file_type = self._read_multipart(request)
            elif (
                content_type in JSON_TYPES
                or content_type in ZIP_TYPES
                or content_type.endswith("+json")
            ):
                # To a temporary file when big: a share payload is read from it as a stream.
                data = read_request_body_file(request._request)
                options_data = request.query_params
                filename, file_type = request.query_params.get("filename", ""), content_type
            else:
                raise UnsupportedMediaType(
                    f"Content-Type '{content_type or '(none)'}' is not accepted: send the file as "
                    "application/json (or JSON Lines), application/zip, or as multipart/form-data in a 'file' "
                    "field",
                    "Content-Type",
                )
        except BodyError as exc:
            raise _body_error(exc) from None

        options_in = ShareOptionsInputSerializer(data=_plain(options_data))
        options_in.is_valid(raise_exception=True)
        values = options_in.validated_data
        options = services.ShareOptions(
            visibility=values["visibility"],
            polarity=values.get("polarity", ""),
            feedback_text=values.get("feedback_text", ""),
            session_id=values.get("session_id", ""),
            title=values.get("title", ""),
            license_agreed=values.get("license_agreed", False),
            email=values.get("email", ""),
            format=values.get("format") or None,
            filename=filename,
            content_type=file_type,
            client_ip=client_ip(request),
        )
        try:
            result = services.trajectory_ingest(
                data=data, user=request_user(request), options=options
            )
        except FormatError as exc:
            # Whole-body problems (not JSON, empty, unknown format) point at the body.
            raise ApiError(exc.message, exc.where or "body", exc.status) from None
        del data
        body = {
            "trajectories": StoredTrajectoryOutputSerializer(
                result.stored, many=True, context=_serializer_context(request)
            ).data,
            "errors": result.errors,
            # Events left out of stored trajectories (not events at all), by index.
            "warnings": result.warnings,
        }
        if not result.stored:
            first = result.errors[0] if result.errors else {"where": "", "message": "no trajectory"}
            first = {"where": first.get("where") or "body", "message": first["message"]}
            message = (
                first["message"]
                if len(result.errors) == 1
                else (
                    f"none of the {len(result.errors)} trajectories could be stored; first: "
                    f"{first['message']}"
                )
            )
            body["error"] = {"message": message, "where": first["where"]}
            return Response(body, status=400)
        return Response(body, status=207 if result.errors else 201)

    def _read_multipart(self, request: Request) -> tuple[bytes, Any, str, str]:
        # Refuse an announced oversized body before Django's multipart parser reads any of it.
        check_declared_length(request._request)
        upload = request.FILES.get(FILE_FIELD)
        if upload is None:
            raise ApiError(f"the upload has no '{FILE_FIELD}' field", FILE_FIELD)
        if upload.size is not None and upload.size > settings.TRAJHUB_MAX_BODY_BYTES:
            raise BodyError("the file is over the size limit", status=413, where=FILE_FIELD)
        data = maybe_gunzip(upload.read())
        return data, request.data, upload.name or "", upload.content_type or ""


def _plain(values: Any) -> dict[str, Any]:
    """First value of each key (QueryDict), without the file field."""
    if hasattr(values, "getlist"):
        return {key: values.get(key) for key in values.keys() if key != FILE_FIELD}
    return {key: value for key, value in dict(values).items() if key != FILE_FIELD}


class TrajectoryDetailView(JsonApiView):
    """GET one trajectory; PATCH (owner); DELETE (owner, staff, or the deletion password)."""

    @extend_schema(
        operation_id="trajectories_retrieve",
        summary="A trajectory",
        responses={200: TrajectoryDetailOutputSerializer, 404: ErrorOutputSerializer},
    )
    def get(self, request: Request, share_id: str) -> Response:
        # The serializer shows the trajectory's own strings: its own redactions suffice.
        trajectory = selectors.trajectory_get_visible(share_id, request_user(request), indexed=True)
        return Response(
            TrajectoryDetailOutputSerializer(trajectory, context=_serializer_context(request)).data
        )

    @extend_schema(
        operation_id="trajectories_update",
        summary="Change a trajectory (owner)",
        request=TrajectoryUpdateInputSerializer,
        responses={200: TrajectoryOutputSerializer, **ERRORS},
    )
    def patch(self, request: Request, share_id: str) -> Response:
        user = request_user(request)
        trajectory = selectors.trajectory_get_visible(share_id, user)
        if not selectors.is_owner(trajectory, user):
            raise ApiError("only the owner can change this trajectory", status_code=403)
        if not isinstance(request.data, dict):
            raise ApiError("send a JSON object of the fields to change", "body")
        changes = TrajectoryUpdateInputSerializer(data=request.data)
        changes.is_valid(raise_exception=True)
        trajectory = services.trajectory_update(trajectory=trajectory, **changes.validated_data)
        return Response(
            TrajectoryOutputSerializer(trajectory, context=_serializer_context(request)).data
        )

    @extend_schema(
        operation_id="trajectories_destroy",
        summary="Delete a trajectory",
        description=(
            "The owner or staff, or anyone sending the deletion password of an anonymous share "
            "in the `X-Deletion-Password` header. A tombstone (id and date) stays. A wrong "
            "password answers 404, as an unknown id does; wrong passwords from one address "
            "(here and on the site's unlock page together) are limited: 429 with Retry-After."
        ),
        parameters=[
            OpenApiParameter(
                "X-Deletion-Password", str, location=OpenApiParameter.HEADER, required=False
            )
        ],
        responses={204: None, **ERRORS},
    )
    def delete(self, request: Request, share_id: str) -> Response:
        user = request_user(request)
        found = password_holder(request, share_id)
        if found is not None:
            services.trajectory_delete(trajectory=found, reason="password")
            return Response(status=204)
        trajectory = selectors.trajectory_get_visible(share_id, user)
        if selectors.is_owner(trajectory, user):
            reason = "owner"
        elif selectors.can_hard_delete(user):
            reason = "staff"
        else:
            raise ApiError(
                "only the owner or staff can delete this trajectory (or send its deletion "
                "password in X-Deletion-Password)",
                status_code=403,
            )
        services.trajectory_delete(trajectory=trajectory, reason=reason, actor=user)
        return Response(status=204)


class TrajectoryEventsView(JsonApiView):
    """The events of a trajectory, in order, paginated; redacted unless owner or moderator."""

    @extend_schema(
        operation_id="trajectories_events",
        summary="Events of a trajectory",
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        responses={200: page_of("EventPage", EventOutputSerializer()), **ERRORS},
    )
    def get(self, request: Request, share_id: str) -> Response:
        refuse_unknown_parameters(request, {"cursor", "limit"})
        user = request_user(request)
        trajectory = selectors.trajectory_get_visible(share_id, user, indexed=True)
        paginator = EventCursorPagination()
        page = paginator.paginate_queryset(selectors.event_queryset(trajectory), request, view=self)
        # The redactions of this page's events, not the whole map.
        redact = selectors.redactor_for(trajectory, user, shown=page)
        views = [selectors.event_view(event, redact) for event in page]
        return paginator.get_paginated_response(EventOutputSerializer(views, many=True).data)
