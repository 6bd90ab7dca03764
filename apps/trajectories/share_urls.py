"""Root-level URLs OpenHands knows: its share endpoint (FEEDBACK_URL) and its share link."""

from django.urls import path

from apps.trajectories.api.openhands import share_od_trajectory, share_redirect

urlpatterns = [
    path("share_od_trajectory", share_od_trajectory, name="openhands-share"),
    path("api/share", share_od_trajectory, name="openhands-share-api"),
    path("share", share_redirect, name="openhands-share-link"),
    # The v0.7 link form: /show?feedback_id=<id>.
    path("show", share_redirect, name="openhands-show-link"),
]
