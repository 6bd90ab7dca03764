"""Deletion passwords: issued once to anonymous contributors, stored salted and hashed; and the
one way a password is checked from outside (the API's DELETE, the unlock and delete pages):
`trajectory_by_password`, rate limited per client address and the same cost whether the id
exists or not."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from apps.core import ratelimit
from apps.core.ratelimit import RateLimited
from apps.trajectories.models import Trajectory

PASSWORD_SCHEME = "sha256"
# Failed password attempts per client address (API and pages together) ...
PASSWORD_ATTEMPTS = 10
# ... per this many seconds.
PASSWORD_WINDOW_SECONDS = 15 * 60
# Every check hashes the password at least this many times (once per stored hash, padded with a
# dummy one): an unknown id, a wrong password and a share re-shared a few times cost the same.
MIN_HASHES_CHECKED = 8
_DUMMY_SALT = "0" * 16
_DUMMY_HASH = f"{PASSWORD_SCHEME}${_DUMMY_SALT}${'0' * 64}"  # matches no password


def new_deletion_password() -> str:
    # Never a leading "-": `trajhub download ID --password -x…` would read it as an option, and
    # so would most shells' tools. One draw in 64 starts with it; drawing again keeps the
    # password uniform over the others.
    while True:
        password = secrets.token_urlsafe(18)
        if not password.startswith("-"):
            return password


def _digest(salt: str, password: str) -> str:
    """The hash function itself (one SHA-256), counted by the tests of equal cost."""
    return hashlib.sha256(f"{salt}${password}".encode()).hexdigest()


def hash_deletion_password(password: str, salt: str | None = None) -> str:
    """A salted SHA-256 of a deletion password.

    Deletion passwords are 144 random bits made by us, not chosen by people, so a slow hash
    would add nothing against guessing; it would only cost about half a second of CPU per share
    and per delete attempt (a denial-of-service lever). API tokens are hashed the same way.
    """
    salt = salt if salt is not None else secrets.token_hex(8)
    return f"{PASSWORD_SCHEME}${salt}${_digest(salt, password)}"


def _matches(hashes: list[str], password: str) -> bool:
    """Whether `password` is one of `hashes`: every one is hashed and compared in constant time
    with no early exit, padded with dummies to MIN_HASHES_CHECKED, so the time taken tells
    neither which one matched nor whether there was any."""
    padded = [*hashes, *[_DUMMY_HASH] * (MIN_HASHES_CHECKED - len(hashes))]
    ok = False
    for encoded in padded:
        scheme, _, rest = str(encoded).partition("$")
        salt, _, _ = rest.partition("$")
        expected = f"{PASSWORD_SCHEME}${salt}${_digest(salt, password)}"
        ok |= scheme == PASSWORD_SCHEME and hmac.compare_digest(expected, str(encoded))
    return bool(password) and ok


def trajectory_check_password(*, trajectory: Trajectory, password: str) -> bool:
    """Whether `password` is one of the deletion passwords issued for this trajectory, while it
    is anonymous: once an account owns it, its passwords open nothing."""
    password = password if isinstance(password, str) else ""
    hashes = [] if trajectory.owner_id is not None else list(trajectory.deletion_password_hashes)
    return _matches(hashes, password)


# The rate limiter's scope of failed password attempts.
FAILS_SCOPE = "trajectories.password-fails"


def trajectory_by_password(*, share_id: str, password: str, client: str) -> Trajectory | None:
    """The anonymous trajectory at `share_id` if `password` is one of its deletion passwords,
    else None; the same work either way (an unknown id is checked against dummy hashes). Each
    failure counts against the client's address; past PASSWORD_ATTEMPTS in the window every
    attempt raises RateLimited, whatever it sends."""
    client = client or "unknown"
    if not ratelimit.peek(FAILS_SCOPE, client, PASSWORD_ATTEMPTS, PASSWORD_WINDOW_SECONDS).allowed:
        raise RateLimited(
            "too many wrong deletion passwords from this address; try again in "
            f"{PASSWORD_WINDOW_SECONDS // 60} minutes",
            retry_after=PASSWORD_WINDOW_SECONDS,
        )
    password = password if isinstance(password, str) else ""
    trajectory = (
        Trajectory.objects.filter(share_id=share_id, owner__isnull=True).first()
        if len(share_id) == 64
        else None
    )
    hashes = list(trajectory.deletion_password_hashes) if trajectory is not None else []
    if _matches(hashes, password) and trajectory is not None:
        return trajectory
    # Only failures count: the refusal above comes once the window holds PASSWORD_ATTEMPTS.
    ratelimit.hit(FAILS_SCOPE, client, PASSWORD_ATTEMPTS, PASSWORD_WINDOW_SECONDS)
    return None
