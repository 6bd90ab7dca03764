"""Sitemaps: the site's public pages and every public trajectory, nothing else.

/sitemap.xml is an index: one sitemap file holds at most 50,000 URLs, and a busy site has more
public trajectories than that.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import SitemapIndexItem
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from apps.trajectories.models import Trajectory

STATIC_PAGES = [
    "/",
    "/browse/",
    "/upload/",
    "/releases/",
    "/terms/",
    "/privacy/",
    "/license/",
    "/removal/",
]


class _SiteUrlSitemap(Sitemap):
    """Absolute URLs from settings.SITE_URL rather than the Sites table's placeholder domain."""

    @property
    def protocol(self) -> str:  # type: ignore[override]
        return urlsplit(settings.SITE_URL).scheme or "https"

    def get_domain(self, site=None) -> str:
        return urlsplit(settings.SITE_URL).netloc


class PagesSitemap(_SiteUrlSitemap):
    changefreq = "weekly"
    priority = 0.6

    def items(self) -> list[str]:
        return STATIC_PAGES

    def location(self, item: str) -> str:
        return item


class PublicTrajectoriesSitemap(_SiteUrlSitemap):
    changefreq = "monthly"
    priority = 0.5
    # Sitemaps may hold 50,000 URLs; 10,000 keeps each file quick to build and fetch.
    limit = 10_000

    def items(self):
        return (
            Trajectory.objects.listed()
            .only("share_id", "updated_at")
            .order_by("-created_at", "-id")
        )

    def lastmod(self, item: Trajectory):
        return item.updated_at


SITEMAPS = {"pages": PagesSitemap, "trajectories": PublicTrajectoriesSitemap}


def sitemap_index(request: HttpRequest) -> HttpResponse:
    """Like django.contrib.sitemaps.views.index, with absolute URLs from settings.SITE_URL and
    without computing every item's lastmod (that would read every public row)."""
    entries = []
    for section, sitemap_class in SITEMAPS.items():
        location = f"{settings.SITE_URL}{reverse('sitemap-section', kwargs={'section': section})}"
        entries.append(SitemapIndexItem(location))
        for page in range(2, sitemap_class().paginator.num_pages + 1):
            entries.append(SitemapIndexItem(f"{location}?p={page}"))
    response = TemplateResponse(
        request, "sitemap_index.xml", {"sitemaps": entries}, content_type="application/xml"
    )
    response.headers["X-Robots-Tag"] = "noindex, noodp, noarchive"
    return response
