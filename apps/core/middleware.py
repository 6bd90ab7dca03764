"""A strict Content-Security-Policy on every response: no inline script, images only from us; and
the request limits checked before any view runs."""

import tempfile

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self' https://github.com",
        "frame-ancestors 'none'",
    ]
)


# Swagger UI (served from our static files, its start-up script a separate file) sets styles
# inline on its elements; scripts stay 'self' only.
DOCS_POLICY = POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "TRAJHUB_CSP", POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        policy = DOCS_POLICY if request.path.startswith("/api/docs") else self.policy
        response.setdefault("Content-Security-Policy", policy)
        return response


# When a 429 names no time (allauth's sign-in limits, say), clients are told to wait this long.
DEFAULT_RETRY_AFTER_SECONDS = 60


class RequestLimitsMiddleware:
    """What no view should have to handle, settled before any of them (or the CSRF check) runs.

    - A query string over TRAJHUB_MAX_QUERY_BYTES is a 414 in the caller's shape (JSON, the
      OpenHands envelope, a page). Gunicorn's own request-line limit is lifted for this
      (docker/gunicorn.conf.py): its 414 is an HTML page that API clients cannot read.
    - A chunked body (Transfer-Encoding: chunked, no Content-Length) is read here, within the
      body limit, into a spooled file, and handed on with its Content-Length: Django reads a
      body without Content-Length as empty, so chunked shares were stored as nothing. Only
      servers that de-chunk the body say `wsgi.input_terminated` (gunicorn does; a server that
      does not would hand over the chunk framing).
    - Every 429 carries Retry-After.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from apps.core.views.errors import error_response

        query = request.META.get("QUERY_STRING", "")
        limit = settings.TRAJHUB_MAX_QUERY_BYTES
        if len(query) > limit:
            return error_response(
                request,
                414,
                f"the query string is {len(query):,} bytes, over the limit of {limit:,}; "
                "send long values in the body",
                "query",
                title="The address is too long",
            )
        spool = None
        if _is_chunked(request):
            try:
                spool = _read_chunked(request)
            except _MalformedBody:
                return error_response(
                    request,
                    400,
                    "the chunked request body is malformed or ended early",
                    "body",
                    title="The upload could not be read",
                )
            if spool is None:
                limit = settings.TRAJHUB_MAX_BODY_BYTES
                return error_response(
                    request,
                    413,
                    f"the request body is over the limit of {limit:,} bytes",
                    "body",
                    title="The upload is too large",
                )
        try:
            response = self.get_response(request)
        finally:
            if spool is not None:
                spool.close()
        if response.status_code == 429 and not response.has_header("Retry-After"):
            response["Retry-After"] = str(DEFAULT_RETRY_AFTER_SECONDS)
        return response


def _is_chunked(request) -> bool:
    meta = request.META
    return (
        "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
        and not meta.get("CONTENT_LENGTH")
        and bool(meta.get("wsgi.input_terminated"))
    )


class _MalformedBody(Exception):
    pass


def _read_chunked(request):
    """The de-chunked body in a spooled file, installed as the request's stream; None when it
    is over the body limit (reading stops there). Raises _MalformedBody when the server cannot
    de-chunk it (bad chunk sizes, a body cut short)."""
    limit = settings.TRAJHUB_MAX_BODY_BYTES
    source = request.META["wsgi.input"]
    spool = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)
    size = 0
    while True:
        try:
            chunk = source.read(256 * 1024)
        except Exception as exc:
            # The server's own parse error (gunicorn's InvalidChunkSize, NoMoreData, ...):
            # the framing is the client's fault, not ours.
            spool.close()
            raise _MalformedBody from exc
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            spool.close()
            return None
        spool.write(chunk)
    spool.seek(0)
    request.META["CONTENT_LENGTH"] = str(size)
    request._stream = LimitedStream(spool, size)
    return spool
