from django.urls import path, re_path

from apps.moderation import views

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    re_path(rf"^t/{SHARE_ID}/report$", views.trajectory_report, name="trajectory-report"),
    re_path(rf"^t/{SHARE_ID}/takedown$", views.trajectory_takedown, name="trajectory-takedown"),
    path("takedown/confirm/<str:token>", views.takedown_confirm, name="takedown-confirm"),
    path("appeal/<str:token>", views.trajectory_appeal, name="trajectory-appeal"),
]
