"""One error handler for the API: every error is JSON {"error": {"message", "where"}} with a 4xx.

Views raise ApiError (or DRF's exceptions, Http404, PermissionDenied, or an app's own error type
registered with `register_error`: trajectories registers the importers' FormatError and the
services' SharingRefused); this turns each into the same shape, so clients parse one thing.
ErrorOutputSerializer is that shape, for the OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from apps.core.ratelimit import RateLimited


class ApiError(exceptions.APIException):
    """An API error with a place: `where` names the field, event, line or header at fault."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "bad request"

    def __init__(
        self,
        message: str,
        where: str = "",
        status_code: int | None = None,
        *,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.where = where
        if status_code is not None:
            self.status_code = status_code
        self.retry_after = retry_after  # seconds, sent as Retry-After when known


class PayloadTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class UnsupportedMediaType(ApiError):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE


# Other apps' exception types, each with how it becomes an ApiError: registered from their
# AppConfig.ready(), so that this module imports no app.
_REGISTERED: dict[type[Exception], Callable[[Any], ApiError]] = {}


def register_error(exc_type: type[Exception], to_api_error: Callable[[Any], ApiError]) -> None:
    """Answer `exc_type` (and its subclasses) as the ApiError `to_api_error(exc)` gives."""
    _REGISTERED[exc_type] = to_api_error


# Every rate-limited action (apps/core/ratelimit.py) answers 429 with its Retry-After.
register_error(
    RateLimited,
    lambda exc: ApiError(exc.message, exc.where, exc.status_code, retry_after=exc.retry_after),
)


class ErrorDetailSerializer(serializers.Serializer):
    message = serializers.CharField()
    where = serializers.CharField(required=False)


class ErrorOutputSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


# The error answers an endpoint may give, for its schema (`responses={..., **ERRORS}`).
ERRORS = {
    400: ErrorOutputSerializer,
    # A token that is wrong or revoked, or a sign-in the endpoint needs.
    401: ErrorOutputSerializer,
    403: ErrorOutputSerializer,
    404: ErrorOutputSerializer,
    # Rate limits: Retry-After says when.
    429: ErrorOutputSerializer,
}


def error_body(message: str, where: str = "", **extra: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"message": message}
    if where:
        error["where"] = where
    error.update(extra)
    return {"error": error}


def _first_validation_error(detail: Any, prefix: str = "") -> tuple[str, str]:
    """The first message of a DRF ValidationError detail and the field it belongs to."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            field = "" if key == "non_field_errors" else str(key)
            where = f"{prefix}.{field}" if prefix and field else (field or prefix)
            return _first_validation_error(value, where)
    if isinstance(detail, list) and detail:
        return _first_validation_error(detail[0], prefix)
    return str(detail), prefix


def _status_and_body(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str]] | None:
    headers: dict[str, str] = {}
    for exc_type, to_api_error in _REGISTERED.items():
        if isinstance(exc, exc_type):
            exc = to_api_error(exc)
            break
    if isinstance(exc, ApiError):
        if exc.retry_after is not None:
            headers["Retry-After"] = str(exc.retry_after)
        return exc.status_code, error_body(exc.message, exc.where), headers
    if isinstance(exc, Http404):
        message = str(exc) if str(exc) else "not found"
        return 404, error_body(message), headers
    if isinstance(exc, PermissionDenied):
        return 403, error_body(str(exc) or "you may not do this"), headers
    if isinstance(exc, RequestDataTooBig):
        return 413, error_body("the request body is over the size limit"), headers
    if isinstance(exc, SuspiciousOperation):
        return 400, error_body("bad request"), headers
    if isinstance(exc, exceptions.ValidationError):
        message, where = _first_validation_error(exc.detail)
        return 400, error_body(message, where), headers
    if isinstance(exc, exceptions.APIException):
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))
        detail = exc.detail
        message = (
            str(detail)
            if not isinstance(detail, (dict, list))
            else _first_validation_error(detail)[0]
        )
        return exc.status_code, error_body(message), headers
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    handled = _status_and_body(exc)
    if handled is None:
        return None  # a real bug: Django's 500 handling (logged) takes over
    status_code, body, headers = handled
    return Response(body, status=status_code, headers=headers)
