"""The dashboard (/me/) and the owner's controls: list, filter, sort, edit, visibility, delete,
one at a time and in bulk (a plain form with checkboxes, CSRF-checked)."""

from __future__ import annotations

import re

import pytest
from allauth.account.models import EmailAddress
from django.test import Client

from apps.trajectories.models import Tombstone, Trajectory
from tests.moderation.conftest import make_finding
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def _finding(trajectory: Trajectory, n: int = 1) -> None:
    for i in range(n):
        make_finding(
            trajectory,
            end=3,
            kind="email",
            category="personal",
            placeholder=f"<EMAIL_{i + 1}>",
            preview="a…b",
        )


def _rows(html: str) -> list[str]:
    return re.findall(r'name="ids" value="([0-9a-f]{64})"', html)


def test_me_requires_sign_in(client):
    response = client.get("/me/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_login_then_lands_on_me(client, owner):
    # A signed-up account's address is verified (TRAJHUB_EMAIL_VERIFICATION is mandatory on
    # PostgreSQL: without one, the form would ask to confirm it first).
    EmailAddress.objects.create(user=owner, email="owner@example.org", verified=True, primary=True)
    response = client.post(
        "/accounts/login/", {"login": "owner", "password": "pw-owner"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/me/"
    assert "Signed in as <strong>owner</strong>" in response.content.decode()


def test_me_lists_own_trajectories_in_every_state_with_findings_and_size(
    signed_in, owner, other_user, django_assert_num_queries
):
    private = make_trajectory(title="My private", owner=owner, visibility="private", num_bytes=2048)
    held = make_trajectory(title="My held", owner=owner, review_state="held")
    make_trajectory(title="My public", owner=owner)
    make_trajectory(title="Someone else's", owner=other_user)
    _finding(held, 3)

    # session, user, count, page (findings counted in it), unread notices
    with django_assert_num_queries(5):
        response = signed_in.get("/me/")
    html = response.content.decode()
    assert "My private" in html and "My held" in html and "My public" in html
    assert "Someone else" not in html
    assert "Held for review" in html and "Private" in html
    assert "2.0\xa0KB" in html
    row = html[html.index(held.share_id) :]
    assert re.search(r"<td data-label=\"findings\">3</td>", row[: row.index("</tr>")])
    assert 'content="noindex' in html
    assert private.share_id in _rows(html)

    # The query count does not grow with the rows.
    for index in range(12):
        _finding(make_trajectory(title=f"More {index}", owner=owner), 2)
    with django_assert_num_queries(5):
        signed_in.get("/me/")


def test_filter_and_sort(signed_in, owner):
    small = make_trajectory(title="alpha small", owner=owner, visibility="private", num_bytes=10)
    big = make_trajectory(title="beta big", owner=owner, num_bytes=10_000)
    held = make_trajectory(title="gamma held", owner=owner, review_state="held", num_bytes=500)

    assert _rows(signed_in.get("/me/?visibility=private").content.decode()) == [small.share_id]
    assert _rows(signed_in.get("/me/?review_state=held").content.decode()) == [held.share_id]
    assert _rows(signed_in.get("/me/?q=BETA").content.decode()) == [big.share_id]
    by_size = _rows(signed_in.get("/me/?ordering=-size").content.decode())
    assert by_size == [big.share_id, held.share_id, small.share_id]
    assert _rows(signed_in.get("/me/?ordering=created").content.decode())[0] == small.share_id
    # Nonsense in the query falls back to everything, newest first (not an error).
    assert len(_rows(signed_in.get("/me/?visibility=x&ordering=drop").content.decode())) == 3
    assert "None of your trajectories match" in signed_in.get("/me/?q=zzz").content.decode()


def test_bulk_make_public_needs_the_licence_and_changes_all_or_none(signed_in, owner):
    a = make_trajectory(owner=owner, visibility="private", license="")
    b = make_trajectory(owner=owner, visibility="private", license="")
    ids = [a.share_id, b.share_id]

    response = signed_in.post("/me/bulk", {"ids": ids, "action": "make_public"}, follow=True)
    assert "Nothing was changed" in response.content.decode()
    assert set(Trajectory.objects.values_list("visibility", flat=True)) == {"private"}

    response = signed_in.post(
        "/me/bulk",
        {"ids": ids, "action": "make_public", "license_agreed": "yes", "next": "/me/?q=x"},
    )
    assert response.status_code == 302 and response["Location"] == "/me/?q=x"
    for trajectory in (a, b):
        trajectory.refresh_from_db()
        assert trajectory.visibility == "public" and trajectory.license == "MIT"

    signed_in.post("/me/bulk", {"ids": ids, "action": "make_private"})
    assert set(Trajectory.objects.values_list("visibility", flat=True)) == {"private"}


def test_bulk_delete_asks_first_then_deletes_with_tombstones(signed_in, owner, other_user):
    mine = [make_trajectory(title=f"Doomed {i}", owner=owner) for i in range(3)]
    theirs = make_trajectory(owner=other_user)
    ids = [t.share_id for t in mine[:2]] + [theirs.share_id]

    confirm = signed_in.post("/me/bulk", {"ids": ids, "action": "delete"})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "Delete 2 trajectories" in html
    assert "Doomed 0" in html and "Doomed 1" in html and "Doomed 2" not in html
    assert Trajectory.objects.count() == 4  # nothing gone yet

    signed_in.post("/me/bulk", {"ids": ids, "action": "delete", "confirm": "yes"})
    assert set(Trajectory.objects.values_list("pk", flat=True)) == {mine[2].pk, theirs.pk}
    assert set(Tombstone.objects.values_list("share_id", flat=True)) == set(ids[:2])


def test_bulk_without_a_choice_or_ticks_changes_nothing(signed_in, owner):
    trajectory = make_trajectory(owner=owner, visibility="private")
    response = signed_in.post("/me/bulk", {"ids": [trajectory.share_id]}, follow=True)
    assert "Choose what to do" in response.content.decode()
    response = signed_in.post("/me/bulk", {"action": "make_private"}, follow=True)
    assert "Tick at least one" in response.content.decode()
    # A foreign redirect target is not followed.
    response = signed_in.post(
        "/me/bulk", {"action": "make_private", "next": "https://evil.example/"}
    )
    assert response["Location"] == "/me/"


def test_bulk_form_needs_the_csrf_token(owner):
    trajectory = make_trajectory(owner=owner, visibility="public")
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post("/me/bulk", {"ids": [trajectory.share_id], "action": "delete"})
    assert response.status_code == 403
    html = client.get("/me/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in html and 'action="/me/bulk"' in html
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_others_cannot_touch_through_the_bulk_form(client, owner, other_user, moderator, staff):
    trajectory = make_trajectory(owner=owner, visibility="public", license="MIT")
    for user in (other_user, moderator, staff):
        client.force_login(user)
        for action in ("make_private", "delete"):
            client.post(
                "/me/bulk", {"ids": [trajectory.share_id], "action": action, "confirm": "yes"}
            )
    trajectory.refresh_from_db()
    assert trajectory.visibility == "public"


def test_edit_saves_and_changed_text_is_scanned_again(
    signed_in, owner, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, title="Before", visibility="public", license="MIT")
    url = f"/me/t/{trajectory.share_id}/edit"
    page = signed_in.get(url).content.decode()
    assert 'value="Before"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(
            url,
            {
                "title": f"Token {GITHUB_TOKEN}",
                "polarity": "negative",
                "feedback_text": "it looped",
                "visibility": "public",
            },
        )
    assert response.status_code == 302 and response["Location"] == trajectory.get_absolute_url()
    trajectory.refresh_from_db()
    assert trajectory.polarity == "negative" and trajectory.feedback_text == "it looped"
    # The new title held a secret: the scan ran again and held it for a moderator.
    assert trajectory.review_state == "held"
    assert not Trajectory.objects.public().filter(pk=trajectory.pk).exists()


def test_edit_to_public_needs_the_licence(signed_in, owner):
    trajectory = make_trajectory(owner=owner, visibility="private", license="")
    url = f"/me/t/{trajectory.share_id}/edit"
    data = {"title": "t", "polarity": "none", "feedback_text": "", "visibility": "public"}
    response = signed_in.post(url, data)
    assert response.status_code == 400 and "agree to the site" in response.content.decode()
    trajectory.refresh_from_db()
    assert trajectory.visibility == "private"
    signed_in.post(url, {**data, "license_agreed": "on"})
    trajectory.refresh_from_db()
    assert trajectory.visibility == "public" and trajectory.license == "MIT"


def test_edit_refuses_a_title_over_the_limit(signed_in, owner):
    trajectory = make_trajectory(owner=owner, title="Keep")
    response = signed_in.post(
        f"/me/t/{trajectory.share_id}/edit",
        {"title": "x" * 301, "polarity": "none", "visibility": "private"},
    )
    assert response.status_code == 400 and "at most 300" in response.content.decode()
    trajectory.refresh_from_db()
    assert trajectory.title == "Keep"


def test_visibility_button_on_the_owners_page(signed_in, owner):
    trajectory = make_trajectory(owner=owner, visibility="private", license="")
    url = f"/me/t/{trajectory.share_id}/visibility"
    page = signed_in.get(trajectory.get_absolute_url()).content.decode()
    assert f'action="{url}"' in page and "Make public" in page
    assert f'href="/me/t/{trajectory.share_id}/edit' in page
    assert f'href="/me/t/{trajectory.share_id}/delete"' in page

    response = signed_in.post(url, {"visibility": "public"}, follow=True)
    said = response.content.decode()
    # In a page's words, not the API's (issue 20: "send license_agreed=true").
    assert "Not changed" in said and "tick the box agreeing to the site" in said
    assert "license_agreed" not in said.split("<form")[0] and "send license_agreed" not in said
    response = signed_in.post(
        url,
        {"visibility": "public", "license_agreed": "yes", "next": trajectory.get_absolute_url()},
    )
    assert response["Location"] == trajectory.get_absolute_url()
    trajectory.refresh_from_db()
    assert trajectory.visibility == "public"
    assert "Make private" in signed_in.get(trajectory.get_absolute_url()).content.decode()


def test_only_the_owner_sees_the_controls_on_the_page(client, owner, other_user, moderator, staff):
    trajectory = make_trajectory(owner=owner, visibility="public")
    marker = f"/me/t/{trajectory.share_id}/"
    for user in (None, other_user, moderator, staff):
        viewer = Client()
        if user is not None:
            viewer.force_login(user)
        response = viewer.get(trajectory.get_absolute_url())
        assert response.status_code == 200
        assert marker not in response.content.decode(), user
    client.force_login(owner)
    assert marker in client.get(trajectory.get_absolute_url()).content.decode()


def test_the_password_link_shows_only_on_anonymous_shares(client, owner, other_user):
    """Issue 20: "Manage this share (password)" showed on trajectories owned by an account,
    which have no password."""
    owned = make_trajectory(owner=owner, visibility="public", title="owned")
    anonymous = make_trajectory(owner=None, visibility="public", title="anonymous")
    for user in (None, other_user):
        viewer = Client()
        if user is not None:
            viewer.force_login(user)
        assert "Manage this share" not in viewer.get(owned.get_absolute_url()).content.decode()
        assert "Manage this share" in viewer.get(anonymous.get_absolute_url()).content.decode()


def test_owner_deletes_one_after_confirming(client, owner, other_user):
    mine = make_trajectory(title="Delete me", owner=owner, visibility="private")
    url = f"/me/t/{mine.share_id}/delete"

    assert client.get(url).status_code == 302  # sign in first
    client.force_login(other_user)
    assert client.get(url).status_code == 404  # not theirs: as if it did not exist
    assert client.post(url, {"confirm": "yes"}).status_code == 404
    client.force_login(owner)
    assert f'href="{url}"' in client.get("/me/").content.decode()
    assert "Delete me" in client.get(url).content.decode()
    assert client.post(url).status_code == 400  # not confirmed
    assert Trajectory.objects.filter(pk=mine.pk).exists()

    response = client.post(url, {"confirm": "yes"}, follow=True)

    assert response.redirect_chain[-1][0] == "/me/"
    assert "The trajectory has been deleted." in response.content.decode()
    assert not Trajectory.objects.filter(pk=mine.pk).exists()
    assert Tombstone.objects.get(share_id=mine.share_id).reason == "owner"


def test_download_link_gives_the_owner_the_original(signed_in, owner, private_storage):
    from tests.ingest_helpers import make_trajectory as ingest_trajectory

    trajectory = ingest_trajectory(owner=owner, visibility="private")
    html = signed_in.get("/me/").content.decode()
    link = f"/api/v1/trajectories/{trajectory.share_id}/download?format=original"
    assert f'href="{link}"' in html
    response = signed_in.get(link)
    assert response.status_code == 200 and response.content.startswith((b"[", b"{"))


def test_a_private_trajectory_the_scan_held_reads_private_not_held_for_review(signed_in, owner):
    # The scan holds a private trajectory with findings as it would a public one; nothing of it
    # waits for a moderator while it stays private, yet the dashboard, its page and its edit and
    # delete pages said "Held for review".
    private_held = make_trajectory(
        title="My private one", owner=owner, visibility="private", review_state="held"
    )
    _finding(private_held, 2)
    public_held = make_trajectory(title="My public one", owner=owner, review_state="held")
    html = signed_in.get("/me/").content.decode()
    row = html[html.index(private_held.share_id) :]
    row = row[: row.index("</tr>")]
    assert "Held for review" not in row
    assert re.findall(r'<span class="badge state-\w+">([^<]+)</span>', row) == ["Private"] * 2
    row = html[html.index(public_held.share_id) :]
    assert "Held for review" in row[: row.index("</tr>")]  # a public one does wait
    base = private_held.get_absolute_url()
    for page in (
        base,
        f"/me/t/{private_held.share_id}/edit",
        f"/me/t/{private_held.share_id}/delete",
    ):
        response = signed_in.get(page)
        assert response.status_code == 200, page
        assert "Held for review" not in response.content.decode(), page
    assert "Held for review" in signed_in.get(public_held.get_absolute_url()).content.decode()
