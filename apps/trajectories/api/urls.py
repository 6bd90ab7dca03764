from django.urls import path

from apps.trajectories.api import files, views
from apps.trajectories.api.preview import TrajectoryPreviewView

app_name = "api"
urlpatterns = [
    path("trajectories", views.TrajectoryListView.as_view(), name="trajectory-list"),
    # The upload page's dry run (preview.py); before trajectories/<id>, which would take "preview".
    path("trajectories/preview", TrajectoryPreviewView.as_view(), name="trajectory-preview"),
    path(
        "trajectories/<str:share_id>",
        views.TrajectoryDetailView.as_view(),
        name="trajectory-detail",
    ),
    path(
        "trajectories/<str:share_id>/events",
        views.TrajectoryEventsView.as_view(),
        name="trajectory-events",
    ),
    path(
        "trajectories/<str:share_id>/download",
        files.TrajectoryDownloadView.as_view(),
        name="trajectory-download",
    ),
    path(
        "trajectories/<str:share_id>/images/<str:sha256>",
        files.TrajectoryImageView.as_view(),
        name="trajectory-image",
    ),
]
