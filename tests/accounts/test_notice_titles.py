"""Notices name the trajectory by its redacted title (issue 20): three "waiting for a moderator"
notices about three trajectories used to be identical, with a 12-character id; a release
notice covering several said "the trajectory" and "The reason given:". Every title comes from
the redacted view, and mails to anyone but the owner (a reporter, a takedown requester) carry
only redacted text."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from apps.accounts.models import Notice
from apps.accounts.notices import notice_send
from apps.datasets import services as release_services
from apps.moderation.services.decisions import trajectory_approve
from apps.trajectories.models import Trajectory
from tests.datasets.conftest import release_storage, share  # noqa: F401  (a fixture)
from tests.moderation.samples import github_token
from tests.trajectories.site_factories import make_trajectory

pytestmark = pytest.mark.django_db


def with_secret_title(trajectory: Trajectory, words: str, secret: str, placeholder: str):
    """As the scan leaves it: the secret in the title, its placeholder in the map."""
    Trajectory.objects.filter(pk=trajectory.pk).update(
        title=f"{words} {secret}", redactions={**(trajectory.redactions or {}), secret: placeholder}
    )
    return Trajectory.objects.get(pk=trajectory.pk)


def test_three_waiting_notices_are_told_apart_by_their_redacted_titles(
    owner, django_capture_on_commit_callbacks
):
    owner.email = "owner@example.org"
    owner.save()
    token = github_token()
    titles = ["Fix the flaky login test", "Port the CLI to Rust", "Deploy with"]
    shared = [make_trajectory(owner=owner, title=t, review_state="held") for t in titles[:2]]
    shared.append(
        with_secret_title(
            make_trajectory(owner=owner, review_state="held"), "Deploy with", token, "<GH_1>"
        )
    )
    with django_capture_on_commit_callbacks(execute=True):
        for trajectory in shared:
            notice_send(kind="held", trajectory=trajectory, reason="The automatic check found x.")
    subjects = [message.subject for message in mail.outbox]
    assert len(set(subjects)) == 3, subjects
    assert subjects == [
        "“Fix the flaky login test” is waiting for a moderator before it is public",
        "“Port the CLI to Rust” is waiting for a moderator before it is public",
        "“Deploy with <GH_1>” is waiting for a moderator before it is public",
    ]
    for message, trajectory in zip(mail.outbox, shared, strict=True):
        assert trajectory.shown_title in message.body
        # The id is in the link only, never as a bare 12-character stand-in for a name.
        assert f"({trajectory.share_id[:12]})" not in message.body
    stored = list(Notice.objects.order_by("pk").values_list("subject", "body"))
    for subject, body in stored:
        assert token not in subject and token not in body
    assert all(token not in message.body for message in mail.outbox)


def test_the_release_notice_lists_each_trajectory_in_the_plural(
    owner,
    settings,
    release_storage,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    owner.email = "many@example.org"
    owner.save()
    token = github_token()
    mine = [share(user=owner, seed=seed) for seed in (31, 32, 33)]
    mine[2] = with_secret_title(mine[2], "Rotate", token, "<GITHUB_TOKEN_1>")
    with django_capture_on_commit_callbacks(execute=True):
        assert release_services.release_run(force=True).action == "announced"
    (message,) = [m for m in mail.outbox if m.to == ["many@example.org"]]
    assert message.subject == "3 of your shared trajectories are about to go into a dataset release"
    body = message.body
    assert "3 public trajectories you shared" in body
    for title in ("session 31", "session 32", "Rotate <GITHUB_TOKEN_1>"):
        assert f"- “{title}”" in body
    assert token not in body
    assert "The reason given" not in body and "Reason given" not in body
    assert "the trajectory" not in body.lower().replace("the trajectory's", "")
    assert "You can take any of them out of it until" in body
    assert "To keep any of them out of the release" in body


def test_a_release_notice_for_one_says_it(
    owner,
    settings,
    release_storage,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    owner.email = "one@example.org"
    owner.save()
    share(user=owner, seed=41)
    with django_capture_on_commit_callbacks(execute=True):
        assert release_services.release_run(force=True).action == "announced"
    (message,) = [m for m in mail.outbox if m.to == ["one@example.org"]]
    assert message.subject == "“session 41” is about to go into a dataset release"
    assert "“session 41”, the public trajectory you shared" in message.body
    assert "You can take it out of it until" in message.body
    assert "The reason given" not in message.body


def test_a_reporter_is_told_by_the_redacted_title_only(
    owner, other_user, admin_moderator, django_capture_on_commit_callbacks
):
    from apps.moderation.models import Report

    other_user.email = "reporter@example.org"
    other_user.save()
    token = github_token()
    trajectory = with_secret_title(
        make_trajectory(owner=owner, review_state="held"), "Set up CI with", token, "<GH_1>"
    )
    Report.objects.create(trajectory=trajectory, reporter=other_user, reason="secret", text="x")
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_approve(trajectory=trajectory, moderator=admin_moderator, note="fine")
    (message,) = [m for m in mail.outbox if m.to == ["reporter@example.org"]]
    assert message.subject == "What happened to your report on “Set up CI with <GH_1>”"
    assert "“Set up CI with <GH_1>”" in message.body
    assert token not in message.body and token not in message.subject


def test_takedown_mails_to_the_requester_carry_the_redacted_title(
    owner, django_capture_on_commit_callbacks
):
    token = github_token()
    trajectory = with_secret_title(
        make_trajectory(owner=owner), "Scrape the staff list with", token, "<GH_1>"
    )
    with django_capture_on_commit_callbacks(execute=True):
        answer = Client().post(
            f"/t/{trajectory.share_id}/takedown",
            {"email": "person@example.org", "text": "step 2 lists my home address"},
        )
    assert answer.status_code == 200
    (message,) = mail.outbox
    assert "“Scrape the staff list with <GH_1>”" in message.body
    assert token not in message.body
    link = re.search(r"https?://\S+/takedown/confirm/\S+", message.body)
    assert link is not None
    page = Client().get("/" + link.group(0).split("://", 1)[1].split("/", 1)[1]).content.decode()
    assert "Scrape the staff list with &lt;GH_1&gt;" in page and token not in page


@pytest.fixture
def admin_moderator(django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("titles-mod", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name="moderators")[0])
    return user
