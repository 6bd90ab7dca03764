from django.urls import re_path

from apps.stars.api import TrajectoryStarView

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    re_path(rf"^trajectories/{SHARE_ID}/star$", TrajectoryStarView.as_view(), name="api-star"),
]
