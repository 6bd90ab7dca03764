"""The step feedback API: GET / POST / DELETE /api/v1/trajectories/<id>/steps/<n>/feedback, the
trajectory's summary, reports on a note. Thin: access as the trajectory's download (the
account, or the X-Deletion-Password of an anonymous share), then the services and selectors."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import ERRORS, ApiError
from apps.core.api.views import JsonApiView
from apps.core.http import client_ip
from apps.feedback import moderating, selectors, services
from apps.feedback.api.serializers import (
    INPUT_FIELDS,
    FeedbackInputSerializer,
    NoteOutputSerializer,
    NoteReportInputSerializer,
    StepFeedbackOutputSerializer,
    SummaryOutputSerializer,
)
from apps.trajectories.api.access import PASSWORD_HEADER, password_holder, request_user
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.redactions import with_redaction_index
from apps.trajectories.selectors.viewer import trajectory_access

PASSWORD = OpenApiParameter(
    PASSWORD_HEADER,
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    description="An anonymous share's password: its holder counts as the owner.",
)


def _opened(request: Request, share_id: str) -> tuple[Trajectory, selectors.Reader]:
    """The trajectory the caller may see (else 404) and who they are to its feedback."""
    found = password_holder(request, share_id)
    if found is not None:
        trajectory = with_redaction_index(Trajectory.objects.filter(pk=found.pk)).get()
        return trajectory, selectors.reader_for(trajectory, None, is_holder=True)
    access = trajectory_access(request, share_id)
    return access.trajectory, selectors.reader_for(
        access.trajectory, request_user(request), is_holder=access.is_holder
    )


def _author(request: Request, reader: selectors.Reader) -> services.Author:
    return services.Author(
        user=reader.user, is_holder=reader.is_holder, client_ip=client_ip(request)
    )


def _step(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ApiError("the step must be a number, from 1", "step", status_code=404) from None


class StepFeedbackView(JsonApiView):
    """One step's feedback: read it (anyone who may see the trajectory), give it (signed in, or
    the share's password), take one's own back."""

    @extend_schema(
        operation_id="step_feedback_retrieve",
        summary="A step's feedback",
        description=(
            "Ratings for and against, first-wrong marks, corrections and comments of step `n` "
            "(as the page numbers it, from 1). Anonymous callers read the public feedback of a "
            "public trajectory; text is redacted, except the caller's own."
        ),
        parameters=[PASSWORD],
        responses={200: StepFeedbackOutputSerializer, **ERRORS},
    )
    def get(self, request: Request, share_id: str, step: str) -> Response:
        trajectory, reader = _opened(request, share_id)
        event = services.step_event(trajectory, _step(step))
        return Response(selectors.step_feedback(trajectory, event, reader).as_json())

    @extend_schema(
        operation_id="step_feedback_give",
        summary="Give feedback on a step",
        description=(
            "Signed in (token or session), or the anonymous sharer with the share's password. "
            "Any of `rating` (good | bad | null), `first_wrong` (true | false; agent steps), "
            "`correction` (agent steps; `mode` action: the step's action edited) and `comment`; "
            'a field left out keeps what was given, "" deletes a text. Giving again replaces. '
            "Corrections and comments are scanned first and may wait for a moderator "
            "(`state`: held). Rate limited per account and per address (429)."
        ),
        parameters=[PASSWORD],
        request=FeedbackInputSerializer,
        responses={200: StepFeedbackOutputSerializer, **ERRORS},
    )
    def post(self, request: Request, share_id: str, step: str) -> Response:
        trajectory, reader = _opened(request, share_id)
        if not reader.key:
            raise ApiError(
                "sign in (session or API token) to give feedback, or send the share's password",
                status_code=401,
            )
        if not isinstance(request.data, dict):
            raise ApiError("send a JSON object of the feedback fields", "body")
        unknown = sorted(set(request.data) - INPUT_FIELDS)
        if unknown:
            raise ApiError(
                f"unknown field {unknown[0]!r}; this endpoint takes "
                f"{', '.join(sorted(INPUT_FIELDS))}",
                unknown[0],
            )
        if not set(request.data) & (INPUT_FIELDS - {"mode"}):
            raise ApiError(
                "send at least one of rating, first_wrong, correction, comment, license_agreed",
                "body",
            )
        given = FeedbackInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = {
            name: given.validated_data[name]
            for name in ("rating", "first_wrong", "correction", "comment")
            if name in given.validated_data
        }
        author = _author(request, reader)
        if values:
            services.step_feedback_give(
                trajectory=trajectory,
                step=_step(step),
                author=author,
                mode=given.validated_data["mode"],
                **values,
            )
        if "license_agreed" in given.validated_data:
            services.feedback_licence_answer(
                trajectory=trajectory, author=author, agreed=given.validated_data["license_agreed"]
            )
        event = services.step_event(trajectory, _step(step))
        return Response(selectors.step_feedback(trajectory, event, reader).as_json())

    @extend_schema(
        operation_id="step_feedback_destroy",
        summary="Take back one's feedback on a step",
        parameters=[PASSWORD],
        responses={204: None, **ERRORS},
    )
    def delete(self, request: Request, share_id: str, step: str) -> Response:
        trajectory, reader = _opened(request, share_id)
        services.step_feedback_withdraw(
            trajectory=trajectory, step=_step(step), author=_author(request, reader)
        )
        return Response(status=204)


class TrajectoryFeedbackView(JsonApiView):
    @extend_schema(
        operation_id="trajectory_feedback_summary",
        summary="A trajectory's feedback, step by step",
        description="Per step with feedback: ratings, first-wrong marks, corrections, comments.",
        parameters=[PASSWORD],
        responses={200: SummaryOutputSerializer, **ERRORS},
    )
    def get(self, request: Request, share_id: str) -> Response:
        trajectory, reader = _opened(request, share_id)
        return Response(selectors.trajectory_summary(trajectory, reader))


class NoteReportView(JsonApiView):
    @extend_schema(
        operation_id="feedback_report",
        summary="Report a correction or comment",
        request=NoteReportInputSerializer,
        responses={202: NoteOutputSerializer, **ERRORS},
    )
    def post(self, request: Request, share_id: str, note_id: str) -> Response:
        trajectory, reader = _opened(request, share_id)
        note = selectors.note_for(trajectory, note_id, reader)
        if note is None:
            raise ApiError("no such correction or comment on this trajectory", status_code=404)
        given = NoteReportInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        moderating.note_report(
            note=note,
            reason=given.validated_data["reason"],
            text=given.validated_data["text"],
            user=reader.user,
            client_ip=client_ip(request),
        )
        return Response({"reported": True}, status=202)
