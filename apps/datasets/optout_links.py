"""The opt-out link an anonymous contributor gets with a release's announcement: a signed token
naming the release and an HMAC of the contributor's address (never the address itself). Below
the services and selectors, which both read it."""

from __future__ import annotations

from django.core import signing
from django.utils.crypto import salted_hmac

from apps.datasets.models import Release, ReleaseStatus

LINK_SALT = "trajhub.datasets.optout-link"


def email_digest(email: str) -> str:
    """An HMAC of an address: the opt-out link names it without carrying the address."""
    return salted_hmac("trajhub.datasets.email", email.strip().lower()).hexdigest()


def optout_token(*, release: Release, email: str) -> str:
    """The signed part of the link an anonymous contributor gets with the announcement."""
    return signing.dumps({"r": release.pk, "e": email_digest(email)}, salt=LINK_SALT)


def optout_token_read(token: str) -> tuple[Release, str] | None:
    """(announced release, address digest) of a valid token whose release is still open."""
    try:
        data = signing.loads(token, salt=LINK_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("e"), str):
        return None
    if not isinstance(data.get("r"), int):
        return None
    release = Release.objects.filter(pk=data["r"], status=ReleaseStatus.ANNOUNCED).first()
    if release is None:
        return None
    return release, data["e"]
