"""Writes to accounts. This module: API tokens (hashed; the secret is shown once); avatars: the
GitHub avatar fetched into storage. They import nothing of the other apps (trajectories
authenticate with them); the writes that reach into trajectories are apps.owners.services."""

from __future__ import annotations

import secrets

from django.db import transaction

from apps.accounts.authentication import hash_token
from apps.accounts.models import ApiToken, User

TOKEN_PREFIX = "th_"


@transaction.atomic
def api_token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """A new API token for `user`: the row (only a SHA-256 of the secret) and the secret itself."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name[:100], prefix=secret[:12], key_hash=hash_token(secret)
    )
    return token, secret


@transaction.atomic
def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke a token: requests carrying it are refused from now on."""
    ApiToken.objects.filter(pk=token.pk).delete()
