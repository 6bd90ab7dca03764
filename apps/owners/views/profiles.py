"""Public profiles: /u/<username>/ (username, GitHub handle and avatar, public trajectories).
The avatar itself is served by accounts (views/avatars.py)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from apps.accounts.selectors import github_login, profile_user
from apps.owners import selectors

PAGE_SIZE = 25


@require_safe
def profile(request: HttpRequest, username: str) -> HttpResponse:
    user = profile_user(username)
    if user is None:
        raise Http404("no such user")
    page = Paginator(selectors.profile_trajectories(user), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "owners/profile.html",
        {
            "profile": user,
            "github_login": github_login(user),
            "page": page,
            "trajectories": list(page.object_list),
        },
    )
