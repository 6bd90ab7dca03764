"""Reports and takedown requests over the API (/api/v1/trajectories/<id>/reports and
/takedowns): the same services as the Report and Takedown forms of the site
(services/reports.py, services/takedowns.py), so the same rate limit per client address, the
same holding after enough distinct reporters, the same emailed confirmation of a takedown.
Anonymous callers are welcome.

Only a trajectory in `public()` can be reported or taken down. One the caller cannot see at all
answers the same 404 as an unknown id (so private ids do not leak); one the caller can see but
that is not public (their own private one, or a held one a moderator looks at) answers 409.

The services' refusals reach the API's one error handler: a rate limit (core.ratelimit) is a 429
whose Retry-After is the time its window has left; a ModerationError, registered from
ModerationConfig.ready(), a 400 that says why.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import ApiError, ErrorOutputSerializer
from apps.core.api.views import JsonApiView
from apps.core.http import client_ip
from apps.moderation.api.serializers import (
    ReportInputSerializer,
    ReportOutputSerializer,
    TakedownInputSerializer,
    TakedownOutputSerializer,
)
from apps.moderation.services import reports, takedowns
from apps.trajectories.api.parsers import DepthCheckedJSONParser
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors import trajectory_get_visible

ERRORS = {
    400: ErrorOutputSerializer,
    401: ErrorOutputSerializer,
    403: ErrorOutputSerializer,  # a signed-in browser session without its CSRF token
    404: OpenApiResponse(
        ErrorOutputSerializer, description="No such trajectory, or not one the caller may see."
    ),
    409: OpenApiResponse(
        ErrorOutputSerializer,
        description="The caller sees it, but it is not public: only public ones are reported.",
    ),
    415: ErrorOutputSerializer,
    429: OpenApiResponse(
        ErrorOutputSerializer,
        description="Too many reports and requests from this address in the last hour "
        "(TRAJHUB_REPORTS_PER_HOUR); Retry-After says when to try again.",
    ),
}


def _user(request: Request):
    return request.user if request.user and request.user.is_authenticated else None


def _public_trajectory(share_id: str, user) -> Trajectory:
    trajectory = trajectory_get_visible(share_id, user)  # Http404 for the unseen
    if not Trajectory.objects.public().filter(pk=trajectory.pk).exists():
        raise ApiError(
            "only public trajectories can be reported or taken down; this one is "
            f"{trajectory.visibility}, {trajectory.review_state}",
            status_code=409,
        )
    return trajectory


class TrajectoryReportView(JsonApiView):
    """POST: report a public trajectory (anonymous allowed, rate limited)."""

    parser_classes = [DepthCheckedJSONParser]

    @extend_schema(
        operation_id="trajectories_report",
        summary="Report a public trajectory",
        description=(
            "What the Report button of a trajectory's page does: the report goes to the "
            "moderators' queue; after enough reports from distinct accounts or addresses within "
            "a window the trajectory is held until a moderator decides. Reporting again while "
            "your report is open adds nothing. Anonymous callers are welcome."
        ),
        request=ReportInputSerializer,
        responses={201: ReportOutputSerializer, **ERRORS},
    )
    def post(self, request: Request, share_id: str) -> Response:
        user = _user(request)
        trajectory = _public_trajectory(share_id, user)
        data = ReportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = reports.report_submit(
            trajectory=trajectory, user=user, client_ip=client_ip(request), **data.validated_data
        )
        body = {
            "trajectory": trajectory.share_id,
            "reason": report.reason,
            "created_at": report.created_at,
            "message": "Thank you: a moderator will look at it.",
        }
        return Response(ReportOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class TrajectoryTakedownView(JsonApiView):
    """POST: ask for a public trajectory to be taken down (confirmed by an emailed link)."""

    parser_classes = [DepthCheckedJSONParser]

    @extend_schema(
        operation_id="trajectories_takedown",
        summary="Request a takedown of a public trajectory",
        description=(
            'For example "my personal data is in this trajectory". A link to confirm the '
            "request is mailed to `email`; once confirmed it goes to the moderators' queue, and "
            "the outcome is mailed back. Anonymous callers are welcome."
        ),
        request=TakedownInputSerializer,
        responses={202: TakedownOutputSerializer, **ERRORS},
    )
    def post(self, request: Request, share_id: str) -> Response:
        trajectory = _public_trajectory(share_id, _user(request))
        data = TakedownInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        takedown = takedowns.takedown_request(
            trajectory=trajectory, client_ip=client_ip(request), **data.validated_data
        )
        body = {
            "trajectory": trajectory.share_id,
            "state": takedown.state,
            "message": "We sent a link to confirm the request to that address; follow it and "
            "the request goes to the moderators.",
        }
        return Response(TakedownOutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)
