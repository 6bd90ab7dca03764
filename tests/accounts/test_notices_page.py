"""The dashboard's notices: the user's own, unread marked, marked read one by one or all."""

from __future__ import annotations

import pytest

from apps.accounts.models import Notice
from apps.accounts.notices import notice_send
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def test_lists_own_notices_and_marks_them_read(
    client, owner, other_user, django_assert_num_queries
):
    mine = make_trajectory(owner=owner, review_state="held")
    theirs = make_trajectory(owner=other_user, review_state="held")
    notice_send(kind="held", trajectory=mine, reason="looks like a key")
    notice_send(kind="rejected", trajectory=mine, link="javascript:alert(1)")
    notice_send(kind="hidden", trajectory=theirs, reason="their reason")
    client.force_login(owner)

    # session, user, count, page, unread count
    with django_assert_num_queries(5):
        html = client.get("/me/notices/").content.decode()
    assert "waiting for a moderator" in html and "looks like a key" in html
    assert "their reason" not in html
    assert "javascript:" not in html  # a link a page may not show is left out
    assert html.count('class="unread"') == 2
    assert 'Notices <span class="badge">2</span>' in html

    first = Notice.objects.filter(user=owner, kind="held").get()
    client.post("/me/notices/", {"id": first.pk})
    assert Notice.objects.filter(user=owner, read_at__isnull=True).count() == 1
    # Someone else's notice id marks nothing of theirs.
    other = Notice.objects.get(user=other_user)
    client.post("/me/notices/", {"id": other.pk})
    other.refresh_from_db()
    assert other.read_at is None
    client.post("/me/notices/")
    assert Notice.objects.filter(user=owner, read_at__isnull=True).count() == 0
    html = client.get("/me/notices/").content.decode()
    assert 'class="unread"' not in html


def test_anonymous_is_sent_to_sign_in(client):
    assert client.get("/me/notices/")["Location"].startswith("/accounts/login/")
