"""Atom feed of the latest public trajectories, built only from public, redacted data."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.utils.feedgenerator import Atom1Feed

from apps.trajectories.selectors import site as site_selectors
from apps.trajectories.templatetags.trajhub_site import describe, public_title, redacted

FEED_SIZE = 50
# XML 1.0 has no place for these (terminal colours, bells in titles): Django refuses the whole feed.
XML_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _xml(text: str) -> str:
    return XML_CONTROL.sub("", text)


class LatestPublicTrajectoriesFeed(Feed):
    feed_type = Atom1Feed
    title = "TrajHub: latest public trajectories"
    subtitle = "AI agent trajectories shared publicly on TrajHub."

    # Absolute links from the configured site URL, not from the Sites table's placeholder domain.
    def link(self) -> str:
        return f"{settings.SITE_URL}/browse/"

    def feed_url(self) -> str:
        return f"{settings.SITE_URL}/feed.atom"

    def items(self):
        return site_selectors.public_latest(limit=FEED_SIZE)

    def item_title(self, item) -> str:
        return _xml(public_title(item))

    def item_description(self, item) -> str:
        return _xml(describe(item))

    def item_link(self, item) -> str:
        return f"{settings.SITE_URL}{item.get_absolute_url()}"

    def item_pubdate(self, item):
        return item.published_at or item.created_at

    def item_updateddate(self, item):
        # Publishing is a conditional update that leaves updated_at as it was: an entry is
        # never updated before it was published (Atom readers sort by both).
        return max(item.updated_at, self.item_pubdate(item))

    def item_author_name(self, item) -> str:
        return _xml(redacted(item.agent, item)) or "Unknown agent"

    def item_categories(self, item):
        values = (redacted(item.agent, item), redacted(item.model_name, item), item.source_format)
        return [_xml(value) for value in values if _xml(value)]
