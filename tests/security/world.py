"""One set of trajectories in every state, built once per test module.

The security tests look at many surfaces as many callers; building the trajectories (through the
real ingest service: events, raw copy, images) for each test would make them slow. A module
builds its `World` once with `build_world()` inside a module-scoped fixture (see `world_fixture`)
and every test reads it inside its own rolled-back transaction. Everything is removed at the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson
from django.contrib.auth.models import Group
from django.test import Client

from apps.accounts.models import User
from apps.trajectories.models import Image, Tombstone, Trajectory, TrajectoryImage
from apps.trajectories.selectors.viewer import UNLOCKED_SESSION_KEY
from apps.trajectories.services import (
    ShareOptions,
    trajectory_delete,
    trajectory_ingest,
    trajectory_search_refresh,
)
from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh
from tests.trajectories.viewer_factories import data_url, png

# Values a scan would have redacted, and the placeholders visitors must see instead.
SECRET_EMAIL = "alice.leak@corp-mail.test"
SECRET_KEY = "sk-live-9f8e7d6c5b4a39281706aabbccddeeff0011"
REDACTIONS = {SECRET_EMAIL: "<EMAIL_1>", SECRET_KEY: "<OPENAI_API_KEY_1>"}
# An anonymous sharer's contact address: never shown to anyone, never logged.
CONTACT_EMAIL = "contact.person@sharer-mail.test"

# Every state a trajectory can be in, by a one-word name (also its marker in titles and text).
STATES: dict[str, tuple[str, str]] = {
    "public": ("public", "approved"),
    "private": ("private", "approved"),
    "privpending": ("private", "pending"),
    "pending": ("public", "pending"),
    "held": ("public", "held"),
    "rejected": ("public", "rejected"),
    "hidden": ("public", "hidden"),
}
NOT_PUBLIC = [name for name in STATES if name != "public"]
CALLERS = ["anonymous", "owner", "other", "moderator", "staff"]
# Who may see a trajectory that is not public (its owner, moderators, staff).
MANAGERS = {"owner", "moderator", "staff"}


def marker(state: str) -> str:
    """A word found only in the trajectory of this state (title, events, agent, model)."""
    return f"quux{state}"


SHARED_IMAGE = png(shade=250)  # in every trajectory of the world
SHARED_IMAGE_SHA = hashlib.sha256(SHARED_IMAGE).hexdigest()


def v0_events(word: str, shade: int) -> list[dict]:
    """An OpenHands V0 session mentioning `word` and the secrets, with two screenshots: one
    shared by every trajectory, one its own."""
    task = f"Find {word} and mail {SECRET_EMAIL} the key {SECRET_KEY}"
    return [
        {
            "id": 1,
            "timestamp": "2025-03-01T10:00:00",
            "source": "user",
            "message": task,
            "action": "message",
            "args": {"content": task, "image_urls": None, "wait_for_response": False},
        },
        {
            "id": 2,
            "timestamp": "2025-03-01T10:00:10",
            "source": "agent",
            "message": f"Running command: echo {word}",
            "action": "run",
            "args": {"command": f"echo {word} {SECRET_EMAIL}", "thought": f"mail {SECRET_EMAIL}"},
        },
        {
            "id": 3,
            "timestamp": "2025-03-01T10:00:20",
            "source": "agent",
            "message": f"Command `echo {word}` executed with exit code 0.",
            "cause": 2,
            "observation": "run",
            "content": f"{word} {SECRET_EMAIL}\n{SECRET_KEY}\n",
            "extras": {"command": f"echo {word}", "metadata": {"exit_code": 0}},
        },
        {
            "id": 4,
            "timestamp": "2025-03-01T10:00:30",
            "source": "agent",
            "message": "I am browsing the URL: https://example.org/",
            "action": "browse",
            "args": {"url": "https://example.org/", "thought": ""},
        },
        {
            "id": 5,
            "timestamp": "2025-03-01T10:00:40",
            "source": "environment",
            "message": "Visited https://example.org/",
            "cause": 4,
            "observation": "browse",
            "content": f"# {word}\nwrite to {SECRET_EMAIL}",
            "extras": {
                "url": "https://example.org/",
                "screenshot": data_url(png(shade=shade)),
                "set_of_marks": data_url(SHARED_IMAGE),
                "error": False,
            },
        },
    ]


@dataclass
class World:
    users: dict[str, User | None]
    trajectories: dict[str, Trajectory]  # by state name; "anon" is an anonymous private share
    deleted_id: str  # a public trajectory that was deleted (only its tombstone is left)
    images: dict[str, str] = field(default_factory=dict)  # state -> sha256 of its own image

    def client(self, caller: str) -> Client:
        client = Client()
        user = self.users[caller]
        if user is not None:
            client.force_login(user)
        return client

    def holder(self, share_id: str) -> Client:
        """An anonymous browser that unlocked `share_id` with its password (as the unlock page does)."""
        client = Client()
        session = client.session
        session[UNLOCKED_SESSION_KEY] = [share_id]
        session.save()
        return client


def _store(data: bytes, *, user, word: str, email: str = "", index: int = 0):
    options = ShareOptions(
        visibility="private",
        title=f"Title {word} for {SECRET_EMAIL}",
        feedback_text=f"Feedback {word}: ask {SECRET_EMAIL}",
        email=email,
        filename=f"{word}.json",
        client_ip=f"10.77.0.{index + 1}",
    )
    result = trajectory_ingest(data=data, user=user, options=options)
    assert result.stored, result.errors
    return result.stored[0]


def _set_state(trajectory: Trajectory, visibility: str, review_state: str, word: str) -> Trajectory:
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility=visibility,
        review_state=review_state,
        redactions=dict(REDACTIONS),
        license="MIT" if visibility == "public" else "",
        agent=f"Agent{word}",
        model_name=f"model-{word}",
        metadata={"note": f"{word} metadata {SECRET_EMAIL}"},
    )
    trajectory.refresh_from_db()
    # What the scan does after writing redactions: search never holds what they hide, and
    # the redaction index with the redacted view's columns (filters, facets, stats) is made.
    trajectory_search_refresh(trajectory=trajectory)
    trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
    trajectory.refresh_from_db()
    return trajectory


def build_world() -> World:
    moderators, _ = Group.objects.get_or_create(name="moderators")
    users: dict[str, User | None] = {
        "anonymous": None,
        "owner": User.objects.create_user("sec-owner", password="x"),
        "other": User.objects.create_user("sec-other", password="x"),
        "moderator": User.objects.create_user("sec-moderator", password="x"),
        "staff": User.objects.create_user("sec-staff", password="x", is_staff=True),
    }
    users["moderator"].groups.add(moderators)
    trajectories: dict[str, Trajectory] = {}
    images: dict[str, str] = {}
    for index, (state, (visibility, review_state)) in enumerate(STATES.items()):
        word = marker(state)
        stored = _store(
            orjson.dumps(v0_events(word, shade=index)), user=users["owner"], word=word, index=index
        )
        trajectories[state] = _set_state(stored.trajectory, visibility, review_state, word)
        images[state] = _own_image(trajectories[state])
    # An anonymous share with a contact address, private, as OpenHands' share button sends it.
    word = marker("anon")
    payload = {
        "version": "1.0",
        "email": CONTACT_EMAIL,
        "polarity": "negative",
        "feedback": "negative",
        "permissions": "private",
        "token": "share-token-never-stored-0451",
        "trajectory": v0_events(word, shade=40),
    }
    anon = _store(orjson.dumps(payload), user=None, word=word, email=CONTACT_EMAIL, index=20)
    trajectories["anon"] = _set_state(anon.trajectory, "private", "approved", word)
    images["anon"] = _own_image(trajectories["anon"])
    # A public trajectory, then deleted by its owner.
    word = marker("deleted")
    gone = _store(orjson.dumps(v0_events(word, shade=41)), user=users["owner"], word=word, index=21)
    gone_trajectory = _set_state(gone.trajectory, "public", "approved", word)
    deleted_id = gone_trajectory.share_id
    images["deleted"] = _own_image(gone_trajectory)
    trajectory_delete(trajectory=gone_trajectory, reason="owner")
    return World(
        users=users,
        trajectories=trajectories,
        deleted_id=deleted_id,
        images=images,
    )


def _own_image(trajectory: Trajectory) -> str:
    """The sha256 of the image only this trajectory refers to."""
    own = (
        TrajectoryImage.objects.filter(trajectory=trajectory)
        .exclude(image__sha256=SHARED_IMAGE_SHA)
        .values_list("image__sha256", flat=True)
    )
    (sha,) = own
    return sha


def destroy_world(world: World) -> None:
    share_ids = [t.share_id for t in world.trajectories.values()] + [world.deleted_id]
    Trajectory.objects.filter(share_id__in=share_ids).delete()
    Image.objects.filter(trajectory_links__isnull=True).delete()
    Tombstone.objects.filter(share_id__in=share_ids).delete()
    purge_audit_entries(share_ids)
    User.objects.filter(pk__in=[u.pk for u in world.users.values() if u is not None]).delete()


def purge_audit_entries(share_ids: list[str]) -> None:
    """Remove the audit entries a world built outside the tests' transactions wrote (its scans,
    decisions and deletions). The log is append-only, so the model refuses and, on PostgreSQL,
    a trigger refuses too: here, in test teardown only, the trigger is switched off for this
    transaction (session_replication_role; the test database's user is a superuser). Left
    behind, they leaked into later tests that count the log (`pytest tests/security
    tests/moderation` failed on `not AuditEntry.objects.exists()`)."""
    from django.db import connection, transaction

    if not share_ids:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        marks = ", ".join(["%s"] * len(share_ids))
        cursor.execute(f"DELETE FROM moderation_auditentry WHERE share_id IN ({marks})", share_ids)


@contextmanager
def world_fixture(django_db_blocker) -> Iterator[World]:
    """Build the world outside the tests' transactions; remove it afterwards."""
    with django_db_blocker.unblock():
        world = build_world()
        try:
            yield world
        finally:
            destroy_world(world)
