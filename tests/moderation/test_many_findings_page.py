"""Issue 7's many-findings case: a public share of 20,000 outputs with 15 distinct emails each.

It was auto-approved with 300,000 redactions, and then its page took 47-61 s, its `find` over
120 s, and home, browse and the API list seconds: every surface redacted through one regular
expression of every original. Now it is held past TRAJHUB_SCAN_MAX_DISTINCT, and once a moderator
approves it, its surfaces spend the queries of any trajectory's and read the redactions once per
request (DESIGN.md: "a trajectory with a bound-exceeding number of findings: its page within the
2,000-event page budget"). Timing is bench/bench_page.py's `--many-findings` case, not a test.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from django.test import Client

from apps.moderation.services.decisions import trajectory_approve
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories import redaction
from apps.trajectories.models import Trajectory
from apps.trajectories.rendering import text as rendering_text
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db

OUTPUTS = int(os.environ.get("MANY_OUTPUTS", "20000"))
PER_OUTPUT = 15
EMAIL = re.compile(r"[a-z0-9.]+@gmail\.com")


def output(index: int) -> str:
    emails = " ".join(f"user{index}.{j}.leak@gmail.com" for j in range(PER_OUTPUT))
    return f"$ grep -r @ contacts/{index}.txt\n{emails}\n"


@pytest.fixture
def approved_many(admin_moderator, settings):
    settings.TRAJHUB_SCAN_MAX_FINDINGS = 1000
    trajectory = make_trajectory(
        title="Export the contact list", events=[output(i) for i in range(OUTPUTS)]
    )
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "held"  # past TRAJHUB_SCAN_MAX_DISTINCT (500)
    trajectory.refresh_from_db()
    assert len(trajectory.redactions) == OUTPUTS * PER_OUTPUT
    approved = trajectory_approve(trajectory=trajectory, moderator=admin_moderator)
    assert Trajectory.objects.public().filter(pk=approved.pk).exists()
    return approved


@pytest.fixture
def small():
    """An ordinary public trajectory with a few redactions: the queries every page spends."""
    trajectory = make_trajectory(
        title="Fix the failing test",
        events=[f"contact alice{i}@gmail.com, then run the tests" for i in range(30)],
    )
    trajectory_scan(trajectory=trajectory)
    trajectory.refresh_from_db()
    assert trajectory.review_state == "approved" and trajectory.redactions
    return trajectory


@pytest.fixture
def builds(monkeypatch):
    """How often a request builds redaction machinery (Marks, matcher indexes), and how many
    strings each matcher holds."""
    counts: dict = {"marks": 0, "index": 0, "sizes": []}
    marks_init = rendering_text.Marks.__init__
    build_index = redaction.Matcher._build_index
    matcher_init = redaction.Matcher.__init__

    def counting_matcher(self, strings):
        counts["sizes"].append(len(strings))
        matcher_init(self, strings)

    def counting_marks(self, *args, **kwargs):
        counts["marks"] += 1
        marks_init(self, *args, **kwargs)

    def counting_index(self):
        counts["index"] += 1
        build_index(self)

    monkeypatch.setattr(rendering_text.Marks, "__init__", counting_marks)
    monkeypatch.setattr(redaction.Matcher, "_build_index", counting_index)
    monkeypatch.setattr(redaction.Matcher, "__init__", counting_matcher)
    return counts


def queries(django_assert_max_num_queries, client: Client, path: str) -> tuple[int, str]:
    with django_assert_max_num_queries(20) as captured:
        response = client.get(path)
    assert response.status_code == 200, path
    return len(captured.captured_queries), response.content.decode()


def test_many_findings_page_fragment_find_and_lists_stay_in_the_page_budget(
    approved_many, small, builds, django_assert_max_num_queries
):
    client = Client()
    client.get("/")  # warm: the Site row and cached facts are read once per process
    for suffix in ("", "events?after=40", "find?q=leak"):
        base = f"/t/{small.share_id}/{suffix}"
        expected, _ = queries(django_assert_max_num_queries, client, base)
        builds.update(marks=0, index=0, sizes=[])
        count, body = queries(
            django_assert_max_num_queries, client, f"/t/{approved_many.share_id}/{suffix}"
        )
        # The same queries as an ordinary trajectory's, whatever the number of redactions.
        assert count == expected, suffix
        # The request reads the redactions of what it shows, not all 300,000: each matcher
        # it builds holds at most the entries of the steps on the page (FIRST_EVENTS or
        # CHUNK_EVENTS outputs of 15 emails) and the title's, with their placeholders (Marks
        # looks for both); find builds none (it reads the stored redacted text).
        shown = 2 * (100 * PER_OUTPUT + 10)
        assert builds["index"] <= 2 and max(builds["sizes"], default=0) <= shown, suffix
        assert sum(builds["sizes"]) <= 3 * shown, (suffix, sorted(builds["sizes"])[-5:])
        if suffix == "find?q=leak":
            assert builds["sizes"] == [], builds["sizes"]
        if suffix != "find?q=leak":
            assert "&lt;EMAIL_" in body and not EMAIL.search(body), suffix
        else:
            # Searched in the redacted text: "leak" occurs only inside the emails.
            assert json.loads(body)["total"] == 0
    for path in ("/", "/browse/", "/api/v1/trajectories", "/browse/?q=contact"):
        client.get(path)  # warm: facets and cached facts
        with_many, body = queries(django_assert_max_num_queries, client, path)
        assert "Export the contact list" in body, path
        assert not EMAIL.search(body), path
        Trajectory.objects.filter(pk=approved_many.pk).update(visibility="private")
        client.get(path)
        without, _ = queries(django_assert_max_num_queries, client, path)
        Trajectory.objects.filter(pk=approved_many.pk).update(visibility="public")
        assert with_many == without, path
    # The API's trajectory and a page of its events: the same queries as an ordinary one's,
    # and the redactions of that page's 100 events only.
    for suffix in ("", "/events"):
        expected, _ = queries(
            django_assert_max_num_queries, client, f"/api/v1/trajectories/{small.share_id}{suffix}"
        )
        builds.update(marks=0, index=0, sizes=[])
        count, body = queries(
            django_assert_max_num_queries,
            client,
            f"/api/v1/trajectories/{approved_many.share_id}{suffix}",
        )
        assert count == expected and not EMAIL.search(body), suffix
        assert max(builds["sizes"], default=0) <= 100 * PER_OUTPUT + 10, suffix
        # A list redacts titles with the rows' own entries, never the map of 300,000 originals.
    for path in ("/", "/browse/", "/api/v1/trajectories", "/feed.atom"):
        builds.update(marks=0, index=0, sizes=[])
        client.get(path)
        assert builds["index"] == 0 and max(builds["sizes"], default=0) <= 10, path


# --- The redaction index: one source of truth ---------------------------------------------------

ANSI_EMAIL = "erin.brown.leak@gmail.com"


def mixed_events() -> list:
    """Every place a surface redacts: text, JSON values and keys, colour codes inside a value,
    a placeholder typed in the text, and more distinct emails than the matcher's alternation
    holds (so both of its paths run)."""
    events: list = [
        f"$ grep --color mail\nto: \x1b[01;31m\x1b[K{ANSI_EMAIL}\x1b[m\x1b[K\n",
        (
            "mail carol.jones.leak@gmail.com",
            {
                "action": "run",
                "args": {
                    "command": "mail carol.jones.leak@gmail.com",
                    "dave.lee.leak@gmail.com": "as a key",
                },
            },
        ),
        "the notes say <EMAIL_1> already; the owner is bob.smith.leak@gmail.com",
    ]
    events += [
        " ".join(f"p{i}.{j}.leak@gmail.com" for j in range(15)) + "\nExport finished"
        for i in range(25)
    ]
    return events


@pytest.fixture
def mixed(admin_moderator):
    trajectory = make_trajectory(
        title="Mail bob.smith.leak@gmail.com the export",
        feedback_text="ask carol.jones.leak@gmail.com",
        events=mixed_events(),
    )
    assert trajectory_scan(trajectory=trajectory).review_state == "approved"  # emails only
    trajectory.refresh_from_db()
    assert len(trajectory.redactions) > redaction.ALTERNATION_MAX
    return trajectory


CSRF_TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')


def surfaces(client: Client, trajectory: Trajectory) -> dict[str, bytes]:
    base = f"/t/{trajectory.share_id}/"
    paths = [
        base,
        f"{base}?after=2",
        f"{base}events?after=0&limit=500",
        f"{base}events?before=20",
        f"{base}events/2/json",
        f"{base}events/3/json",
        f"{base}events/1/blocks/0",
        f"{base}find?q=leak",
        f"{base}find?q=EMAIL",
        f"{base}find?q=gmail.com",
        "/",
        "/browse/",
        "/browse/?q=export",
        "/feed.atom",
        "/api/v1/trajectories",
        f"/api/v1/trajectories/{trajectory.share_id}",
        f"/api/v1/trajectories/{trajectory.share_id}/events",
        f"/api/v1/trajectories/{trajectory.share_id}/download?format=openhands",
    ]
    out = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        body = b"".join(response) if response.streaming else response.content
        # A signed-in page's forms (the star button) carry a CSRF token masked afresh for each
        # response: not text from the index or the map.
        out[path] = CSRF_TOKEN.sub(b'name="csrfmiddlewaretoken" value=""', body)
    return out


def index_of(trajectory: Trajectory) -> tuple:
    """(whether a request would read the index, the index, each event's stored entries)."""
    from apps.trajectories.models import Event
    from apps.trajectories.selectors.redactions import _index, with_redaction_index

    row = with_redaction_index(Trajectory.objects.filter(pk=trajectory.pk)).get()
    events = list(
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .values_list("position", "redactions", "redacted_text", "index_digest")
    )
    return _index(row) is not None, row.redaction_index, events


def rebuilt(trajectory: Trajectory) -> tuple:
    """The index made afresh from the current map and events."""
    from apps.trajectories.services import trajectory_redaction_index_refresh

    Trajectory.objects.filter(pk=trajectory.pk).update(indexed_at=None)
    trajectory_redaction_index_refresh(trajectory_id=trajectory.pk)
    return index_of(trajectory)


def test_every_surface_shows_the_same_text_from_the_index_as_from_the_full_map(
    mixed, admin_moderator
):
    current, index, events = index_of(mixed)
    assert current and index["count"] == len(mixed.redactions)
    # Each event holds only its own entries, with the trajectory-wide numbering.
    entries = dict(events[3][1])
    assert len(entries) == 15 and all(mixed.redactions[k] == v for k, v in entries.items())
    assert "<EMAIL_" in events[3][2] and "leak@gmail.com" not in events[3][2]
    assert ANSI_EMAIL in events[0][1]  # found in the text as a terminal shows it
    assert "dave.lee.leak@gmail.com" in events[1][1]  # a JSON key
    # The typed placeholder is marked as before: its original is among the event's entries.
    assert "<EMAIL_1>" in events[2][1].values()
    moderator = Client()
    moderator.force_login(admin_moderator)
    for client in (Client(), moderator):
        indexed = surfaces(client, mixed)
        Trajectory.objects.filter(pk=mixed.pk).update(indexed_at=None)
        full = surfaces(client, mixed)
        for path, body in indexed.items():
            assert body == full[path], path
        rebuilt(mixed)
    # The admin's list shows titles through the row's own entries too.
    listed = moderator.get("/admin/trajectories/trajectory/").content.decode()
    assert "Mail &lt;EMAIL_" in listed and "bob.smith.leak" not in listed
    # And visitors never see an email, from the index or without it.
    for body in surfaces(Client(), mixed).values():
        assert not EMAIL.search(body.decode()), body[:200]


def test_a_stale_or_half_built_index_is_never_read(mixed):
    from apps.trajectories.models import Event

    page = f"/t/{mixed.share_id}/events?after=0&limit=500"
    # Half-built: entries missing from some events, the trajectory not marked current.
    Trajectory.objects.filter(pk=mixed.pk).update(indexed_at=None)
    Event.objects.filter(trajectory=mixed, position__gte=3).update(
        redactions=None, redacted_text=None
    )
    for path in (page, f"/t/{mixed.share_id}/find?q=leak"):
        body = Client().get(path).content.decode()
        assert not EMAIL.search(body) and "&lt;EMAIL_" in body or '"total": 0' in body, path
    # Whoever changes the map (here straight in the database), the trigger stops the index
    # from being read; so do own strings or an event that no longer match their digests.
    rebuilt(mixed)
    assert index_of(mixed)[0]
    Trajectory.objects.filter(pk=mixed.pk).update(
        redactions={**mixed.redactions, "Export finished": "<REDACTED_9>"}
    )
    assert index_of(mixed)[0] is False
    body = Client().get(f"/t/{mixed.share_id}/").content.decode()
    assert "Export finished" not in body and "&lt;REDACTED_9&gt;" in body
    rebuilt(mixed)
    Trajectory.objects.filter(pk=mixed.pk).update(
        title="Now with p3.4.leak@gmail.com", agent="agent of p3.5.leak@gmail.com"
    )
    assert index_of(mixed)[0] is False
    for path in (f"/t/{mixed.share_id}/", "/", "/api/v1/trajectories", "/feed.atom"):
        body = Client().get(path).content.decode()
        assert "p3.4.leak" not in body and "p3.5.leak" not in body, path
    rebuilt(mixed)
    Event.objects.filter(trajectory=mixed, position=5).update(
        text="p3.6.leak@gmail.com, typed in later"
    )
    assert index_of(mixed)[0]  # the trajectory's is current; that event's is not
    for path in (f"/t/{mixed.share_id}/", f"/t/{mixed.share_id}/events/6/json"):
        body = Client().get(path).content.decode()
        assert "p3.6.leak" not in body and "&lt;EMAIL_" in body, path
    found = Client().get(f"/t/{mixed.share_id}/find?q=p3.6").json()
    assert found["total"] == 0


def test_the_index_follows_rescans_redactions_edits_reimports_and_dropped_images(
    mixed, admin_moderator, django_capture_on_commit_callbacks
):
    from apps.moderation.services.redact import trajectory_redact_approve
    from apps.trajectories.models import Event
    from apps.trajectories.services import trajectory_update

    # A moderator redacts a value the scan did not find: the rescan changes the map, and
    # every event that holds the value gets it in its entries.
    Trajectory.objects.filter(pk=mixed.pk).update(review_state="held")
    trajectory_redact_approve(
        trajectory=Trajectory.objects.get(pk=mixed.pk),
        moderator=admin_moderator,
        values=["Export finished"],
    )
    current, index, events = index_of(mixed)
    assert current and (current, index, events) == rebuilt(mixed)
    assert all("Export finished" in entries for _, entries, _, _ in events[3:])
    page = Client().get(f"/t/{mixed.share_id}/").content.decode()
    assert "Export finished" not in page and "&lt;REDACTED_1&gt;" in page
    # A rescan that changes nothing keeps it current.
    trajectory_scan(trajectory=Trajectory.objects.get(pk=mixed.pk))
    assert index_of(mixed) == rebuilt(mixed) and index_of(mixed)[0]
    # The owner's edit: the title now holds an email of the events. Stale at once; the
    # refresh after the commit makes it current again, with the title's entry.
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(
            trajectory=Trajectory.objects.get(pk=mixed.pk),
            title="For p7.7.leak@gmail.com",
        )
    current, index, _ = index_of(mixed)
    assert current and "p7.7.leak@gmail.com" in index["own"]
    assert "p7.7.leak" not in Client().get("/browse/").content.decode()
    # New events (a re-import, a re-share): not indexed until the scan that follows them has
    # rebuilt the index from the new text; meanwhile their pages read the full map.
    Event.objects.filter(trajectory=mixed, position__gte=4).delete()
    Event.objects.create(
        trajectory=mixed,
        position=4,
        source="agent",
        kind="action",
        type="run",
        text="now frank.w.leak@gmail.com and p9.9.leak@gmail.com",
    )
    trajectory = Trajectory.objects.get(pk=mixed.pk)
    trajectory.num_events = 5
    trajectory.save()
    assert "p9.9" not in Client().get(f"/t/{mixed.share_id}/").content.decode()
    trajectory_scan(trajectory=trajectory)
    current, _, events = index_of(mixed)
    assert current and "frank.w.leak@gmail.com" in events[4][1]
    assert (current, _, events) == rebuilt(mixed)
    assert "frank.w" not in Client().get(f"/t/{mixed.share_id}/").content.decode()


def test_a_rebuild_rewrites_only_the_events_whose_entries_changed(mixed, monkeypatch):
    """A rescan whose map changes (after a rules upgrade every public trajectory is rescanned,
    and a new finding changes the map) rewrites the events whose entries changed, not all of
    them (it rewrote every row: about 6 s for the 300,000-redaction share)."""
    from apps.trajectories.models import Event
    from apps.trajectories.services import redaction_index

    written: list[int] = []
    write = redaction_index._write_events

    def recording(rows):
        written.extend(pk for *_, pk in rows)
        write(rows)

    monkeypatch.setattr(redaction_index, "_write_events", recording)
    before = index_of(mixed)
    trajectory_scan(trajectory=Trajectory.objects.get(pk=mixed.pk))  # the same map: current
    assert written == [] and index_of(mixed) == before and before[0]
    # One event gains an email: the map changes (a new entry), one event's entries with it.
    third = Event.objects.get(trajectory=mixed, position=3)
    Event.objects.filter(pk=third.pk).update(text=third.text + " and eve.n.leak@gmail.com")
    trajectory_scan(trajectory=Trajectory.objects.get(pk=mixed.pk))
    current, _, events = index_of(mixed)
    assert written == [third.pk] and current and "eve.n.leak@gmail.com" in events[3][1]
    assert index_of(mixed) == rebuilt(mixed)


def test_a_dropped_image_keeps_the_index_in_step(admin_moderator):
    from apps.moderation.services.redact import image_drop
    from apps.trajectories.models import Image, TrajectoryImage

    sha = "ab" * 32
    trajectory = make_trajectory(
        events=[
            (
                f"screenshot trajhub-image:{sha} for gina.leak@gmail.com",
                {"extras": {"screenshot": f"trajhub-image:{sha}", "to": "gina.leak@gmail.com"}},
            )
        ]
    )
    image = Image.objects.create(sha256=sha, content_type="image/png", size=1, path=f"i/{sha}")
    TrajectoryImage.objects.create(trajectory=trajectory, image=image)
    trajectory_scan(trajectory=trajectory)
    assert index_of(trajectory)[0]
    image_drop(
        trajectory=Trajectory.objects.get(pk=trajectory.pk), moderator=admin_moderator, sha256=sha
    )
    assert index_of(trajectory)[0] and index_of(trajectory) == rebuilt(trajectory)
    client = Client()
    indexed = client.get(f"/t/{trajectory.share_id}/events/1/json").content
    Trajectory.objects.filter(pk=trajectory.pk).update(indexed_at=None)
    assert client.get(f"/t/{trajectory.share_id}/events/1/json").content == indexed
    assert b"trajhub-image:removed" in indexed and b"gina.leak" not in indexed


def test_the_sweep_and_the_command_index_trajectories_stored_before_the_index(mixed, settings):
    import importlib
    import io

    from django.apps import apps as registry
    from django.core.management import call_command

    from apps.trajectories.models import Event, FindIndex
    from apps.trajectories.tasks import redaction_index_sweep

    index_migration = importlib.import_module("apps.trajectories.migrations.0008_redaction_index")
    built = index_of(mixed)
    empty = make_trajectory(title="Nothing to redact", events=["ls", "pytest"])
    private = make_trajectory(
        title="Private", visibility="private", events=["mail hank.leak@gmail.com"]
    )
    trajectory_scan(trajectory=private)
    # As the migration leaves them: no index at all.
    Trajectory.objects.update(redaction_index=None, indexed_at=None)
    Event.objects.update(redactions=None, redacted_text=None, index_digest=None)
    index_migration.index_empty_maps(registry, None)
    assert index_of(empty)[0] and not index_of(mixed)[0] and not index_of(private)[0]
    # Meanwhile the full map, never the raw text.
    assert not EMAIL.search(Client().get(f"/t/{mixed.share_id}/").content.decode())
    # The beat sweep takes public ones first, a batch at a time.
    settings.TRAJHUB_REDACTION_INDEX_SWEEP_BATCH = 1
    assert redaction_index_sweep() == 1
    assert index_of(mixed) == built and not index_of(private)[0]
    out = io.StringIO()
    call_command("index_redactions", stdout=out)
    # The private one's index, and find's index of the one the migration indexed (issue 24).
    assert "indexed 2 trajectories" in out.getvalue() and index_of(private)[0]
    assert FindIndex.objects.filter(trajectory=empty).exists()
    assert index_of(private) == rebuilt(private)
