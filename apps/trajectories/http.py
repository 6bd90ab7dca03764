"""The caller's address, for rate limits, whether or not proxies stand in front of the site."""

from django.conf import settings
from django.http import HttpRequest


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
