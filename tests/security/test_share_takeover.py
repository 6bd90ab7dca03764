"""Nobody can take over a share (issue 6): a re-share continues a stored trajectory only when its
sender proves to be the same submitter (DESIGN.md "Share API"). An email proves nothing, nor do
events anyone could have read, nor a session id an importer derives from the file; a client's
session id is a secret, kept only as an HMAC and never shown."""

from __future__ import annotations

import orjson
import pytest
from django.test import Client

from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.dedup import session_digest
from tests.ingest_helpers import ingest, ingest_one, share_payload, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
EMAIL = "carol@victim-mail.test"


def share(client: Client, events: list[dict], *, email: str = EMAIL, permissions: str) -> dict:
    response = client.post(
        "/share_od_trajectory",
        orjson.dumps(share_payload(events, email=email, permissions=permissions)),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["body"]


@pytest.fixture
def public_share(django_capture_on_commit_callbacks) -> tuple[str, str]:
    """Carol shares publicly with her email; the scan approves it. (id, password)"""
    with django_capture_on_commit_callbacks(execute=True):
        body = share(Client(), v0_events(3, task="deploy it"), permissions="public")
    trajectory = Trajectory.objects.get(share_id=body["feedback_id"])
    assert trajectory.is_public and trajectory.published_at is not None
    return body["feedback_id"], body["password"]


def listed_ids() -> dict[str, list[str]]:
    """The ids each public list shows."""
    api = Client().get(URL).json()["results"]
    feed = Client().get("/feed.atom").content.decode()
    browse = Client().get("/browse/").content.decode()
    ids = list(Trajectory.objects.values_list("share_id", flat=True))
    return {
        "api": [item["id"] for item in api],
        "feed": [share_id for share_id in ids if share_id in feed],
        "browse": [share_id for share_id in ids if share_id in browse],
    }


def test_the_issues_takeover_with_the_email_and_the_public_download_fails(public_share):
    """The report: share publicly with email X, download the public OpenHands export, post it
    back with email X and permissions private. It used to answer the same feedback_id, turn the
    public page 404 and hand out a password that deleted it."""
    victim_id, victim_password = public_share
    before = Trajectory.objects.get(share_id=victim_id)
    export = orjson.loads(Client().get(f"{URL}/{victim_id}/download?format=openhands").content)
    attacker = Client(REMOTE_ADDR="10.99.0.1")
    answer = share(attacker, export, permissions="private")

    assert answer["feedback_id"] != victim_id
    after = Trajectory.objects.get(share_id=victim_id)
    assert (after.visibility, after.review_state, after.num_events) == (
        "public",
        "approved",
        before.num_events,
    )
    assert after.deletion_password_hashes == before.deletion_password_hashes
    assert Client().get(f"/t/{victim_id}/").status_code == 200
    refused = attacker.delete(f"{URL}/{victim_id}", HTTP_X_DELETION_PASSWORD=answer["password"])
    assert refused.status_code == 404
    assert attacker.post(
        f"/t/{victim_id}/unlock", {"password": answer["password"]}
    ).status_code == (404)
    assert Trajectory.objects.filter(share_id=victim_id).exists()
    # The copy is its own trajectory, in the original's chain, and private.
    copy = Trajectory.objects.get(share_id=answer["feedback_id"])
    assert copy.visibility == "private" and copy.chain_key == after.chain_key == victim_id
    for surface, ids in listed_ids().items():
        assert ids == [victim_id], surface
    # The sharer's own password still works.
    owner = Client()
    assert owner.post(f"/t/{victim_id}/unlock", {"password": victim_password}).status_code == 302


def test_a_later_private_reshare_of_a_public_share_does_not_unpublish_it(public_share):
    """Without proof (no session id, and events that were public), even the sharer's own later
    private re-share is a new trajectory: it cannot silently hide the public one."""
    victim_id, _ = public_share
    longer = share(Client(), v0_events(4, task="deploy it"), permissions="private")
    assert longer["feedback_id"] != victim_id
    assert Trajectory.objects.get(share_id=victim_id).is_public
    assert Client().get(f"/t/{victim_id}/").status_code == 200


def test_a_longer_public_copy_is_listed_instead_and_the_pages_link_each_other(
    public_share, django_capture_on_commit_callbacks
):
    """The only effect an impostor who knows the email can have: a longer copy is listed
    instead of the original, whose link, password and visibility stay as they were."""
    victim_id, victim_password = public_share
    with django_capture_on_commit_callbacks(execute=True):
        longer = share(
            Client(REMOTE_ADDR="10.99.0.2"), v0_events(5, task="deploy it"), permissions="public"
        )
    longer_id = longer["feedback_id"]
    assert longer_id != victim_id and Trajectory.objects.get(share_id=longer_id).is_public
    for surface, ids in listed_ids().items():
        assert ids == [longer_id], surface
    assert [item["id"] for item in Client().get(URL, {"q": "deploy"}).json()["results"]] == [
        longer_id
    ]
    original_page = Client().get(f"/t/{victim_id}/").content.decode()
    assert f"/t/{longer_id}/" in original_page
    assert f"/t/{victim_id}/" in Client().get(f"/t/{longer_id}/").content.decode()
    assert Client().post(f"/t/{victim_id}/unlock", {"password": victim_password}).status_code == 302
    # A member that is not in public() is never linked, and the original is listed again.
    Trajectory.objects.filter(share_id=longer_id).update(review_state="held")
    assert f"/t/{longer_id}/" not in Client().get(f"/t/{victim_id}/").content.decode()
    assert listed_ids()["api"] == [victim_id]


def test_a_never_shown_share_continues_with_its_events_and_the_sender_sets_visibility():
    """Events of a share nobody but its holder has seen are a proof: OpenHands' re-share of a
    private session continues it, and the proven sender's choice of visibility holds."""
    first = share(Client(), v0_events(2, task="private work"), permissions="private")
    again = share(Client(), v0_events(3, task="private work"), permissions="public")
    assert again["feedback_id"] == first["feedback_id"]
    trajectory = Trajectory.objects.get(share_id=first["feedback_id"])
    assert trajectory.visibility == "public" and trajectory.num_events == 7


def test_a_client_session_id_proves_only_with_the_email():
    """Knowing or guessing another submitter's session id is not enough: without the same
    email (or account) it continues nothing and replaces neither events nor title."""
    secret = "oh-session-7f3a"
    events = v0_events(2, task="ship the fix")
    victim = ingest_one(events, email=EMAIL, session_id=secret, title="Carol's fix")
    other = v0_events(1, task="something else entirely")
    for email in ("", "mallory@example.org"):
        copy = ingest_one(other, email=email, session_id=secret, title="pwned")
        assert copy.share_id != victim.share_id
    victim.refresh_from_db()
    assert (victim.title, victim.num_events) == ("Carol's fix", 5)
    # With the email, the session id is the submitter's proof: their next step continues it.
    same = ingest(other, email=EMAIL, session_id=secret).stored[0]
    assert same.trajectory.share_id == victim.share_id and not same.created


def test_a_signed_in_session_id_stays_within_its_account(owner, other_user):
    mine = ingest_one(v0_events(2, task="mine"), user=owner, session_id="s-1", title="Mine")
    theirs = ingest_one(v0_events(1, task="theirs"), user=other_user, session_id="s-1")
    assert theirs.share_id != mine.share_id
    mine.refresh_from_db()
    assert mine.title == "Mine" and mine.num_events == 5


def eval_row(history_text: str) -> dict:
    return {
        "instance_id": "django__django-11099",
        "instruction": "fix the validator",
        "metadata": {"eval_output_dir": "outputs/gpt-4o", "agent_class": "CodeActAgent"},
        "history": [
            {"id": 0, "source": "user", "action": "message", "args": {"content": history_text}}
        ],
    }


def test_a_session_id_derived_from_the_file_never_continues_an_anonymous_share():
    """An evaluation row's instance id and output folder are in the file (and in public
    datasets): they make a session id for an account's own re-uploads, never a proof."""
    victim = ingest_one(eval_row("the real run"), email=EMAIL)
    assert victim.client_session_id == ""
    forged = ingest_one(eval_row("a forged run"), email=EMAIL)
    assert forged.share_id != victim.share_id
    texts = "\n".join(Event.objects.filter(trajectory=victim).values_list("text", flat=True))
    assert texts.count("the real run") == 1 and "forged" not in texts


def test_the_session_id_is_never_stored_echoed_or_exported(client_as, owner, staff):
    secret = "sess-SECRET-9d2e1b"
    answer = Client().post(
        f"{URL}?email={EMAIL}&session_id={secret}",
        orjson.dumps(v0_events(2)),
        content_type="application/json",
    )
    assert answer.status_code == 201 and secret not in answer.content.decode()
    item = answer.json()["trajectories"][0]
    signed_in = client_as(owner).post(
        f"{URL}?session_id={secret}&visibility=public&license_agreed=true",
        orjson.dumps(v0_events(3)),
        content_type="application/json",
    )
    assert signed_in.status_code == 201 and secret not in signed_in.content.decode()
    mine = signed_in.json()["trajectories"][0]["id"]
    assert not Trajectory.objects.filter(client_session_id__contains=secret).exists()
    assert Trajectory.objects.get(share_id=item["id"]).client_session_id == session_digest(secret)

    site = Client()
    site.force_login(owner)
    holder = Client()
    assert holder.post(f"/t/{item['id']}/unlock", {"password": item["password"]}).status_code == 302
    surfaces = [
        holder.get(f"/t/{item['id']}/"),
        holder.get(f"{URL}/{item['id']}/download?format=original"),
        holder.get(f"{URL}/{item['id']}/download?format=openhands"),
        client_as(owner).get(f"{URL}/{mine}"),
        client_as(owner).get(f"{URL}?owner=me"),
        client_as(owner).get(f"{URL}/{mine}/download?format=original"),
        site.get(f"/t/{mine}/"),
        site.get("/me/"),
    ]
    admin = Client()
    admin.force_login(staff)
    pk = Trajectory.objects.get(share_id=mine).pk
    surfaces.append(admin.get(f"/admin/trajectories/trajectory/{pk}/change/"))
    for index, response in enumerate(surfaces):
        assert response.status_code == 200, index
        assert secret not in response.content.decode(), response
