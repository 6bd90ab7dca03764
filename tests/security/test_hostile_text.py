"""Hostile trajectory text never runs: every page that shows a trajectory (as a visitor, its owner,
staff in Django admin) is checked element by element for script, event handlers, inline styles
and links or sources with a scheme that runs (javascript:, data:, vbscript:), and every page
carries the strict CSP. The feed stays well-formed XML whatever the text holds.

The payloads go where the viewer and browse tests do not: titles, feedback, agent, model and
version strings, metadata, event type names (used in attributes), ids and causes (data-
attributes), URLs of browse events, Markdown links and images of every shape, file paths,
task statuses, upload file names.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree

import orjson
import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from apps.accounts.models import User
from apps.trajectories.models import Event, Image, Tombstone, Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest
from tests.security.html_check import Page, check
from tests.security.world import purge_audit_entries

pytestmark = pytest.mark.django_db

XSS = (
    "<script>alert('s1')</script><img src=x onerror=alert('s2')>\"'>"
    "<svg onload=alert('s3')><iframe src=javascript:alert('s4')>"
)
MARKDOWN = "\n".join(
    [
        "Links: [a](javascript:alert('m1')) [b](JaVaScRiPt:alert('m2'))",
        "[c](data:text/html;base64,PHNjcmlwdD5hbGVydCgnbTMnKTwvc2NyaXB0Pg==)",
        "[d](vbscript:msgbox('m4')) <javascript:alert('m5')> [e](%6Aavascript:alert('m6'))",
        "[f](&#106;avascript:alert('m7')) [g]( javascript:alert('m8'))",
        "![h](javascript:alert('m9')) ![i](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
        "[j](https://ok.example/\"onmouseover=\"alert('m10')) [k][ref]",
        "<a href=\"javascript:alert('m11')\">raw</a> <img src=x onerror=\"alert('m12')\">",
        '<style>body{display:none}</style> <div style="background:url(javascript:alert(1))">x</div>',
        "",
        "[ref]: javascript:alert('m13')",
        "",
        "```html\n<script>alert('m14')</script>\n```",
    ]
)
URLS = [
    "javascript:alert('u1')",
    "  JaVaScRiPt:alert('u2')",
    "data:text/html,<script>alert('u3')</script>",
    "https://x.example/\" onmouseover=\"alert('u4')",
    "vbscript:msgbox('u5')",
    "\tjava\nscript:alert('u6')",
]
HOSTILE_TYPE = 'run" onclick="alert(\'t1\')" x="<b>'
CONTROL = "\x1b[31m\x07\x0b\x08"


def hostile_events() -> list[dict]:
    events: list[dict] = [
        {
            "id": "1\" onmouseover=\"alert('i1')",
            "source": "user",
            "message": MARKDOWN,
            "action": "message",
            "args": {"content": MARKDOWN + "\n" + XSS, "image_urls": None},
        },
        {
            "id": 2,
            "source": "agent",
            "message": XSS,
            "action": "message",
            "args": {"content": MARKDOWN, "wait_for_response": True},
        },
        {
            "id": 3,
            "source": "agent",
            "message": XSS,
            "action": HOSTILE_TYPE,
            "args": {"command": XSS, "thought": MARKDOWN},
        },
        {
            "id": 4,
            "source": "agent",
            "cause": "3\" onmouseover=\"alert('c1')",
            "observation": HOSTILE_TYPE,
            "content": XSS + CONTROL,
            "extras": {"command": XSS, "metadata": {"exit_code": XSS}},
        },
        {
            "id": 5,
            "source": "agent",
            "action": "edit",
            "args": {
                "path": "/w/\"><script>alert('p1')</script>.py",
                "command": "str_replace",
                "old_str": XSS,
                "new_str": MARKDOWN,
                "thought": XSS,
            },
        },
        {
            "id": 6,
            "source": "agent",
            "action": "run_ipython",
            "args": {"code": XSS, "thought": ""},
        },
        {
            "id": 7,
            "source": "agent",
            "action": "task_tracking",
            "args": {
                "command": "plan",
                "task_list": [
                    {"title": XSS, "status": "\"><script>alert('k1')</script>", "notes": XSS}
                ],
            },
        },
        {
            "id": 8,
            "source": "agent",
            "action": "finish",
            "args": {"final_thought": MARKDOWN, "outputs": {XSS: XSS}},
        },
    ]
    for number, url in enumerate(URLS, start=10):
        events.append({"id": number, "source": "agent", "action": "browse", "args": {"url": url}})
        events.append(
            {
                "id": number + 100,
                "source": "environment",
                "cause": number,
                "observation": "browse",
                "content": MARKDOWN,
                "extras": {"url": url, "error": False},
            }
        )
    return events


@pytest.fixture(scope="module")
def hostile(django_db_setup, django_db_blocker):
    """A public trajectory made of hostile text (its owner, and a staff account for admin)."""
    with django_db_blocker.unblock():
        owner = User.objects.create_user("hostile-owner", password="x")
        staff = User.objects.create_superuser("hostile-staff", password="x")
        staff.groups.add(Group.objects.get_or_create(name="moderators")[0])
        result = trajectory_ingest(
            data=orjson.dumps(hostile_events()),
            user=owner,
            options=ShareOptions(
                visibility="private",
                title=(XSS + CONTROL)[:300],
                feedback_text=MARKDOWN + XSS + CONTROL,
                filename='x"; filename=evil.html\r\nX-Injected: 1',
                client_ip="10.66.0.1",
            ),
        )
        assert result.stored, result.errors
        trajectory = result.stored[0].trajectory
        Trajectory.objects.filter(pk=trajectory.pk).update(
            visibility="public",
            review_state="approved",
            license="MIT",
            agent=(XSS + CONTROL)[:100],
            model_name=(XSS + CONTROL)[:200],
            agent_version=XSS[:100],
            metadata={XSS: XSS, "total_tokens": XSS, "total_cost": XSS},
            redactions={"alert('s1')": "<X_1>"},
        )
        trajectory.refresh_from_db()
        try:
            yield trajectory, owner, staff
        finally:
            Trajectory.objects.filter(pk=trajectory.pk).delete()
            Image.objects.filter(trajectory_links__isnull=True).delete()
            Tombstone.objects.filter(share_id=trajectory.share_id).delete()
            purge_audit_entries([trajectory.share_id])
            User.objects.filter(pk__in=[owner.pk, staff.pk]).delete()


def viewer_urls(trajectory: Trajectory) -> dict[str, tuple[str, dict]]:
    base = trajectory.get_absolute_url()
    fetch = {"HTTP_X_REQUESTED_WITH": "fetch"}
    urls = {"page": (base, {}), "events": (f"{base}events?after=0&limit=500", fetch)}
    for event in Event.objects.filter(trajectory=trajectory).order_by("position"):
        step = event.position + 1
        urls[f"JSON {step}"] = (f"{base}events/{step}/json", fetch)
        urls[f"block {step}"] = (f"{base}events/{step}/blocks/0", fetch)
    urls["JSON page"] = (f"{base}events/1/json", {})
    urls["block page"] = (f"{base}events/1/blocks/0", {})
    return urls


# ---- tests ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["visitor", "owner", "staff"])
def test_the_trajectory_page_and_its_fragments_run_nothing(hostile, who):
    trajectory, owner, staff = hostile
    client = Client()
    if who != "visitor":
        client.force_login(owner if who == "owner" else staff)
    problems = []
    for name, (url, headers) in viewer_urls(trajectory).items():
        response = client.get(url, **headers)
        if response.status_code == 404 and name.startswith("block"):
            continue  # a card without blocks
        problems += check(response, name)
    assert problems == [], "\n".join(problems)


def test_the_hostile_text_is_shown_as_text(hostile):
    trajectory, _, _ = hostile
    page = Client().get(trajectory.get_absolute_url()).content.decode()
    assert "&lt;script&gt;alert(" in page
    # The event type is an attribute value and a label, never markup.
    assert 'data-type="run&quot; onclick=&quot;alert(' in page
    assert "javascript:alert(&#x27;u1&#x27;)" in page  # the URL is shown, not linked


def test_site_pages_that_list_it_run_nothing(hostile):
    trajectory, owner, staff = hostile
    visitor = Client()
    signed_in = Client()
    signed_in.force_login(owner)
    problems = []
    for client, url in (
        (visitor, "/"),
        (visitor, "/browse/"),
        (visitor, "/browse/?q=alert&agent=%3Cscript%3E"),
        (visitor, f"/browse/?q={XSS[:150]}"),
        (visitor, f"/t/{trajectory.share_id}/unlock"),
        (signed_in, "/me/"),
        (signed_in, reverse("me-delete", args=[trajectory.share_id])),
    ):
        problems += check(client.get(url), url)
    assert problems == [], "\n".join(problems)


def test_django_admin_shows_it_inertly(hostile):
    trajectory, _, staff = hostile
    client = Client()
    client.force_login(staff)
    event = Event.objects.filter(trajectory=trajectory).first()
    problems = []
    for url in (
        reverse("admin:trajectories_trajectory_changelist"),
        reverse("admin:trajectories_trajectory_change", args=[trajectory.pk]),
        reverse("admin:trajectories_event_changelist") + f"?q={trajectory.share_id}",
        reverse("admin:trajectories_event_change", args=[event.pk]),
    ):
        response = client.get(url)
        # Admin's own pages use inline <script> data blocks and styles of Django's making; what
        # matters here is that none of the trajectory's text became markup.
        page = Page(response.content.decode())
        problems += [
            f"{url}: {problem}"
            for problem in page.problems
            if "alert(" in problem or "javascript" in problem.lower()
        ]
        assert "<script>alert(" not in response.content.decode(), url
    assert problems == [], "\n".join(problems)


def test_the_feed_is_well_formed_whatever_the_text(hostile):
    trajectory, _, _ = hostile
    response = Client().get("/feed.atom")
    assert response.status_code == 200
    feed = ElementTree.fromstring(response.content)
    namespace = {"atom": "http://www.w3.org/2005/Atom"}
    (entry,) = [
        entry
        for entry in feed.findall("atom:entry", namespace)
        if trajectory.share_id in entry.findtext("atom:id", "", namespace)
    ]
    title = entry.findtext("atom:title", "", namespace)
    assert "<script>" in title  # as text: the feed reader escapes it
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", response.content.decode())


def test_downloads_keep_the_file_name_inert(hostile):
    trajectory, owner, _ = hostile
    client = Client()
    client.force_login(owner)
    response = client.get(f"/api/v1/trajectories/{trajectory.share_id}/download?format=original")
    assert response.status_code == 200
    assert "X-Injected" not in response
    disposition = response["Content-Disposition"]
    assert re.fullmatch(r'attachment; filename="?[A-Za-z0-9._-]+"?', disposition), disposition
    assert response["Content-Type"] in ("application/json", "application/octet-stream")
