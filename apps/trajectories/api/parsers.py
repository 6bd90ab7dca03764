"""The one JSON reader of the API: DRF's JSONParser with the upload's nesting guard.

DRF's own JSONParser hands the body to `json.load`, whose recursion a few thousand levels deep
raises RecursionError, a 500. This parser decodes with orjson (which stops at 1024 levels) and
then checks the nesting against TRAJHUB_MAX_JSON_DEPTH with the importers' walk, the guard the
share endpoint applies, so every JSON body gets one answer: a 400 naming the limit.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from apps.trajectories.importers import FormatError, Limits, check_limits


def depth_message() -> str:
    return f"JSON nested deeper than {settings.TRAJHUB_MAX_JSON_DEPTH} levels"


class DepthCheckedJSONParser(JSONParser):
    """application/json bodies, refused with a 400 past TRAJHUB_MAX_JSON_DEPTH levels."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        data = stream.read() if stream is not None else b""
        if isinstance(data, str):
            data = data.encode()
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            text = str(exc).lower()
            if "recursion" in text or "depth limit" in text:
                raise ParseError(depth_message()) from None
            raise ParseError(f"JSON parse error - {exc}") from None
        try:
            check_limits(
                value,
                Limits(
                    max_depth=settings.TRAJHUB_MAX_JSON_DEPTH,
                    max_field_bytes=settings.TRAJHUB_MAX_FIELD_BYTES,
                ),
            )
        except FormatError as exc:
            raise ParseError(exc.message) from None
        return value
