"""Content negotiation for an API that answers only JSON."""

from __future__ import annotations

from rest_framework.negotiation import BaseContentNegotiation, DefaultContentNegotiation


class AlwaysJson(BaseContentNegotiation):
    """JSON whatever the Accept header says (a browser's text/html gets JSON, not a 406)."""

    def select_parser(self, request, parsers):
        return DefaultContentNegotiation().select_parser(request, parsers)

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
