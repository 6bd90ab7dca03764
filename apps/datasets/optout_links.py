"""The opt-out link an anonymous contributor gets with a release's announcement: a signed token
naming the release and an HMAC of the contributor's address (never the address itself). Below
the services and selectors, which both read it."""

from __future__ import annotations

from apps.core import signing
from apps.datasets.models import Release, ReleaseStatus

LINK_SALT = "trajhub.datasets.optout-link"
EMAIL_PURPOSE = "trajhub.datasets.email"


def email_digest(email: str) -> str:
    """An HMAC of an address: the opt-out link names it without carrying the address."""
    # sha1: the links mailed before issue 21 carry sha1 digests.
    return signing.digest(EMAIL_PURPOSE, signing.canonical_email(email), algorithm="sha1")


def optout_token(*, release: Release, email: str) -> str:
    """The signed part of the link an anonymous contributor gets with the announcement."""
    return signing.link_token(LINK_SALT, {"r": release.pk, "e": email_digest(email)})


def optout_token_read(token: str) -> tuple[Release, str] | None:
    """(announced release, address digest) of a valid token whose release is still open."""
    try:
        data = signing.link_payload(LINK_SALT, token, expect=dict)
    except signing.BadLink:
        return None
    if not isinstance(data.get("e"), str):
        return None
    if not isinstance(data.get("r"), int):
        return None
    release = Release.objects.filter(pk=data["r"], status=ReleaseStatus.ANNOUNCED).first()
    if release is None:
        return None
    return release, data["e"]
