"""The quality gate (each rule a setting, each exclusion counted in the card) and the command."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.datasets import services
from apps.datasets.models import Release
from apps.datasets.row_schema import CONFIGS
from apps.trajectories.models import Event, Trajectory
from tests.datasets.conftest import share

pytestmark = pytest.mark.django_db


@pytest.fixture
def gated(release_storage, owner, other_user):
    good = share(user=owner, seed=51, events=14)
    # The same conversation shared again by someone else: a duplicate.
    again = share(user=other_user, seed=51, events=14)
    # A continuation chain: the shorter share's events are a prefix of the longer one's.
    longer = share(user=owner, seed=52, events=20)
    shorter = share(user=other_user, seed=52, events=20)
    Event.objects.filter(trajectory=shorter, position__gte=10).delete()
    Trajectory.objects.filter(pk=shorter.pk).update(
        num_events=10,
        chain_fingerprint=_chain_at(longer, 10),
    )
    tiny = share(user=owner, seed=53, events=12)
    Event.objects.filter(trajectory=tiny, position__gte=1).delete()
    Trajectory.objects.filter(pk=tiny.pk).update(num_events=1)
    broken = share(user=owner, seed=54, events=12)
    Event.objects.filter(trajectory=broken, position__gte=5).delete()  # half stored
    return {
        "good": good,
        "again": again,
        "longer": longer,
        "shorter": shorter,
        "tiny": tiny,
        "broken": broken,
    }


def _chain_at(trajectory: Trajectory, count: int) -> str:
    from apps.trajectories.selectors.chains import stored_chain

    return stored_chain(trajectory, count)[-1]


def test_each_rule_leaves_out_and_is_counted_in_the_card(gated, release_storage):
    release = services.release_run(force=True).release
    ids = set(release.entries.values_list("share_id", flat=True))
    assert ids == {gated["good"].share_id, gated["longer"].share_id}
    assert release.excluded == {"broken_import": 1, "duplicate": 2, "too_short": 1}
    card = (release_storage / release.prefix / "README.md").read_text()
    assert (
        "exact or near duplicates, and all but the longest of a chain of continuations: 2 left out"
        in card
    )
    assert "fewer than 2 events or 20 characters): 1 left out" in card
    assert "the import recorded: 1 left out" in card
    manifest = json.loads((release_storage / release.prefix / "manifest.json").read_text())
    assert manifest["excluded"] == release.excluded


def test_rules_are_settings(gated, settings):
    settings.TRAJHUB_RELEASE_GATE_DUPLICATES = False
    settings.TRAJHUB_RELEASE_GATE_EMPTY = False
    settings.TRAJHUB_RELEASE_GATE_BROKEN = False
    release = services.release_run(force=True).release
    assert release.num_rows == 6 and release.excluded == {}


def test_command_says_what_it_did(release_storage, owner):
    share(user=owner, seed=61)
    out, err = StringIO(), StringIO()
    call_command("build_release", stdout=out, stderr=err)
    assert out.getvalue().startswith("v1 published: 1 trajectories, 1 added, 0 removed")
    # Not a terminal: progress as lines, each step's last one at its total.
    lines = err.getvalue().splitlines()
    assert "rows: 1/1 trajectories" in lines
    assert lines[-1] == f"upload: {len(CONFIGS)}/{len(CONFIGS)} files", lines
    out = StringIO()
    call_command("build_release", stdout=out)
    assert "the next release is due" in out.getvalue()
    out = StringIO()
    call_command("build_release", "--now", stdout=out)
    assert "nothing changed since v1" in out.getvalue()
    assert Release.objects.count() == 1


def test_command_reports_a_failed_build(release_storage, owner, monkeypatch):
    share(user=owner, seed=62)

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("apps.datasets.services.run.write_release_files", boom)
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="v1 failed: OSError: disk full"):
        call_command("build_release", stdout=StringIO())
    release = Release.objects.get()
    assert release.status == "failed"
    assert not any(release_storage.rglob("*.*"))
    monkeypatch.undo()
    out = StringIO()
    call_command("build_release", "--now", stdout=out)
    assert out.getvalue().startswith("v2 published")
