from django.urls import path, re_path

from apps.feedback import views

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    path("u/<str:username>/feedback", views.profile_feedback, name="profile-feedback"),
    re_path(
        rf"^t/{SHARE_ID}/steps/(?P<step>[0-9]{{1,9}})/feedback$",
        views.step_feedback_page,
        name="step-feedback",
    ),
    re_path(
        rf"^t/{SHARE_ID}/feedback/notes$",
        views.trajectory_feedback_notes,
        name="trajectory-feedback-notes",
    ),
    re_path(
        rf"^t/{SHARE_ID}/feedback$",
        views.trajectory_feedback_summary,
        name="trajectory-feedback-summary",
    ),
]
