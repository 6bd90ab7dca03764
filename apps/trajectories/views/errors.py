from django.http import JsonResponse
from django.shortcuts import render


def _is_api(request) -> bool:
    # API clients get JSON errors everywhere under /api/, even where no route matched.
    return request.path.startswith("/api/")


def page_not_found(request, exception=None):
    if _is_api(request):
        return JsonResponse(
            {"error": {"message": f"no API endpoint at {request.path}"}}, status=404
        )
    return render(request, "404.html", status=404)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"error": {"message": "internal server error"}}, status=500)
    return render(request, "500.html", status=500)
