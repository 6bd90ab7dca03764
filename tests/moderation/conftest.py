"""Trajectories built with the ORM (no dependency on the ingest service), and a moderator who can
use Django admin (staff + the "moderators" group)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from apps.trajectories.models import Event, Trajectory


def make_trajectory(
    *,
    events: list[tuple[str, dict[str, Any]] | str] = (),
    age_seconds: float | None = None,
    **fields: Any,
) -> Trajectory:
    """A pending public trajectory with the given events: (text, data) pairs or plain texts."""
    values: dict[str, Any] = {
        "title": "Fix the failing test",
        "source_format": "openhands_v0",
        "visibility": "public",
        "review_state": "pending",
        "license": "MIT",
        "num_events": len(events),
    }
    values.update(fields)
    trajectory = Trajectory.objects.create(**values)
    Event.objects.bulk_create(
        Event(
            trajectory=trajectory,
            position=position,
            source="agent",
            kind="action",
            type="run",
            text=event if isinstance(event, str) else event[0],
            data={} if isinstance(event, str) else event[1],
        )
        for position, event in enumerate(events)
    )
    if age_seconds is not None:
        then = timezone.now() - timedelta(seconds=age_seconds)
        Trajectory.objects.filter(pk=trajectory.pk).update(created_at=then, updated_at=then)
    trajectory.refresh_from_db()
    return trajectory


def make_finding(trajectory: Trajectory, *, image_sha256: str = "", **fields: Any):
    """A Finding row as the scan records one (a GitHub token in the title unless told
    otherwise; `image_sha256`: in that image's text, as OCR finds it), for tests that need a
    finding without running the scanner (or tesseract)."""
    from apps.moderation.models import IMAGE_PATH, Finding

    values: dict[str, Any] = {
        "path": f"{IMAGE_PATH}{image_sha256}" if image_sha256 else "title",
        "start": 0,
        "end": 40,
        "kind": "github_token",
        "category": "secret",
        "placeholder": "<GITHUB_TOKEN_1>",
        "preview": "ghp_…Zq (40 chars)",
    }
    values.update(fields)
    return Finding.objects.create(trajectory=trajectory, **values)


@pytest.fixture
def admin_moderator(django_user_model):
    """A moderator account as documented: staff (Django admin requires it) + "moderators"."""
    user = django_user_model.objects.create_user(
        "mod-staff", password="pw-mod-staff", is_staff=True
    )
    user.groups.add(Group.objects.get(name="moderators"))
    return user


SEEN = re.compile(r'<input type="hidden" name="seen-(\d+)" value="([^"]*)"')


def bulk(client, url: str, action: str, rows, **data: Any):
    """A bulk action as a moderator sends it: the list page first (it carries each row's state
    token in a hidden field), then the action on the rows ticked, with the tokens the list
    showed for them."""
    page = client.get(url)
    assert page.status_code == 200
    tokens = dict(SEEN.findall(page.content.decode()))
    ids = [row.pk for row in rows]
    post = {"action": action, "_selected_action": ids, **data}
    post.update({f"seen-{pk}": tokens[str(pk)] for pk in ids if str(pk) in tokens})
    follow = post.pop("follow", False)
    return client.post(url, post, follow=follow)
