"""API token authentication: `Authorization: Token <secret>` (or `Bearer <secret>`)."""

import hashlib

from django.utils import timezone
from rest_framework import authentication, exceptions

from apps.accounts.models import ApiToken


def hash_token(secret: str) -> str:
    # Tokens are long random strings, so one SHA-256 is enough (no salt or stretching needed),
    # and it lets us look the token up by its hash.
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("token", "bearer")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0].lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Malformed Authorization header: 'Token <key>'.")
        try:
            token = ApiToken.objects.select_related("user").get(key_hash=hash_token(header[1]))
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid API token.") from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("This account is disabled.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 300:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return "Token"
