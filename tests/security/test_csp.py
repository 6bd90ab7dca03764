"""Every HTML page of the site carries the strict Content-Security-Policy and needs nothing it
forbids: no inline script, no inline style, no event handler attribute. The API docs keep
scripts 'self' only (Swagger UI sets styles inline, nothing more is relaxed)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.core.middleware import POLICY
from tests.ingest_helpers import make_trajectory
from tests.security.html_check import check

pytestmark = pytest.mark.django_db

PUBLIC_PAGES = [
    "/",
    "/browse/",
    "/browse/?q=list&ordering=-events&per_page=50",
    "/upload/",
    "/releases/",
    "/stats/",
    "/terms/",
    "/privacy/",
    "/license/",
    "/removal/",
    "/accounts/login/",
    "/accounts/signup/",
]


def test_every_public_page(client):
    make_trajectory(visibility="public")
    problems = []
    for url in PUBLIC_PAGES:
        problems += check(client.get(url), url)
    # Refused filters (a 400 with the form error) and a query string over the limit (a 414
    # page answered before the view).
    problems += check(client.get("/browse/?date_from=not-a-date"), "bad filter", status=400)
    long = "/browse/?q=" + "x" * 40_000
    problems += check(client.get(long), "query too long", status=414)
    assert problems == [], "\n".join(problems)


def test_trajectory_pages_for_visitor_owner_and_staff(owner, staff):
    trajectory = make_trajectory(owner=owner, visibility="public", steps=3)
    base = trajectory.get_absolute_url()
    urls = [base, f"{base}?after=2", f"{base}events/2/json", f"{base}events/3/blocks/0"]
    problems = []
    for user in (None, owner, staff):
        client = Client()
        if user is not None:
            client.force_login(user)
        for url in urls:
            problems += check(client.get(url), f"{user} {url}")
    assert problems == [], "\n".join(problems)


def test_pages_of_signed_in_people_and_anonymous_sharers(owner):
    trajectory = make_trajectory(owner=owner, visibility="private")
    client = Client()
    client.force_login(owner)
    problems = []
    pages = ("/me/", "/me/?visibility=private&ordering=-size", "/me/notices/", "/me/tokens/")
    more = ("/me/claim/", "/me/export/", "/me/delete-account/", "/delete-by-email/", "/u/owner/")
    for url in (*pages, *more):
        problems += check(client.get(url), url)
    for name in ("me-delete", "me-edit"):
        problems += check(client.get(reverse(name, args=[trajectory.share_id])), name)
    bulk = client.post("/me/bulk", {"ids": [trajectory.share_id], "action": "delete"})
    problems += check(bulk, "bulk delete confirmation")
    problems += check(client.post("/me/tokens/", {"name": "t"}), "token created", status=201)
    problems += check(client.get("/accounts/logout/"), "logout")
    anonymous = Client()
    unlock = reverse("trajectory-unlock", args=[trajectory.share_id])
    problems += check(anonymous.get(unlock), "unlock")
    problems += check(anonymous.post(unlock, {"password": "wrong"}), "unlock refused", status=404)
    assert problems == [], "\n".join(problems)


def test_moderation_pages_report_takedown_confirm_and_appeal(owner):
    from apps.moderation.models import TakedownRequest
    from apps.moderation.services.links import appeal_url, takedown_confirm_url

    public = make_trajectory(owner=owner, visibility="public")
    rejected = make_trajectory(owner=owner, review_state="rejected", task="another task")
    request = TakedownRequest.objects.create(trajectory=public, email="a@example.org", text="x")
    client = Client()
    problems = []
    for form in ("report", "takedown"):
        url = f"/t/{public.share_id}/{form}"
        problems += check(client.get(url), url)
        problems += check(client.post(url, {}), f"{url} invalid", status=400)
    for url in (takedown_confirm_url(request), appeal_url(rejected)):
        path = "/" + url.split("://", 1)[1].split("/", 1)[1]
        problems += check(client.get(path), path)
    assert problems == [], "\n".join(problems)


def test_error_pages(client, owner):
    private = make_trajectory(owner=owner, visibility="private")
    problems = check(client.get("/no/such/page/"), "404", status=404)
    problems += check(client.get(private.get_absolute_url()), "404 of a private one", status=404)
    assert problems == [], "\n".join(problems)


def test_json_and_feeds_carry_the_policy_too(client):
    trajectory = make_trajectory(visibility="public")
    for url in (
        f"/api/v1/trajectories/{trajectory.share_id}",
        f"{trajectory.get_absolute_url()}find?q=x",
        "/feed.atom",
        "/sitemap.xml",
    ):
        assert client.get(url)["Content-Security-Policy"] == POLICY, url


def test_api_docs_relax_styles_only(client):
    response = client.get("/api/docs")
    assert response.status_code == 200
    directives = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
