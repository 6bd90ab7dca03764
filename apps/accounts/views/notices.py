"""Notice pages: the dashboard's list, and the one-click unsubscribe every notice email links to."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from apps.accounts import notices, selectors
from apps.accounts.models import NoticeKind

PAGE_SIZE = 50


# Mail clients send RFC 8058's one-click POST without a CSRF token; the signed token in the URL
# is what proves the request, and all it can do is stop emails.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET: a page with one button (link scanners in mail systems follow GETs, so a GET changes
    nothing). POST: unsubscribe that address from that kind of notice email."""
    read = notices.unsubscribe_read(token)
    if read is None:
        return render(request, "accounts/unsubscribe.html", {"invalid": True}, status=404)
    kind_label = NoticeKind(read[1]).label.lower()
    if request.method == "POST":
        notices.notice_unsubscribe(token=token)
        return render(
            request, "accounts/unsubscribe.html", {"done": True, "kind_label": kind_label}
        )
    return render(request, "accounts/unsubscribe.html", {"token": token, "kind_label": kind_label})


@login_required
@require_http_methods(["GET", "POST"])
def notice_list(request: HttpRequest) -> HttpResponse:
    """GET: the user's notices, unread first marked. POST: mark them (or one) read."""
    if request.method == "POST":
        ids = [int(value) for value in request.POST.getlist("id") if value.isdigit()]
        notices.notice_mark_read(user=request.user, notice_ids=ids or None)
        return redirect("me-notices")
    page = Paginator(selectors.notices_for(request.user), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "accounts/notices.html",
        {
            "page": page,
            "notices": list(page.object_list),
            "unread": selectors.unread_notice_count(request.user),
            "tab": "notices",
        },
    )
