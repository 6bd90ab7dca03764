"""Error answers in the shape each caller reads: the API's JSON error under /api/, the OpenHands
envelope on the drop-in paths (OpenHands reads `body` as an object), a page elsewhere.

The 404/500 handlers use it, and so does the middleware that refuses a request before any view
runs (a query string over the limit, a chunked body over the limit). docker/nginx.conf answers
its own errors in the same shapes, by the same paths.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string

# OpenHands' FEEDBACK_URL paths (apps/trajectories/share_urls.py).
DROP_IN_PATHS = ("/share_od_trajectory", "/api/share")


def is_drop_in(path: str) -> bool:
    return path.rstrip("/") in DROP_IN_PATHS


def is_api(path: str) -> bool:
    # API clients get JSON errors everywhere under /api/, even where no route matched.
    return path.startswith("/api/") and not is_drop_in(path)


def error_response(
    request: HttpRequest, status: int, message: str, where: str = "", title: str = ""
) -> HttpResponse:
    """An error answer for `request.path`: JSON, the envelope, or a standalone page (it must
    render before sessions and authentication ran, so it needs no context of theirs)."""
    path = request.path_info or request.path
    if is_drop_in(path):
        return JsonResponse({"statusCode": status, "body": {"message": message}}, status=status)
    if is_api(path):
        error = {"message": message, **({"where": where} if where else {})}
        return JsonResponse({"error": error}, status=status)
    html = render_to_string(
        "error.html",
        {"code": status, "title": title or "This request cannot be answered", "message": message},
    )
    return HttpResponse(html, status=status)


def page_not_found(request, exception=None):
    if is_drop_in(request.path):
        return error_response(request, 404, "not found")
    if is_api(request.path):
        return JsonResponse(
            {"error": {"message": f"no API endpoint at {request.path}"}}, status=404
        )
    return render(request, "404.html", status=404)


def server_error(request):
    if is_drop_in(request.path) or is_api(request.path):
        return error_response(request, 500, "internal server error")
    return render(request, "500.html", status=500)


CSRF_MESSAGE = (
    "this form could not be sent because the page it came from had expired or was opened in "
    "another way than the site expects; reload the page and try again (if you followed a link "
    "from an email, open the link again)"
)


def csrf_failure(request, reason=""):
    """settings.CSRF_FAILURE_VIEW: the site's own error page, not Django's bare one."""
    if is_drop_in(request.path) or is_api(request.path):
        return error_response(request, 403, "CSRF verification failed")
    return error_response(request, 403, CSRF_MESSAGE, title="This form could not be sent")
