from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.core.views.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/schema", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("apps.datasets.api.urls")),
    path("api/v1/", include("apps.trajectories.api.urls")),
    path("api/v1/", include("apps.learn.api.urls")),
    path("api/v1/", include("apps.stats.api.urls")),
    path("api/v1/", include("apps.moderation.api.urls")),
    path("api/v1/", include("apps.stars.api_urls")),
    path("", include("apps.trajectories.share_urls")),
    path("", include("apps.accounts.urls")),
    path("", include("apps.owners.urls")),
    path("", include("apps.stars.urls")),
    path("", include("apps.datasets.urls")),
    path("", include("apps.moderation.urls")),
    path("", include("apps.stats.urls")),
    path("", include("apps.trajectories.urls")),
]

handler404 = "apps.core.views.errors.page_not_found"
handler500 = "apps.core.views.errors.server_error"
