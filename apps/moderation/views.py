"""Public moderation pages: report a trajectory, request a takedown, confirm it, appeal a
rejection. Plain forms that work without JavaScript; CSRF-protected; thin over the services (reports, takedowns, appeals).

Report and takedown forms exist only for trajectories in `public()` (anything else answers the
same 404 as an unknown id). The appeal form is reached by the signed link of a rejection notice.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.core.http import client_ip
from apps.core.ratelimit import RateLimited
from apps.moderation.errors import ModerationError
from apps.moderation.forms import AppealForm, ReportForm, TakedownForm
from apps.moderation.services import appeals, links, reports, takedowns
from apps.trajectories.models import Trajectory
from apps.trajectories.redaction import redactor

ROBOTS = {"noindex": True}


def _public_trajectory(share_id: str) -> Trajectory:
    trajectory = Trajectory.objects.public().filter(share_id=share_id).first()
    if trajectory is None:
        raise Http404("no such trajectory")
    return trajectory


def _context(trajectory: Trajectory, **extra) -> dict:
    # Shown through its redactions, like every public surface.
    return {
        "trajectory": trajectory,
        "title": redactor(trajectory.redactions)(trajectory.title) or "Untitled trajectory",
        **extra,
    }


def _rate_limited(
    request: HttpRequest, template: str, context: dict, error: RateLimited
) -> HttpResponse:
    """The form again, with the limit that refused it in words (per network, or per recipient
    address: the same message the API's 429 gives) and its own Retry-After."""
    message = error.message[:1].upper() + error.message[1:] + "."
    context = {**context, "rate_limited": True, "rate_limit_message": message}
    response = render(request, template, context, status=429)
    response["Retry-After"] = str(error.retry_after)
    return response


@require_http_methods(["GET", "POST"])
def trajectory_report(request: HttpRequest, share_id: str) -> HttpResponse:
    trajectory = _public_trajectory(share_id)
    template = "moderation/report.html"
    form = ReportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = request.user if request.user.is_authenticated else None
        try:
            reports.report_submit(
                trajectory=trajectory,
                reason=form.cleaned_data["reason"],
                text=form.cleaned_data["text"],
                email=form.cleaned_data["email"],
                user=user,
                client_ip=client_ip(request),
            )
        except RateLimited as error:
            return _rate_limited(request, template, _context(trajectory, form=form), error)
        return render(request, "moderation/report_done.html", _context(trajectory))
    status = 400 if request.method == "POST" else 200
    return render(request, template, _context(trajectory, form=form), status=status)


@require_http_methods(["GET", "POST"])
def trajectory_takedown(request: HttpRequest, share_id: str) -> HttpResponse:
    trajectory = _public_trajectory(share_id)
    template = "moderation/takedown.html"
    form = TakedownForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            takedowns.takedown_request(
                trajectory=trajectory,
                email=form.cleaned_data["email"],
                text=form.cleaned_data["text"],
                client_ip=client_ip(request),
            )
        except RateLimited as error:
            return _rate_limited(request, template, _context(trajectory, form=form), error)
        return render(request, "moderation/takedown_sent.html", _context(trajectory))
    status = 400 if request.method == "POST" else 200
    return render(request, template, _context(trajectory, form=form), status=status)


@require_http_methods(["GET", "POST"])
def takedown_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows a button (mail scanners follow links; they do not submit forms), POST confirms."""
    takedown = links.takedown_from_token(token)
    if takedown is None:
        return render(request, "moderation/takedown_confirm.html", {"invalid": True}, status=404)
    context = {
        "token": token,
        "short_id": takedown.trajectory.share_id[:12],
        "title": takedown.trajectory.shown_title,  # the redacted view: a requester's page
    }
    if request.method == "POST":
        takedowns.takedown_confirm(request=takedown)
        return render(request, "moderation/takedown_confirm.html", {**context, "done": True})
    return render(request, "moderation/takedown_confirm.html", context)


@require_http_methods(["GET", "POST"])
def trajectory_appeal(request: HttpRequest, token: str) -> HttpResponse:
    trajectory = links.appeal_trajectory(token)
    if trajectory is None:
        return render(request, "moderation/appeal.html", {"invalid": True}, status=404)
    form = AppealForm(request.POST or None)
    context = _context(trajectory, form=form, token=token)
    if request.method == "POST" and form.is_valid():
        try:
            appeals.appeal_submit(trajectory=trajectory, text=form.cleaned_data["text"])
        except ModerationError as error:
            return render(
                request,
                "moderation/appeal.html",
                {**context, "refused": str(error)},
                status=409,
            )
        return render(request, "moderation/appeal.html", {**context, "done": True})
    status = 400 if request.method == "POST" else 200
    return render(request, "moderation/appeal.html", context, status=status)
