from django.urls import path

from apps.moderation.api import views

urlpatterns = [
    path(
        "trajectories/<str:share_id>/reports",
        views.TrajectoryReportView.as_view(),
        name="trajectory-reports",
    ),
    path(
        "trajectories/<str:share_id>/takedowns",
        views.TrajectoryTakedownView.as_view(),
        name="trajectory-takedowns",
    ),
]
