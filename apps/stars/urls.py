from django.urls import re_path

from apps.stars import views

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    re_path(rf"^t/{SHARE_ID}/star$", views.trajectory_star, name="trajectory-star"),
]
