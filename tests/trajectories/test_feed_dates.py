"""The Atom feed's dates (issue 20: an entry's <published> was later than its <updated>)."""

from datetime import timedelta
from xml.etree import ElementTree

import pytest
from django.utils import timezone

from apps.trajectories.models import Trajectory
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


def test_no_entry_is_updated_before_it_was_published(client):
    trajectory = make_trajectory(title="Published after its last change")
    later = timezone.now() + timedelta(hours=1)
    # Approval makes it public with a conditional update: published_at moves, updated_at not.
    Trajectory.objects.filter(pk=trajectory.pk).update(published_at=later)
    feed = ElementTree.fromstring(client.get("/feed.atom").content)
    (entry,) = feed.findall(f"{ATOM}entry")
    published = entry.find(f"{ATOM}published").text
    updated = entry.find(f"{ATOM}updated").text
    assert published is not None and updated is not None
    assert updated >= published, (published, updated)
