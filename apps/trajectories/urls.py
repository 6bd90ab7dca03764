from django.contrib.sitemaps.views import sitemap
from django.urls import path, re_path

from apps.trajectories.feeds import LatestPublicTrajectoriesFeed
from apps.trajectories.sitemaps import SITEMAPS, sitemap_index
from apps.trajectories.views import compare, outcome, site, viewer

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

urlpatterns = [
    # Site pages (views/site.py)
    path("", site.home, name="home"),
    path("browse/", site.browse, name="browse"),
    path("compare/", compare.compare_page, name="compare"),
    path("compare/rows", compare.compare_rows, name="compare-rows"),
    path("upload/", site.upload, name="upload"),
    path("upload/done", site.upload_done, name="upload-done"),
    path("terms/", site.terms, name="terms"),
    path("privacy/", site.privacy, name="privacy"),
    path("license/", site.license_page, name="license"),
    path("removal/", site.removal, name="removal"),
    re_path(rf"^t/{SHARE_ID}/unlock$", site.trajectory_unlock, name="trajectory-unlock"),
    re_path(
        rf"^t/{SHARE_ID}/delete$",
        site.trajectory_holder_delete,
        name="trajectory-holder-delete",
    ),
    # The trajectory page and the fragments viewer.js loads (views/viewer.py)
    re_path(rf"^t/{SHARE_ID}/$", viewer.trajectory_page, name="trajectory"),
    re_path(rf"^t/{SHARE_ID}/events$", viewer.trajectory_events, name="trajectory-events"),
    re_path(rf"^t/{SHARE_ID}/timeline$", viewer.trajectory_timeline, name="trajectory-timeline"),
    re_path(
        rf"^t/{SHARE_ID}/events/(?P<step>[0-9]{{1,9}})/json$",
        viewer.trajectory_event_json,
        name="trajectory-event-json",
    ),
    re_path(
        rf"^t/{SHARE_ID}/events/(?P<step>[0-9]{{1,9}})/blocks/(?P<index>[0-9]{{1,4}})$",
        viewer.trajectory_event_block,
        name="trajectory-event-block",
    ),
    re_path(rf"^t/{SHARE_ID}/find$", viewer.trajectory_find, name="trajectory-find"),
    re_path(rf"^t/{SHARE_ID}/outcome$", outcome.trajectory_outcome, name="trajectory-outcome"),
    re_path(
        rf"^t/{SHARE_ID}/images/(?P<sha256>[0-9a-f]{{64}})$",
        viewer.trajectory_image,
        name="trajectory-image",
    ),
    path("feed.atom", LatestPublicTrajectoriesFeed(), name="feed-atom"),
    path("sitemap.xml", sitemap_index, name="sitemap"),
    path("sitemap-<section>.xml", sitemap, {"sitemaps": SITEMAPS}, name="sitemap-section"),
]
