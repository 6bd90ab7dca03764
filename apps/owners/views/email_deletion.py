"""Deletion by email, without an account: a form sends a one-time link to the address; the link
shows how many anonymous shares that address made and deletes them on confirmation.

The form's answer is the same whether or not the address shared anything (no enumeration), and
it is rate limited per client address and per email.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods

from apps.core.http import client_ip
from apps.core.ratelimit import RateLimited
from apps.owners.forms import EmailForm
from apps.owners.services.erasure import (
    anonymous_shares_of,
    email_deletion_confirm,
    email_deletion_open,
    email_deletion_request,
)


@require_http_methods(["GET", "POST"])
def email_deletion(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "owners/email_deletion.html", {"form": EmailForm()})
    form = EmailForm(request.POST)
    if not form.is_valid():
        return render(request, "owners/email_deletion.html", {"form": form}, status=400)
    try:
        email_deletion_request(
            email=form.cleaned_data["email"], client=client_ip(request) or "unknown"
        )
    except RateLimited as exc:
        response = render(
            request,
            "owners/email_deletion.html",
            {"form": form, "rate_limited": True},
            status=429,
        )
        response["Retry-After"] = str(exc.retry_after)
        return response
    return render(
        request,
        "owners/email_deletion.html",
        {"sent": True, "hours": settings.TRAJHUB_EMAIL_DELETION_HOURS},
    )


@require_http_methods(["GET", "POST"])
def email_deletion_confirm_view(request: HttpRequest, token: str) -> HttpResponse:
    """GET: how many anonymous shares the address made, and a button. POST: delete them."""
    pending = email_deletion_open(token)
    if pending is None:
        response = render(
            request, "owners/email_deletion_confirm.html", {"invalid": True}, status=404
        )
    elif request.method == "POST":
        count = email_deletion_confirm(request=pending)
        if count is None:
            response = render(
                request, "owners/email_deletion_confirm.html", {"invalid": True}, status=404
            )
        else:
            response = render(request, "owners/email_deletion_confirm.html", {"deleted": count})
    else:
        response = render(
            request,
            "owners/email_deletion_confirm.html",
            {"token": token, "count": anonymous_shares_of(pending.email).count()},
        )
    # The link is a credential: never cached, and never sent to another site as a referrer.
    # "same-origin" (the site's default), not "no-referrer": under no-referrer the browser
    # sends `Origin: null` with the page's own form, and Django's CSRF check refuses it.
    add_never_cache_headers(response)
    response["Referrer-Policy"] = "same-origin"
    return response
