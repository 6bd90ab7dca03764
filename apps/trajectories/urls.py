from django.contrib.sitemaps.views import sitemap
from django.urls import path, re_path

from apps.trajectories import views_site, views_viewer
from apps.trajectories.feeds import LatestPublicTrajectoriesFeed
from apps.trajectories.sitemaps import SITEMAPS, sitemap_index

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    # Site pages (views_site.py)
    path("", views_site.home, name="home"),
    path("browse/", views_site.browse, name="browse"),
    path("upload/", views_site.upload, name="upload"),
    path("me/", views_site.me, name="me"),
    re_path(rf"^me/t/{SHARE_ID}/delete$", views_site.me_delete, name="me-delete"),
    path("releases/", views_site.releases, name="releases"),
    path("terms/", views_site.terms, name="terms"),
    path("privacy/", views_site.privacy, name="privacy"),
    path("license/", views_site.license_page, name="license"),
    path("removal/", views_site.removal, name="removal"),
    re_path(rf"^t/{SHARE_ID}/unlock$", views_site.trajectory_unlock, name="trajectory-unlock"),
    re_path(
        rf"^t/{SHARE_ID}/delete$",
        views_site.trajectory_holder_delete,
        name="trajectory-holder-delete",
    ),
    # The trajectory page and the fragments viewer.js loads (views_viewer.py)
    re_path(rf"^t/{SHARE_ID}/$", views_viewer.trajectory_page, name="trajectory"),
    re_path(rf"^t/{SHARE_ID}/events$", views_viewer.trajectory_events, name="trajectory-events"),
    re_path(
        rf"^t/{SHARE_ID}/events/(?P<step>[0-9]{{1,9}})/json$",
        views_viewer.trajectory_event_json,
        name="trajectory-event-json",
    ),
    re_path(
        rf"^t/{SHARE_ID}/events/(?P<step>[0-9]{{1,9}})/blocks/(?P<index>[0-9]{{1,4}})$",
        views_viewer.trajectory_event_block,
        name="trajectory-event-block",
    ),
    re_path(rf"^t/{SHARE_ID}/find$", views_viewer.trajectory_find, name="trajectory-find"),
    re_path(
        rf"^t/{SHARE_ID}/images/(?P<sha256>[0-9a-f]{{64}})$",
        views_viewer.trajectory_image,
        name="trajectory-image",
    ),
    path("feed.atom", LatestPublicTrajectoriesFeed(), name="feed-atom"),
    path("sitemap.xml", sitemap_index, name="sitemap"),
    path("sitemap-<section>.xml", sitemap, {"sitemaps": SITEMAPS}, name="sitemap-section"),
]
