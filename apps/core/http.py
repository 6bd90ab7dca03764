"""HTTP helpers: the caller's address, and reading upload bodies within the limits.

`client_ip` is the caller's address, for rate limits, whether or not proxies stand in front of
the site.

Bodies are read without letting Django buffer them first. The request body limit is checked against Content-Length before anything is read, and again
while streaming (a client may lie); gzip is inflated incrementally and stops at the
decompressed limit, so a gzip bomb costs at most the limit in memory.
"""

from __future__ import annotations

import io
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from typing import IO

from django.conf import settings
from django.http import HttpRequest

# Read, spooled and inflated in pieces under glibc's mmap threshold (128 KB): bigger buffers are
# mapped and unmapped afresh each request, and a 1 MB upload's process grew by them again and
# again (issue 24: 1.5 MB a request, where pieces this size reuse the heap).
CHUNK = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or behind TRAJHUB_TRUSTED_PROXIES proxies the address the outermost of them
    saw. Only the entries our own proxies appended are trusted: a client can put anything at the
    start of X-Forwarded-For, so we count from the right."""
    proxies = settings.TRAJHUB_TRUSTED_PROXIES
    remote = request.META.get("REMOTE_ADDR", "") or ""
    if proxies <= 0:
        return remote
    forwarded = [
        part.strip()
        for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if part.strip()
    ]
    if not forwarded:
        return remote
    return forwarded[-min(proxies, len(forwarded))]


class BodyError(Exception):
    """A body that cannot be read: `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400, where: str = "body"):
        super().__init__(message)
        self.message = message
        self.status = status
        self.where = where


def _mb(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):g} MB"
    return f"{size:,} bytes"


def declared_length(request: HttpRequest) -> int | None:
    value = request.META.get("CONTENT_LENGTH") or ""
    if not value:
        return None
    try:
        length = int(value)
    except ValueError:
        raise BodyError(
            "the Content-Length header is not a number", where="Content-Length"
        ) from None
    if length < 0:
        raise BodyError("the Content-Length header is negative", where="Content-Length")
    return length


def check_declared_length(request: HttpRequest) -> None:
    """413 before reading a byte when the client announces a body over the limit."""
    limit = settings.TRAJHUB_MAX_BODY_BYTES
    length = declared_length(request)
    if length is not None and length > limit:
        raise BodyError(
            f"the request body is {_mb(length)}, over the limit of {_mb(limit)}", status=413
        )


def content_encoding(request: HttpRequest) -> str:
    encoding = (request.META.get("HTTP_CONTENT_ENCODING") or "").strip().lower()
    if encoding in ("", "identity"):
        return ""
    if encoding in ("gzip", "x-gzip"):
        return "gzip"
    raise BodyError(
        f"Content-Encoding '{encoding}' is not supported; send gzip or no encoding",
        status=415,
        where="Content-Encoding",
    )


def _stream_chunks(request: HttpRequest) -> Iterable[bytes]:
    if hasattr(request, "_body"):  # something already read it: use what is there
        yield request._body
        return
    while True:
        chunk = request.read(CHUNK)
        if not chunk:
            return
        yield chunk


def read_request_body(request: HttpRequest) -> bytes:
    """The (inflated) request body, enforcing the body and decompressed-size limits."""
    with read_request_body_file(request, spool_bytes=2**62) as file:
        # An in-memory spool hands its buffer over: the body is not held twice.
        return file.getvalue() if isinstance(file, io.BytesIO) else file.read()


# Bodies up to this stay in memory; bigger ones go to a temporary file as they are read, so
# that a 20 MB upload read as a stream (importers.stream) is never held in the process (small,
# as CHUNK is).
BODY_SPOOL_BYTES = 64 * 1024


def read_request_body_file(
    request: HttpRequest, *, spool_bytes: int = BODY_SPOOL_BYTES
) -> IO[bytes]:
    """The (inflated) request body in a file positioned at its start, read chunk by chunk
    (gzip inflated as it comes) within the body and decompressed-size limits: in memory up to
    `spool_bytes`, else in a temporary file."""
    check_declared_length(request)
    encoding = content_encoding(request)
    limit = settings.TRAJHUB_MAX_BODY_BYTES
    file: IO[bytes] = (
        io.BytesIO() if spool_bytes >= limit else tempfile.SpooledTemporaryFile(spool_bytes)
    )
    inflater = _Inflater() if encoding == "gzip" else None
    try:
        total = 0
        for chunk in _stream_chunks(request):
            total += len(chunk)
            if total > limit:
                raise BodyError(f"the request body is over the limit of {_mb(limit)}", status=413)
            for part in inflater.feed(chunk) if inflater is not None else (chunk,):
                file.write(part)
        if inflater is not None:
            inflater.finish()
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return file


def gunzip(data: bytes) -> bytes:
    """Inflate gzip `data`, refusing to produce more than the decompressed-size limit."""
    inflater = _Inflater()
    parts = list(inflater.feed(data))
    inflater.finish()
    return b"".join(parts)


class _Inflater:
    """gzip inflated chunk by chunk, within the decompressed-size limit (a gzip bomb costs at
    most the limit); concatenated members are valid gzip and inflate one after the other, and
    zero padding may follow the last."""

    def __init__(self) -> None:
        self.limit = settings.TRAJHUB_MAX_DECOMPRESSED_BYTES
        self.inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self.produced = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        pending = data
        try:
            while pending:
                if self.inflater.eof:
                    if not pending.strip(b"\x00"):
                        return  # zero padding after the last member
                    self.inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                part = self.inflater.decompress(pending, self.limit - self.produced + 1)
                self.produced += len(part)
                if self.produced > self.limit:
                    raise BodyError(
                        f"the gzip body inflates past the limit of {_mb(self.limit)}", status=413
                    )
                if part:
                    yield part
                eof = self.inflater.eof
                pending = self.inflater.unused_data if eof else self.inflater.unconsumed_tail
        except zlib.error as exc:
            raise BodyError(f"the body is not valid gzip ({exc})") from None

    def finish(self) -> None:
        if not self.inflater.eof:
            raise BodyError("the gzip body is truncated")


def maybe_gunzip(data: bytes) -> bytes:
    """Uploaded files may be .gz: inflate those (within the limit), pass others through."""
    if data[:2] == GZIP_MAGIC:
        return gunzip(data)
    return data
