"""Deletion passwords cannot be guessed, nor used to learn which ids exist (issue 6): the API's
DELETE with X-Deletion-Password answers 404 for a wrong password and an unknown id alike, counts
failures in one limit per client address shared with the unlock and delete pages (429 with
Retry-After), and both paths cost the same (the same hash function, the same number of times)."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.trajectories.models import Trajectory
from apps.trajectories.services import passwords
from tests.ingest_helpers import ingest, make_trajectory, v0_events

pytestmark = pytest.mark.django_db

URL = "/api/v1/trajectories"
UNKNOWN = "e" * 64


@pytest.fixture
def anonymous_share() -> tuple[Trajectory, str]:
    stored = ingest(v0_events(2, task="mine")).stored[0]
    return stored.trajectory, stored.password


def delete(client: Client, share_id: str, password: str, **extra):
    return client.delete(f"{URL}/{share_id}", HTTP_X_DELETION_PASSWORD=password, **extra)


def test_a_wrong_password_and_an_unknown_id_get_the_same_404(anonymous_share, owner):
    trajectory, _ = anonymous_share
    owned = make_trajectory(owner=owner, visibility="private")
    answers = [
        delete(Client(REMOTE_ADDR=f"10.1.0.{n}"), share_id, "wrong-guess")
        for n, share_id in enumerate((trajectory.share_id, UNKNOWN, owned.share_id))
    ]
    assert [answer.status_code for answer in answers] == [404, 404, 404]
    assert len({answer.content for answer in answers}) == 1
    assert Trajectory.objects.filter(pk__in=[trajectory.pk, owned.pk]).count() == 2


def test_wrong_passwords_are_rate_limited_across_the_api_and_the_pages(anonymous_share):
    """The report: 40 guesses in 0.1 s were all answered (403) by the API while the unlock page
    stopped after 10. Now the two share one count per address."""
    trajectory, password = anonymous_share
    client = Client(REMOTE_ADDR="10.2.0.1")
    for n in range(passwords.PASSWORD_ATTEMPTS // 2):
        assert delete(client, trajectory.share_id, f"guess-{n}").status_code == 404
    for n in range(passwords.PASSWORD_ATTEMPTS - passwords.PASSWORD_ATTEMPTS // 2):
        page = client.post(f"/t/{UNKNOWN}/unlock", {"password": f"page-guess-{n}"})
        assert page.status_code == 404
    blocked = delete(client, trajectory.share_id, password)  # even the right one, now
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert "too many wrong deletion passwords" in blocked.json()["error"]["message"]
    page = client.post(f"/t/{trajectory.share_id}/unlock", {"password": password})
    assert page.status_code == 429 and int(page["Retry-After"]) > 0
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
    # Another address is not blocked, and the right password still deletes.
    assert delete(Client(REMOTE_ADDR="10.2.0.2"), trajectory.share_id, password).status_code == 204
    assert not Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_an_unknown_id_costs_what_a_wrong_password_costs(anonymous_share, monkeypatch):
    """The unlock page checked an unknown id with a PBKDF2 hash and a real one with SHA-256; the
    API did no hashing at all for an unknown id. Both now run the same hash function the same
    number of times, through every path."""
    trajectory, _ = anonymous_share
    # A share re-shared a few times holds a few hashes: it must still cost what an unknown does.
    stored = ingest(v0_events(2, task="twice"), email="twice@example.org").stored[0]
    ingest(v0_events(3, task="twice"), email="twice@example.org")
    reshared = Trajectory.objects.get(pk=stored.trajectory.pk)
    assert len(reshared.deletion_password_hashes) == 2
    calls: list[str] = []
    real_digest = passwords._digest

    def counting(salt: str, password: str) -> str:
        calls.append(salt)
        return real_digest(salt, password)

    monkeypatch.setattr(passwords, "_digest", counting)
    counts: dict[tuple[str, str], int] = {}
    for label, share_id in (
        ("real", trajectory.share_id),
        ("reshared", reshared.share_id),
        ("unknown", UNKNOWN),
    ):
        for path in ("api", "unlock", "delete"):
            client = Client(REMOTE_ADDR="10.3.0.1")
            calls.clear()
            if path == "api":
                answer = delete(client, share_id, "wrong")
            elif path == "unlock":
                answer = client.post(f"/t/{share_id}/unlock", {"password": "wrong"})
            else:
                answer = client.post(
                    f"/t/{share_id}/delete", {"password": "wrong", "confirm": "yes"}
                )
            assert answer.status_code == 404, (label, path)
            counts[(label, path)] = len(calls)
    assert set(counts.values()) == {passwords.MIN_HASHES_CHECKED}, counts


def test_passwords_stop_opening_a_share_once_an_account_owns_it(anonymous_share, owner):
    trajectory, password = anonymous_share
    Trajectory.objects.filter(pk=trajectory.pk).update(owner=owner)
    assert delete(Client(), trajectory.share_id, password).status_code == 404
    assert Client().post(
        f"/t/{trajectory.share_id}/unlock", {"password": password}
    ).status_code == (404)
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()
