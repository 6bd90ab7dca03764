"""One error handler for the API: every error is JSON {"error": {"message", "where"}} with a 4xx.

Views raise ApiError (or DRF's exceptions, Http404, PermissionDenied, the importers' FormatError,
the services' SharingRefused); this turns each into the same shape, so clients parse one thing.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from apps.core.ratelimit import RateLimited
from apps.trajectories.importers import FormatError
from apps.trajectories.services import SharingRefused


class ApiError(exceptions.APIException):
    """An API error with a place: `where` names the field, event, line or header at fault."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "bad request"

    def __init__(self, message: str, where: str = "", status_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        if status_code is not None:
            self.status_code = status_code


class PayloadTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class UnsupportedMediaType(ApiError):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE


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
    if isinstance(exc, ApiError):
        return exc.status_code, error_body(exc.message, exc.where), headers
    if isinstance(exc, FormatError):
        return 400, error_body(exc.message, exc.where), headers
    if isinstance(exc, (SharingRefused, RateLimited)):
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
