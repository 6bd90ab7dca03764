"""An account's GitHub avatar, served from our own storage: /u/<username>/avatar."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from apps.accounts import selectors
from apps.accounts.services.avatars import avatar_read


@require_safe
def avatar(request: HttpRequest, username: str) -> HttpResponse:
    """The stored avatar (a PNG we wrote ourselves)."""
    user = selectors.profile_user(username)
    if user is None or not user.avatar_path:
        raise Http404("no avatar")
    try:
        data = avatar_read(user)
    except (FileNotFoundError, OSError):
        raise Http404("no avatar") from None
    response = HttpResponse(data, content_type="image/png")
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response
