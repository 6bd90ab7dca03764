"""manage.py demo_data: shares generated sessions through the real ingest service."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.demo import generator as demo
from apps.trajectories.models import Event, Image, Trajectory

pytestmark = pytest.mark.django_db


def run(*args, **options):
    out = StringIO()
    call_command("demo_data", *args, stdout=out, **options)
    return out.getvalue()


def test_creates_owned_mixed_trajectories_with_images():
    output = run("--count", "8", "--seed", "5", "--screenshots", "1")
    assert "8 demo trajectories created" in output
    trajectories = Trajectory.objects.all()
    assert trajectories.count() == 8
    assert {t.owner.username for t in trajectories} == {"demo"}
    assert {t.visibility for t in trajectories} == {"public", "private"}
    assert all(t.license for t in trajectories if t.visibility == "public")
    sessions = list(demo.sessions(5, 8, screenshots=1))
    titles = {s["title"] for s in sessions}
    assert {t.title for t in trajectories} == titles
    assert Event.objects.count() == sum(len(s["events"]) for s in sessions)
    assert Image.objects.count() >= 16  # a screenshot and a set-of-marks per session
    assert {t.agent for t in trajectories} >= {"CodeActAgent"}


def test_running_again_updates_instead_of_duplicating():
    run("--count", "3")
    ids = set(Trajectory.objects.values_list("share_id", flat=True))
    output = run("--count", "3")
    assert "0 demo trajectories created, 3 updated" in output
    assert set(Trajectory.objects.values_list("share_id", flat=True)) == ids


def test_if_empty_does_nothing_when_trajectories_exist():
    run("--count", "2")
    output = run("--count", "5", "--if-empty")
    assert "no demo data added" in output
    assert Trajectory.objects.count() == 2


def test_if_empty_fills_an_empty_site():
    run("--count", "2", "--if-empty")
    assert Trajectory.objects.count() == 2


def test_sizes_and_v0_format():
    run("--count", "1", "--events", "41", "--format", "v0", "--private")
    trajectory = Trajectory.objects.get()
    assert trajectory.num_events == 41
    assert trajectory.visibility == "private"


def test_impossible_size_is_a_command_error():
    with pytest.raises(CommandError, match="cannot hold"):
        run("--count", "1", "--events", "4", "--screenshots", "3")
