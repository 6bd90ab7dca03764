"""POST /api/v1/retrieve: demonstrations for in-context learning. Thin: validate, ask the
retrieval selector, answer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts.authentication import ApiTokenAuthentication
from apps.core.api.errors import ERRORS, ApiError
from apps.core.api.views import JsonApiView
from apps.core.ratelimit import hashed_key
from apps.learn.api.serializers import RetrieveInputSerializer, RetrieveOutputSerializer
from apps.learn.llm import NOT_CONFIGURED
from apps.learn.retrieval.search import ModelQueryFailed, Query, retrieve
from apps.learn.services import llm_config
from apps.trajectories.api.parsers import DepthCheckedJSONParser


class RetrieveThrottle(SimpleRateThrottle):
    """Per account when signed in, per client address otherwise (TRAJHUB_RETRIEVE_RATE)."""

    scope = "retrieve"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = hashed_key(self.scope, self.get_ident(request))  # no client address in a key
        return self.cache_format % {"scope": self.scope, "ident": ident}


class RetrieveView(JsonApiView):
    parser_classes = [DepthCheckedJSONParser]
    throttle_classes = [RetrieveThrottle]

    @extend_schema(
        operation_id="retrieve",
        summary="Retrieve demonstrations for in-context learning",
        description=(
            "Examples synthesized from public trajectories that match an instruction (and the "
            "current observation), with a prompt block to paste into an agent's prompt. "
            "Anonymous callers are allowed (rate limited); `model_based` needs an API token."
        ),
        request=RetrieveInputSerializer,
        responses={200: RetrieveOutputSerializer, 401: ERRORS[400], 429: ERRORS[400], **ERRORS},
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ApiError("the body must be a JSON object", "body")
        data = RetrieveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if values["model_based"]:
            if not isinstance(request.successful_authenticator, ApiTokenAuthentication):
                raise ApiError(
                    "model-based retrieval spends LLM tokens: send an API token "
                    "(Authorization: Token <secret>)",
                    "model_based",
                    status_code=401,
                )
            if not llm_config().configured:
                raise ApiError(NOT_CONFIGURED, "model_based", status_code=503)
        try:
            answer = retrieve(Query(**values))
        except ModelQueryFailed as error:
            raise ApiError(f"model-based retrieval failed: {error}", "model_based", 502) from None
        return Response(answer)
