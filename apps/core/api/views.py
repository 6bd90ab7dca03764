"""The base view of every app's API."""

from __future__ import annotations

from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from apps.core.api.negotiation import AlwaysJson


class JsonApiView(APIView):
    """Every answer of this API is JSON (errors included), whatever the Accept header asks."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = AlwaysJson
