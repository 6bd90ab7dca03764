"""Cursor pagination that checks the cursors it is sent."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import FloatField
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from apps.core.api.errors import ApiError
from apps.core.dates import as_utc


class CheckedCursorPagination(CursorPagination):
    """Cursor pagination that refuses a cursor it did not give out with a 400 naming `cursor`.

    A cursor is base64 of `o=<offset>&r=<reverse>&p=<position>`, and DRF filters on the position
    as it comes (`num_events__lt="abc"` raises ValueError; a date with a +20:00 offset reaches
    PostgreSQL, which refuses it). The position is parsed with the ordering field here, and a
    date is normalised to UTC, before any query runs.
    """

    invalid_cursor_message = "the cursor is not one this API gave out; start again without it"

    def paginate_queryset(self, queryset, request, view=None):
        self._model = queryset.model
        page = super().paginate_queryset(queryset, request, view=view)
        # next/previous are built on base_url: the site's own address (TRAJHUB_SITE_URL), never
        # the request's Host, which a client can forge and which loses the port behind nginx.
        self.base_url = settings.SITE_URL + request.get_full_path()
        return page

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ApiError(self.invalid_cursor_message, "cursor") from None
        if cursor is None or cursor.position is None:
            return cursor
        name = self.ordering[0].lstrip("-")
        try:
            field = self._model._meta.get_field("id" if name == "pk" else name)
        except FieldDoesNotExist:
            # An annotation the queryset orders by (a search's relevance): a number.
            field = FloatField()
        try:
            position = field.to_python(cursor.position)
            if isinstance(position, datetime):
                position = as_utc(position)
        except (ValidationError, ValueError, OverflowError):
            raise ApiError(self.invalid_cursor_message, "cursor") from None
        if position is None:
            raise ApiError(self.invalid_cursor_message, "cursor")
        return cursor._replace(position=str(position))
