"""The star button of a trajectory's page: a plain form (POST, CSRF), so it works without
JavaScript; it answers with the page again (303)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.core.ratelimit import RateLimited
from apps.stars.services import star_set
from apps.trajectories.models import Trajectory


@login_required
@require_POST
def trajectory_star(request: HttpRequest, share_id: str) -> HttpResponse:
    # Only what is public can be starred: a 404 for everything else, as the page itself says.
    trajectory = get_object_or_404(Trajectory.objects.public(), share_id=share_id)
    try:
        star_set(
            user=request.user,  # type: ignore[arg-type]
            trajectory=trajectory,
            starred=request.POST.get("starred") != "0",
        )
    except RateLimited as limited:
        response = render(
            request,
            "error.html",
            {
                "code": 429,
                "title": "Too many stars at once",
                "message": "you gave or took back too many stars in an hour; try again later",
            },
            status=429,
        )
        response["Retry-After"] = str(limited.retry_after)
        return response
    return redirect(f"/t/{share_id}/", permanent=False)
