"""The one signed-link and digest module: HMACs kept instead of a secret value, and the signed
tokens of emailed links.

- `digest(purpose, value)`: an HMAC of `value` under the site's secret key, for what is stored
  or compared instead of the value itself (an address, a client session id). The purpose is the
  HMAC's salt: two purposes never give the same digest of one value.
- `link_token(purpose, payload)` / `link_payload(purpose, token, max_age=None)`: a signed,
  timestamped token naming a JSON-able payload (Django's `signing.dumps` / `loads`, the purpose
  as their salt); a token that is forged, for another purpose, older than `max_age` or carrying
  another type of payload than expected raises `BadLink`, the one error of this module.
- `canonical_email(email)`: the one form of an address that digests are made of.

Digests and tokens already stored or emailed must keep verifying, so each caller keeps its
purpose string and algorithm for good (tests/core/test_signing.py pins each one's output).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core import signing
from django.utils.crypto import salted_hmac


class BadLink(Exception):
    """A token that is not one of ours for this purpose, or has expired."""


def canonical_email(email: str) -> str:
    """An address as digests are made of it: without surrounding blanks, in lower case."""
    return email.strip().lower()


def digest(purpose: str, value: str, *, algorithm: str = "sha256") -> str:
    """The hex HMAC of `value` for `purpose` under the site's secret key. The digests stored
    before issue 21 were made with "sha1" and their callers say so (changing it would orphan
    every stored value)."""
    return salted_hmac(purpose, value, algorithm=algorithm).hexdigest()


def link_token(purpose: str, payload: Any) -> str:
    """A signed, timestamped token carrying `payload` (anything JSON can hold) for `purpose`."""
    return signing.dumps(payload, salt=purpose)


def link_payload(
    purpose: str,
    token: str,
    max_age: int | timedelta | None = None,
    *,
    expect: type | tuple[type, ...] = object,
) -> Any:
    """The payload of a token made by `link_token` for `purpose`, no older than `max_age`
    (seconds or a timedelta; None: it never expires) and an instance of `expect`. BadLink for
    anything else."""
    try:
        payload = signing.loads(token, salt=purpose, max_age=max_age)
    except signing.BadSignature as error:  # SignatureExpired too
        raise BadLink(str(error)) from None
    if not isinstance(payload, expect):
        raise BadLink(f"the link carries a {type(payload).__name__}")
    return payload
