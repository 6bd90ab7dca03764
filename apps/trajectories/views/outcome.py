"""The Result card's form: the owner's (or the anonymous sharer's, with the share's password)
word on how the run went, where its format records none. A plain form (POST, CSRF) that works
without JavaScript and answers with the page again (303); the API's PATCH sets the same."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.trajectories.outcome import OUTCOME_LABELS
from apps.trajectories.selectors.viewer import trajectory_access
from apps.trajectories.services import InvalidShare, trajectory_outcome_set


@require_POST
def trajectory_outcome(request: HttpRequest, share_id: str) -> HttpResponse:
    # A trajectory the caller may not see is the 404 every other page gives it.
    access = trajectory_access(request, share_id)
    if not (access.is_owner or access.is_holder):
        # Moderators and staff see it, but how the run went is its sharer's to say.
        return _refused(
            request, 403, "only the person who shared this trajectory can say how it went"
        )
    try:
        trajectory = trajectory_outcome_set(
            trajectory=access.trajectory, outcome=request.POST.get("outcome", "")
        )
    except InvalidShare as exc:
        return _refused(request, 400, exc.message)
    if trajectory.owner_outcome:
        messages.success(
            request, f"Saved: {OUTCOME_LABELS[trajectory.owner_outcome].lower()}, as you said."
        )
    else:
        messages.success(request, "Cleared: the outcome is unknown again.")
    return redirect(f"/t/{share_id}/#result")


def _refused(request: HttpRequest, status: int, message: str) -> HttpResponse:
    return render(
        request,
        "error.html",
        {"code": status, "title": "The outcome was not changed", "message": message},
        status=status,
    )
