"""The public site pages: home, static pages, feed, sitemap, link previews, errors, sign-in.

Browse/search, upload/preview and the link-and-password page have their own files
(test_pages_browse.py, test_pages_upload.py, test_pages_unlock.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from allauth.account.models import EmailAddress
from django.template.loader import render_to_string
from django.test import Client

from tests.trajectories.site_factories import NOT_PUBLIC_STATES, make_trajectory

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle=|\son[a-z]+=", re.I)


def assert_csp_clean(html: str) -> None:
    """No inline script, style or event handler: the page works under the strict CSP."""
    assert not INLINE_SCRIPT.search(html), INLINE_SCRIPT.search(html)
    assert not INLINE_STYLE.search(html), INLINE_STYLE.search(html)


def test_home_says_what_trajhub_is_and_counts_only_public(client, django_assert_num_queries):
    make_trajectory(title="Fix the flaky test", num_events=12)
    make_trajectory(title="Add a CLI flag", num_events=30)
    make_trajectory(title="Private run", visibility="private", num_events=1000)
    make_trajectory(title="Held run", review_state="held", num_events=500)

    with django_assert_num_queries(3):  # the counts, the latest rows, the week's most starred
        response = client.get("/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "trajectories of AI agents" in html
    stats = re.search(r'<dl class="stats".*?</dl>', html, re.S).group(0)
    assert "<dd>2</dd>" in stats and "<dd>42</dd>" in stats
    assert "Fix the flaky test" in html and "Add a CLI flag" in html
    assert "Private run" not in html and "Held run" not in html
    for link in ('href="/browse/"', 'href="/upload/"', 'href="/api/docs"', 'href="/releases/"'):
        assert link in html
    assert 'property="og:title"' in html and 'name="twitter:card"' in html
    assert_csp_clean(html)


def test_home_escapes_hostile_titles(client):
    make_trajectory(title='<script>alert(1)</script><img src=x onerror="alert(2)">')
    html = client.get("/").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


def test_home_shows_redacted_titles_and_feedback(client):
    make_trajectory(
        title="Deploy with key sk-live-1234",
        feedback_text="mail me at ann@example.org",
        redactions={"sk-live-1234": "<API_KEY_1>", "ann@example.org": "<EMAIL_1>"},
    )
    html = client.get("/").content.decode()
    assert "sk-live-1234" not in html and "ann@example.org" not in html
    assert "&lt;API_KEY_1&gt;" in html and "&lt;EMAIL_1&gt;" in html


@pytest.mark.parametrize(
    "path, text",
    [
        ("/terms/", "Terms of use"),
        ("/privacy/", "never shown, never released"),
        ("/license/", "Permission is hereby granted"),
        ("/removal/", "X-Deletion-Password"),
        ("/releases/", "No release has been published yet"),
    ],
)
def test_static_pages(client, path, text):
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert text in html
    assert '<a href="/license/">Data licence (MIT)</a>' in html  # footer
    assert_csp_clean(html)


def test_license_page_follows_the_setting(client, settings):
    settings.TRAJHUB_LICENSE = "CC-BY-4.0"
    html = client.get("/license/").content.decode()
    assert "Data licence: CC-BY-4.0" in html
    assert "Permission is hereby granted" not in html
    assert "https://spdx.org/licenses/CC-BY-4.0.html" in html


def test_removal_page_names_the_contact_when_configured(client, settings):
    settings.TRAJHUB_CONTACT_EMAIL = "mods@trajhub.example"
    assert 'href="mailto:mods@trajhub.example"' in client.get("/removal/").content.decode()


def test_404_is_styled_and_offers_the_password_form_on_trajectory_paths(client):
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Not found" in html and 'class="site-header"' in html
    assert "password" not in html.lower()

    share_id = "ab" * 32
    response = client.get(f"/t/{share_id}/")
    assert response.status_code == 404
    html = response.content.decode()
    assert f'action="/t/{share_id}/unlock"' in html
    assert 'name="robots" content="noindex' in html
    assert_csp_clean(html)


def test_500_page_renders_without_the_database(client):
    html = render_to_string("500.html")
    assert "Something went wrong" in html and "site.css" in html
    assert_csp_clean(html)


# --- Feed and sitemap -------------------------------------------------------------------------


def _feed_entries(client) -> list[dict]:
    response = client.get("/feed.atom")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    root = ET.fromstring(response.content)
    return [
        {
            "title": entry.findtext(f"{ATOM}title"),
            "link": entry.find(f"{ATOM}link").get("href"),
            "summary": entry.findtext(f"{ATOM}summary"),
        }
        for entry in root.findall(f"{ATOM}entry")
    ]


def test_feed_lists_latest_public_with_absolute_links_and_redacted_text(client, settings):
    settings.SITE_URL = "https://trajhub.example"
    shown = make_trajectory(
        title="Refactor with token ghp_abc", redactions={"ghp_abc": "<GITHUB_TOKEN_1>"}
    )
    make_trajectory(title="Nope", visibility="private")

    entries = _feed_entries(client)

    assert [entry["link"] for entry in entries] == [f"https://trajhub.example/t/{shown.share_id}/"]
    assert entries[0]["title"] == "Refactor with token <GITHUB_TOKEN_1>"
    assert "ghp_abc" not in client.get("/feed.atom").content.decode()


def _sitemap_urls(client) -> list[str]:
    index = client.get("/sitemap.xml")
    assert index.status_code == 200
    urls = []
    for loc in ET.fromstring(index.content).iter(f"{SITEMAP}loc"):
        path = loc.text.split("://", 1)[1].split("/", 1)[1]
        section = client.get("/" + path)
        assert section.status_code == 200
        urls += [node.text for node in ET.fromstring(section.content).iter(f"{SITEMAP}loc")]
    return urls


def test_sitemap_lists_static_pages_and_public_trajectories_only(client, settings):
    settings.SITE_URL = "https://trajhub.example"
    public = make_trajectory(title="Public")
    hidden = make_trajectory(title="Hidden", review_state="hidden")

    urls = _sitemap_urls(client)

    assert "https://trajhub.example/" in urls
    assert "https://trajhub.example/browse/" in urls
    assert f"https://trajhub.example/t/{public.share_id}/" in urls
    assert not any(hidden.share_id in url for url in urls)


# --- Nothing that is not public appears anywhere, for anyone ----------------------------------


@pytest.fixture
def world(owner):
    """One public trajectory and one of every state that must never be listed, all owned by
    `owner`, plus one that was deleted."""
    public = make_trajectory(title="Visible public run", owner=owner)
    hidden = {
        name: make_trajectory(title=f"Secret {name} run", owner=owner, **fields)
        for name, fields in NOT_PUBLIC_STATES.items()
    }
    deleted = make_trajectory(title="Secret deleted run", owner=owner)
    deleted_id = deleted.share_id
    deleted.delete()
    return public, hidden, deleted_id


@pytest.mark.parametrize("caller", ["anonymous", "owner", "other_user", "moderator", "staff"])
def test_public_surfaces_list_only_public_for_everyone(request, world, caller):
    public, hidden, deleted_id = world
    client = Client()
    if caller != "anonymous":
        client.force_login(request.getfixturevalue(caller))

    pages = {
        "home": client.get("/").content.decode(),
        "feed": client.get("/feed.atom").content.decode(),
        "sitemap": "\n".join(_sitemap_urls(client)),
    }
    for name, body in pages.items():
        assert public.share_id in body, name
        for state, trajectory in hidden.items():
            assert trajectory.share_id not in body, (name, state)
            assert trajectory.title not in body, (name, state)
        assert deleted_id not in body, name
        assert "Secret" not in body, name


def test_public_lists_are_the_same_for_everyone(world, owner, moderator, staff):
    bodies = set()
    for user in (None, owner, moderator, staff):
        client = Client()
        if user is not None:
            client.force_login(user)
        html = client.get("/").content.decode()
        # The lists, without the header (whose nav differs when signed in).
        bodies.add(
            re.search(r'<section aria-labelledby="latest-title">.*?</section>', html, re.S)[0]
        )
        bodies.add(client.get("/feed.atom").content.decode().split("<updated>", 1)[1])
    assert len(bodies) == 2


# --- Link previews --------------------------------------------------------------------------


def test_og_include_describes_a_public_trajectory_from_redacted_data(settings):
    settings.SITE_URL = "https://trajhub.example"
    trajectory = make_trajectory(
        title="Fix bug for bob@corp.example",
        agent="CodeActAgent",
        model_name="claude-sonnet-4",
        num_events=42,
        feedback_text='Great run by bob@corp.example "quoted" <b>',
        redactions={"bob@corp.example": "<EMAIL_1>"},
    )
    html = render_to_string(
        "trajectories/_og.html",
        {"trajectory": trajectory, "SITE_URL": settings.SITE_URL, "SITE_NAME": "TrajHub"},
    )
    assert 'property="og:title" content="Fix bug for &lt;EMAIL_1&gt;"' in html
    assert "bob@corp.example" not in html
    assert "CodeActAgent, model claude-sonnet-4, 42 events" in html
    assert "&quot;quoted&quot; &lt;b&gt;" in html
    assert f'content="https://trajhub.example/t/{trajectory.share_id}/"' in html
    assert 'content="https://trajhub.example/static/img/og-card.png"' in html
    assert 'name="twitter:card" content="summary_large_image"' in html
    assert "noindex" not in html


@pytest.mark.parametrize("state", sorted(NOT_PUBLIC_STATES))
def test_og_include_marks_anything_not_public_noindex_and_says_nothing(state):
    trajectory = make_trajectory(title="Private secret title", **NOT_PUBLIC_STATES[state])
    html = render_to_string("trajectories/_og.html", {"trajectory": trajectory})
    assert '<meta name="robots" content="noindex, nofollow">' in html
    assert "og:" not in html and "Private secret title" not in html


# --- Account pages (the dashboard: tests/owners/test_dashboard.py) -----------------------------


def test_login_page_uses_the_site_layout(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="site-header"' in html and "Sign in" in html
    assert 'name="password"' in html
    assert_csp_clean(html)


def test_login_then_lands_on_me(client, owner):
    # A signed-up account's address is verified (TRAJHUB_EMAIL_VERIFICATION is mandatory on
    # PostgreSQL: without one, the form would ask to confirm it first).
    EmailAddress.objects.create(user=owner, email="owner@example.org", verified=True, primary=True)
    response = client.post(
        "/accounts/login/", {"login": "owner", "password": "pw-owner"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/me/"
    assert "Signed in as <strong>owner</strong>" in response.content.decode()


def test_login_shows_github_only_when_configured(client, settings):
    assert "Sign in with GitHub" not in client.get("/accounts/login/").content.decode()
    providers = {"github": {**settings.SOCIALACCOUNT_PROVIDERS["github"]}}
    providers["github"]["APP"] = {"client_id": "abc123", "secret": "s"}
    settings.SOCIALACCOUNT_PROVIDERS = providers
    html = client.get("/accounts/login/").content.decode()
    assert "Sign in with GitHub" in html
    assert 'action="/accounts/github/login/?process=login"' in html


def test_sitemap_index_pages_large_sections(client, monkeypatch):
    from apps.trajectories.sitemaps import PublicTrajectoriesSitemap

    monkeypatch.setattr(PublicTrajectoriesSitemap, "limit", 2)
    made = [make_trajectory(title=f"Run {index}") for index in range(5)]
    index = client.get("/sitemap.xml").content.decode()
    assert "sitemap-trajectories.xml?p=3" in index and "?p=4" not in index
    urls = _sitemap_urls(client)
    assert sorted(url.rsplit("/t/", 1)[1].strip("/") for url in urls if "/t/" in url) == sorted(
        t.share_id for t in made
    )
