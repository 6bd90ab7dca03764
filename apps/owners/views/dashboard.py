"""The dashboard (/me/): the signed-in user's own trajectories, one at a time and in bulk.

Everything here is the owner's only: other people's trajectories are not found (404), whoever
asks (moderators work in the admin, not here). Writes call owners.services.dashboard, which
calls the trajectory services.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from apps.accounts.selectors import unread_notice_count
from apps.owners import selectors
from apps.owners.forms import TrajectoryEditForm
from apps.owners.services.dashboard import BULK_ACTIONS, trajectories_bulk_change
from apps.trajectories.models import ReviewState, Visibility
from apps.trajectories.selectors import is_share_id
from apps.trajectories.services import InvalidShare, trajectory_update

PAGE_SIZE = 50
BULK_MAX = 500  # ids in one bulk request


def _back(request: HttpRequest, default: str = "/me/") -> str:
    """Where to go after a change: the page it came from, if it is one of ours."""
    target = request.POST.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


@login_required
@require_safe
def me(request: HttpRequest) -> HttpResponse:
    flt = selectors.DashboardFilter.from_query(request.GET.dict())
    queryset = selectors.dashboard_trajectories(request.user, flt)
    page = Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "owners/me.html",
        {
            "page": page,
            "trajectories": list(page.object_list),
            "filter": flt,
            "filtered": bool(flt.visibility or flt.review_state or flt.q),
            "visibilities": Visibility.choices,
            "review_states": ReviewState.choices,
            "orderings": [
                (key, label) for key, (label, _) in selectors.DASHBOARD_ORDERINGS.items()
            ],
            "bulk_actions": BULK_ACTIONS,
            "unread": unread_notice_count(request.user),
            "tab": "trajectories",
        },
    )


@login_required
@require_POST
def me_bulk(request: HttpRequest) -> HttpResponse:
    """The checkbox form: make the ticked trajectories public or private, or delete them (after a
    confirmation page that lists them)."""
    share_ids = [sid for sid in request.POST.getlist("ids")[:BULK_MAX] if is_share_id(sid)]
    action = request.POST.get("action", "")
    if action not in BULK_ACTIONS:
        messages.error(request, "Choose what to do with the ticked trajectories.")
        return redirect(_back(request))
    trajectories = list(selectors.owned_by_share_ids(request.user, share_ids))
    if not trajectories:
        messages.error(request, "Tick at least one of your trajectories first.")
        return redirect(_back(request))
    if action == "delete" and request.POST.get("confirm") != "yes":
        return render(
            request,
            "owners/me_bulk_delete.html",
            {"trajectories": trajectories, "next": _back(request)},
        )
    try:
        result = trajectories_bulk_change(
            user=request.user,
            trajectories=trajectories,
            action=action,
            license_agreed=request.POST.get("license_agreed") == "yes",
        )
    except InvalidShare as exc:
        messages.error(request, f"Nothing was changed: {_in_words(exc)}.")
        return redirect(_back(request))
    plural = "y" if result.count == 1 else "ies"
    done = {
        "make_public": "made public",
        "make_private": "made private",
        "delete": "deleted",
    }[action]
    messages.success(request, f"{result.count} trajector{plural} {done}.")
    if action == "make_public":
        messages.info(
            request, "Public trajectories appear on the site once the automatic check passes."
        )
    return redirect(_back(request))


def _in_words(exc: InvalidShare) -> str:
    """The service's message as a page says it: the API's wording names its fields."""
    if exc.where == "license_agreed":
        return (
            f"to make it public, tick the box agreeing to the site's licence "
            f"({settings.TRAJHUB_LICENSE}) first"
        )
    return exc.message


def _owned_or_404(request: HttpRequest, share_id: str):
    trajectory = selectors.owned_one(request.user, share_id)
    if trajectory is None:
        raise Http404("no such trajectory")
    return trajectory


@login_required
@require_http_methods(["GET", "POST"])
def me_edit(request: HttpRequest, share_id: str) -> HttpResponse:
    """Edit title, polarity, feedback and visibility of one's own trajectory."""
    trajectory = _owned_or_404(request, share_id)
    initial = {
        "title": trajectory.title,
        "polarity": trajectory.polarity,
        "feedback_text": trajectory.feedback_text,
        "visibility": trajectory.visibility,
    }
    if request.method == "POST":
        form = TrajectoryEditForm(request.POST, has_license=bool(trajectory.license))
        if form.is_valid():
            data = form.cleaned_data
            changes = {
                name: data[name]
                for name in ("title", "polarity", "feedback_text", "visibility")
                if data[name] != initial[name]
            }
            if data["license_agreed"]:
                changes["license_agreed"] = True
            try:
                trajectory_update(trajectory=trajectory, **changes)
            except InvalidShare as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, "Saved.")
                return redirect(_back(request, trajectory.get_absolute_url()))
        status = 400
    else:
        form = TrajectoryEditForm(initial=initial, has_license=bool(trajectory.license))
        status = 200
    return render(
        request,
        "owners/me_edit.html",
        {"trajectory": trajectory, "form": form, "next": request.GET.get("next", "")},
        status=status,
    )


@login_required
@require_POST
def me_visibility(request: HttpRequest, share_id: str) -> HttpResponse:
    """One button: make one's own trajectory public (with the licence) or private."""
    trajectory = _owned_or_404(request, share_id)
    visibility = request.POST.get("visibility", "")
    try:
        trajectory_update(
            trajectory=trajectory,
            visibility=visibility,
            license_agreed=request.POST.get("license_agreed") == "yes",
        )
    except InvalidShare as exc:
        messages.error(request, f"Not changed: {_in_words(exc)}.")
    else:
        messages.success(request, f"It is {trajectory.get_visibility_display().lower()} now.")
    return redirect(_back(request, trajectory.get_absolute_url()))


@login_required
@require_http_methods(["GET", "POST"])
def me_delete(request: HttpRequest, share_id: str) -> HttpResponse:
    """The owner deletes one of their trajectories: GET asks to confirm, POST deletes."""
    trajectory = _owned_or_404(request, share_id)
    if request.method == "POST":
        if request.POST.get("confirm") != "yes":
            return render(
                request,
                "owners/me_delete.html",
                {"trajectory": trajectory, "confirm_missing": True},
                status=400,
            )
        trajectories_bulk_change(user=request.user, trajectories=[trajectory], action="delete")
        messages.success(request, "The trajectory has been deleted.")
        return redirect("me")
    return render(request, "owners/me_delete.html", {"trajectory": trajectory})
