"""The account's own data: download all of it (an archive a task builds), delete the account."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods, require_safe

from apps.accounts.models import ExportState
from apps.accounts.selectors import unread_notice_count
from apps.owners import selectors
from apps.owners.services.erasure import account_delete
from apps.owners.services.export import export_open, export_request


@login_required
@require_http_methods(["GET", "POST"])
def export(request: HttpRequest) -> HttpResponse:
    """GET: the latest archive and its state. POST: build a new one (a task; a notice says when
    it is ready)."""
    if request.method == "POST":
        export_request(user=request.user)
        messages.success(
            request,
            "Your archive is being built. It is listed here when it is ready, and a notice "
            "(and an email, if your account has an address) tells you.",
        )
        return redirect("me-export")
    return render(
        request,
        "owners/export.html",
        {
            "exports": list(selectors.exports_for(request.user)[:5]),
            "building": selectors.exports_for(request.user)
            .filter(state__in=[ExportState.PENDING, ExportState.BUILDING])
            .exists(),
            "unread": unread_notice_count(request.user),
            "keep_days": settings.TRAJHUB_EXPORT_KEEP_DAYS,
            "tab": "export",
        },
    )


@login_required
@require_safe
def export_download(request: HttpRequest, export_id: int) -> HttpResponse:
    """The archive, streamed from storage; only to its account (404 for anyone else)."""
    item = selectors.exports_for(request.user).filter(pk=export_id, state=ExportState.READY).first()
    if item is None:
        raise Http404("no such export")
    try:
        handle = export_open(item)
    except (FileNotFoundError, OSError):
        raise Http404("no such export") from None
    response = FileResponse(handle, content_type="application/zip")
    name = f"trajhub-{request.user.get_username()}-{item.created_at:%Y%m%d}.zip"
    response["Content-Disposition"] = content_disposition_header(True, name)
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def account_delete_view(request: HttpRequest) -> HttpResponse:
    """GET: what goes, and a form that asks for the username. POST: delete everything."""
    user = request.user
    count = selectors.owned_count(user)
    context = {
        "count": count,
        "unread": unread_notice_count(user),
        "tab": "account-delete",
    }
    if request.method == "POST":
        if request.POST.get("username", "").strip() != user.get_username():
            return render(
                request,
                "owners/account_delete.html",
                {**context, "error": "Type your username exactly to confirm."},
                status=400,
            )
        deleted = account_delete(user=user)
        logout(request)
        return render(request, "owners/account_deleted.html", {"count": deleted})
    return render(request, "owners/account_delete.html", context)
