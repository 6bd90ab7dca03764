"""The release card, the release page and API, the list filters, facets and stats read the
redacted view of a trajectory's agent and model, never the raw fields (issue 20: the card
printed `GH_TOKEN=github_pat_…` whole while the trajectory's page showed `<SECRET_1>`)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from apps.datasets import services
from apps.trajectories.models import Trajectory
from tests.datasets.conftest import approve, share
from tests.moderation.samples import github_token

pytestmark = pytest.mark.django_db


def fragments(secret: str, size: int = 12) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def assert_clean(text: str, secret: str, where: str) -> None:
    leaked = [piece for piece in fragments(secret) if piece in text]
    assert not leaked, f"{where} shows part of the secret: {leaked[0]!r}"


@pytest.fixture
def secret_agent(release_storage, owner, moderator):
    """A public trajectory whose agent and model carry a token, scanned and approved as a
    careless moderator would."""
    secret = github_token()
    trajectory = share(user=owner, seed=11, scan=False)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        agent=f"GH_TOKEN={secret}", model_name=f"gpt-4o key={secret}"
    )
    from apps.moderation.services.scan import trajectory_scan

    trajectory.refresh_from_db()
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    if trajectory.review_state != "approved":
        approve(trajectory, moderator)
    trajectory.refresh_from_db()
    assert trajectory.is_public
    assert secret in trajectory.redactions
    return trajectory, secret


def test_card_page_and_api_show_the_redacted_agent_and_model(secret_agent, release_storage, client):
    trajectory, secret = secret_agent
    release = services.release_run(force=True).release
    readme = (release_storage / release.prefix / "README.md").read_text()
    assert_clean(readme, secret, "README.md")
    assert "| GH_TOKEN=&lt;GITHUB_TOKEN_1> | 1 |" in readme
    assert_clean(release.card, secret, "Release.card")
    page = client.get(f"/releases/{release.version}/")
    assert page.status_code == 200
    assert_clean(page.content.decode(), secret, "the release page")
    assert "GH_TOKEN=" in page.content.decode()
    api = client.get(f"/api/v1/releases/{release.version}")
    assert api.status_code == 200
    assert_clean(api.content.decode(), secret, "the release API")


def test_filters_match_shown_values_only(secret_agent, client):
    trajectory, secret = secret_agent
    shown = Trajectory.objects.get(pk=trajectory.pk).shown_agent
    assert shown == "GH_TOKEN=<GITHUB_TOKEN_1>" and secret not in shown
    for url in ("/browse/", "/api/v1/trajectories"):
        raw = client.get(url, {"agent": f"GH_TOKEN={secret}"})
        assert raw.status_code == 200
        assert trajectory.share_id not in raw.content.decode(), f"{url} matched the raw value"
        found = client.get(url, {"agent": shown})
        assert trajectory.share_id in found.content.decode(), f"{url} missed the shown value"
        by_model = client.get(url, {"model": f"gpt-4o key={secret}"})
        assert trajectory.share_id not in by_model.content.decode()


def test_facets_and_stats_list_the_shown_values(secret_agent, client):
    trajectory, secret = secret_agent
    cache.clear()
    browse = client.get("/browse/").content.decode()
    assert_clean(browse, secret, "the browse page")
    assert "GH_TOKEN=&lt;GITHUB_TOKEN_1&gt;" in browse  # the facet suggestion, as shown
    stats = client.get("/stats/").content.decode()
    assert_clean(stats, secret, "the stats page")


def test_a_changed_map_leaves_the_shown_value_out_until_reindexed(secret_agent, client):
    """The trigger clears `indexed_at` when the map changes: a stale shown value matches
    nothing rather than something the new map would hide."""
    trajectory, secret = secret_agent
    shown = Trajectory.objects.get(pk=trajectory.pk).shown_agent
    redactions = dict(Trajectory.objects.get(pk=trajectory.pk).redactions)
    redactions["GH_TOKEN"] = "<SECRET_99>"
    Trajectory.objects.filter(pk=trajectory.pk).update(redactions=redactions)
    assert Trajectory.objects.get(pk=trajectory.pk).indexed_at is None
    assert trajectory.share_id not in client.get("/browse/", {"agent": shown}).content.decode()
    from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh

    trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
    now = Trajectory.objects.get(pk=trajectory.pk).shown_agent
    assert now == "<SECRET_99>=<GITHUB_TOKEN_1>"
    assert trajectory.share_id in client.get("/browse/", {"agent": now}).content.decode()


def test_mend_replaces_a_published_card_that_printed_raw_values(
    secret_agent, release_storage, owner
):
    """A card published by the old code (raw agent and model in its tables) is made again from
    the redacted view: the database, README.md in storage, the manifest, the audit log, and a
    notice to the owner naming the kind."""
    import json

    from django.core.management import call_command

    from apps.accounts.models import Notice
    from apps.datasets.services.card import table_cell
    from apps.moderation.models import AuditEntry

    trajectory, secret = secret_agent
    release = services.release_run(force=True).release
    folder = release_storage / release.prefix
    # What main published before: the raw value in the card, the page and README.md.
    raw_card = release.card.replace("GH_TOKEN=&lt;GITHUB_TOKEN_1>", table_cell(trajectory.agent))
    assert secret in raw_card
    type(release).objects.filter(pk=release.pk).update(card=raw_card)
    (folder / "README.md").write_text(raw_card, encoding="utf-8")

    call_command("mend_release_cards")

    release.refresh_from_db()
    assert_clean(release.card, secret, "the mended card")
    readme = (folder / "README.md").read_text()
    assert readme == release.card and "| GH_TOKEN=&lt;GITHUB_TOKEN_1> | 1 |" in readme
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = {item["path"]: item for item in manifest["files"]}
    import hashlib

    assert listed["README.md"]["sha256"] == hashlib.sha256(readme.encode()).hexdigest()
    assert manifest["card_rebuilt"] and "before redaction" in manifest["card_rebuilt"][0]["reason"]
    row = release.files.get(path="README.md")
    assert row.sha256 == listed["README.md"]["sha256"]
    entry = AuditEntry.objects.get(share_id=trajectory.share_id, action="release_card_rebuilt")
    assert entry.details["kinds"] == ["GITHUB_TOKEN"] and entry.actor_kind == "operator"
    notice = Notice.objects.get(user=owner, kind="secret_published")
    assert "github token" in notice.body and "revoke" in notice.body
    assert_clean(notice.body, secret, "the notice")
    # Twice is once: nothing left to mend, nobody told again.
    call_command("mend_release_cards")
    assert Notice.objects.filter(kind="secret_published").count() == 1
