"""A strict Content-Security-Policy on every response: no inline script, images only from us."""

from django.conf import settings

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self' https://github.com",
        "frame-ancestors 'none'",
    ]
)


# Swagger UI (served from our static files, its start-up script a separate file) sets styles
# inline on its elements; scripts stay 'self' only.
DOCS_POLICY = POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "TRAJHUB_CSP", POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        policy = DOCS_POLICY if request.path.startswith("/api/docs") else self.policy
        response.setdefault("Content-Security-Policy", policy)
        return response
