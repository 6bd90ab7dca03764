"""Parsers for bodies that a view reads itself (apps.core.http.read_request_body)."""

from __future__ import annotations

from rest_framework.parsers import BaseParser


class RawBodyParser(BaseParser):
    """Any body, read by the view itself (read_request_body) so that the size limits apply
    while reading.

    Parsing reads nothing and gives no data: the session CSRF check asks DRF for `request.POST`
    before the view runs, and a parser that refused there turned every JSON post of a signed-in
    browser into a 400.
    """

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return {}


class RawJsonParser(RawBodyParser):
    """The same, declared as JSON for the schema and content negotiation."""

    media_type = "application/json"
