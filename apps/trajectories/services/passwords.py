"""Deletion passwords: issued once to anonymous contributors, stored salted and hashed."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from apps.trajectories.models import Trajectory

PASSWORD_SCHEME = "sha256"


def new_deletion_password() -> str:
    return secrets.token_urlsafe(18)


def hash_deletion_password(password: str, salt: str | None = None) -> str:
    """A salted SHA-256 of a deletion password.

    Deletion passwords are 144 random bits made by us, not chosen by people, so a slow hash
    would add nothing against guessing; it would only cost about half a second of CPU per share
    and per delete attempt (a denial-of-service lever). API tokens are hashed the same way.
    """
    salt = salt if salt is not None else secrets.token_hex(8)
    digest = hashlib.sha256(f"{salt}${password}".encode()).hexdigest()
    return f"{PASSWORD_SCHEME}${salt}${digest}"


def trajectory_check_password(*, trajectory: Trajectory, password: str) -> bool:
    """Whether `password` is one of the deletion passwords issued for this trajectory.

    Every issued hash is checked with a constant-time comparison and no early exit, so the
    answer's timing does not tell which one (or whether any) matched.
    """
    password = password if isinstance(password, str) else ""
    ok = False
    for encoded in trajectory.deletion_password_hashes or []:
        scheme, _, rest = str(encoded).partition("$")
        salt, _, digest = rest.partition("$")
        expected = hash_deletion_password(password, salt)
        ok |= scheme == PASSWORD_SCHEME and hmac.compare_digest(expected, str(encoded))
    return bool(password) and ok
