"""What stars add to trajectories' pages (registered in apps.py, read by trajectories'
extensions): the button and count on a public trajectory's page, the week's most starred on the
home page."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.stars import selectors
from apps.trajectories.models import Trajectory


def page_star(request: HttpRequest, trajectory: Trajectory) -> dict[str, Any]:
    if not trajectory.is_public:
        return {}
    user = request.user if request.user.is_authenticated else None
    return {
        "star": {
            "count": trajectory.star_count,
            "starred": selectors.starred(user, trajectory),
            "url": f"/t/{trajectory.share_id}/star",
            "signed_in": user is not None,
        }
    }


def home_most_starred(request: HttpRequest) -> dict[str, Any]:
    return {"most_starred": selectors.most_starred_this_week()}
