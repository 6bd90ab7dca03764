from django.urls import path

from apps.feedback.api import views

app_name = "feedback-api"
urlpatterns = [
    path(
        "trajectories/<str:share_id>/steps/<str:step>/feedback",
        views.StepFeedbackView.as_view(),
        name="step-feedback",
    ),
    path(
        "trajectories/<str:share_id>/feedback",
        views.TrajectoryFeedbackView.as_view(),
        name="trajectory-feedback",
    ),
    path(
        "trajectories/<str:share_id>/feedback/notes/<str:note_id>/report",
        views.NoteReportView.as_view(),
        name="note-report",
    ),
]
