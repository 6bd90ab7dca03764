"""Claim a share made without an account: its link and password move it into the account."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.accounts.selectors import unread_notice_count
from apps.core.http import client_ip
from apps.core.ratelimit import RateLimited
from apps.owners.forms import ClaimForm
from apps.owners.services.claims import ClaimRefused, trajectory_claim


def _page(request: HttpRequest, form: ClaimForm, *, status: int = 200, **context) -> HttpResponse:
    return render(
        request,
        "owners/claim.html",
        {
            "form": form,
            "unread": unread_notice_count(request.user),
            "tab": "claim",
            **context,
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def claim(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, ClaimForm(initial={"link": request.GET.get("link", "")}))
    form = ClaimForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        trajectory = trajectory_claim(
            user=request.user,
            link=form.cleaned_data["link"],
            password=form.cleaned_data["password"],
            client=client_ip(request) or "unknown",
        )
    except RateLimited as exc:
        response = _page(
            request, ClaimForm(), status=429, error=f"{exc.message[:1].upper()}{exc.message[1:]}."
        )
        response["Retry-After"] = str(exc.retry_after)
        return response
    except ClaimRefused:
        # One answer for an unknown id, a wrong password and a share someone already owns.
        return _page(
            request,
            ClaimForm(initial={"link": form.cleaned_data["link"]}),
            status=404,
            error="That link and password do not open a share made without an account. "
            "Check both (the password was shown once, when you shared).",
        )
    messages.success(request, "It is yours now: manage it here. Its passwords no longer work.")
    return redirect(trajectory.get_absolute_url())
