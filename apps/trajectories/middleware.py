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


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "TRAJHUB_CSP", POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        # The browsable API and Swagger UI ship inline scripts; they get their own, looser policy.
        if request.path.startswith("/api/docs") or request.path.startswith("/api/v1/"):
            response.setdefault(
                "Content-Security-Policy",
                self.policy.replace("script-src 'self'", "script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net")
                .replace("style-src 'self'", "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net")
                .replace("img-src 'self' data:", "img-src 'self' data: https://cdn.jsdelivr.net"),
            )
        else:
            response.setdefault("Content-Security-Policy", self.policy)
        return response
