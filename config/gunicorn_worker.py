"""Gunicorn's sync worker, answering the requests gunicorn itself refuses in the site's JSON.

Gunicorn answers a request it cannot parse (a header over its size limit, a broken request line,
a bad chunk) with a small HTML page before Django sees it, so API clients and OpenHands' share
button get a body they cannot read. This worker answers the same refusals with one JSON body
that both read: the API's `{"error": {"message", "where"}}` and the drop-in's
`{"statusCode", "body": {"message"}}` (nginx's own 414 in docker/nginx.conf has the same shape).
Everything else, application errors included, is gunicorn's own handling.
"""

from __future__ import annotations

import orjson
from gunicorn import util
from gunicorn.http import errors
from gunicorn.workers import sync

# (status, reason, where, message) by the exception gunicorn raised while parsing.
_Kinds = type[BaseException] | tuple[type[BaseException], ...]
_REFUSALS: list[tuple[_Kinds, int, str, str, str]] = [
    (
        errors.LimitRequestHeaders,
        431,
        "Request Header Fields Too Large",
        "headers",
        "a request header, or the headers together, are over the limit",
    ),
    (
        errors.LimitRequestLine,
        414,
        "URI Too Long",
        "query",
        "the request line is over the limit; send long values in the body",
    ),
    (
        errors.UnsupportedTransferCoding,
        501,
        "Not Implemented",
        "headers",
        "this Transfer-Encoding is not supported; send the body plain or chunked",
    ),
    (
        errors.ExpectationFailed,
        417,
        "Expectation Failed",
        "headers",
        "only 'Expect: 100-continue' is supported",
    ),
    (errors.ForbiddenProxyRequest, 403, "Forbidden", "headers", "proxy request not allowed"),
    (
        errors.InvalidSchemeHeaders,
        400,
        "Bad Request",
        "headers",
        "contradictory scheme headers",
    ),
    (
        (errors.InvalidChunkSize, errors.ChunkMissingTerminator, errors.InvalidChunkExtension),
        400,
        "Bad Request",
        "body",
        "the chunked body is malformed",
    ),
    (
        (errors.InvalidHeader, errors.InvalidHeaderName, errors.ObsoleteFolding),
        400,
        "Bad Request",
        "headers",
        "a request header is malformed",
    ),
    (
        (
            errors.InvalidRequestLine,
            errors.InvalidRequestMethod,
            errors.InvalidHTTPVersion,
            errors.InvalidProxyLine,
            errors.InvalidH2CPreface,
        ),
        400,
        "Bad Request",
        "request line",
        "the request line is malformed",
    ),
]


def refusal(exc: BaseException) -> tuple[int, str, str, str] | None:
    """(status, reason, where, message) for a parse error of the client's, else None.

    A bad header the application tried to send is the application's error (gunicorn's 500)."""
    if isinstance(exc, (errors.InvalidResponseHeader, errors.InvalidResponseHeaderName)):
        return None
    for kinds, status, reason, where, message in _REFUSALS:
        if isinstance(exc, kinds):
            return status, reason, where, message
    return None


def answer(status: int, reason: str, where: str, message: str) -> bytes:
    body = orjson.dumps(
        {
            "error": {"message": message, "where": where},
            "statusCode": status,
            "body": {"message": message},
        }
    )
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class SyncWorker(sync.SyncWorker):
    def handle_error(self, req, client, addr, exc):  # type: ignore[no-untyped-def]
        refused = refusal(exc)
        if refused is None:
            return super().handle_error(req, client, addr, exc)
        status, reason, where, message = refused
        # Gunicorn's own warning, without the request: a refused line may carry a query string.
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], type(exc).__name__)
        try:
            util.write_nonblock(client, answer(status, reason, where, message))
        except Exception:
            self.log.debug("Failed to send error message.")
