"""The "Your account" tab bar: one bar on every page of a signed-in user's own, made of the
tabs each app registers (apps.accounts.tabs), in one order, the page's own marked current."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.models import Notice

pytestmark = pytest.mark.django_db

# As the bar showed them before it was a registry (owners/_tabs.html), in that order.
TABS = [
    ("Trajectories", "me"),
    ("Notices", "me-notices"),
    ("Claim a share", "me-claim"),
    ("In the next release", "release-next"),
    ("API tokens", "me-tokens"),
    ("Download my data", "me-export"),
    ("Public profile", "profile"),
    ("Delete my account", "me-account-delete"),
]


def href(name: str) -> str:
    return reverse(name, args=["owner"] if name == "profile" else [])


def tab_bar(html: str) -> list[tuple[str, str, bool]]:
    """(label, href, current) of each link of the bar, badges left out of the label."""
    (nav,) = re.findall(r'<nav class="tabs" aria-label="Your account">(.*?)</nav>', html, re.S)
    return [
        (re.sub(r"<span.*?</span>", "", label).strip(), href, bool(current))
        for href, current, label in re.findall(
            r'<a href="([^"]+)"( aria-current="page")?>(.*?)</a>', nav, re.S
        )
    ]


# Every tab but the public profile, which is not one of the user's own pages.
@pytest.mark.parametrize("current", [0, 1, 2, 3, 4, 5, 7])
def test_every_own_page_shows_the_whole_bar_with_its_own_tab_current(owner, current):
    client = Client()
    client.force_login(owner)
    response = client.get(href(TABS[current][1]))
    assert response.status_code == 200
    html = response.content.decode()
    assert tab_bar(html) == [
        (label, href(name), i == current) for i, (label, name) in enumerate(TABS)
    ]
    # The sign-out form comes with the bar, with its CSRF token.
    logout = reverse("account_logout")
    assert re.search(
        rf'action="{logout}" class="inline"><input type="hidden" name="csrfmiddlewaretoken"', html
    )


def test_the_notices_tab_counts_the_unread(owner):
    for _ in range(2):
        Notice.objects.create(user=owner, kind="approved", subject="s", body="b")
    client = Client()
    client.force_login(owner)
    html = client.get("/me/tokens/").content.decode()
    assert '>Notices <span class="badge">2</span></a>' in html
