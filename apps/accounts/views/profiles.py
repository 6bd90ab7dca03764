"""Public profiles: /u/<username>/ (username, GitHub handle and avatar, public trajectories)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from apps.accounts import selectors
from apps.accounts.services.avatars import avatar_read

PAGE_SIZE = 25


@require_safe
def profile(request: HttpRequest, username: str) -> HttpResponse:
    user = selectors.profile_user(username)
    if user is None:
        raise Http404("no such user")
    page = Paginator(selectors.profile_trajectories(user), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "accounts/profile.html",
        {
            "profile": user,
            "github_login": selectors.github_login(user),
            "page": page,
            "trajectories": list(page.object_list),
        },
    )


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
