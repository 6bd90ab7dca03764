"""The ingest service: parse, clean (NULs, images), store, dedup, update, delete, passwords."""

from __future__ import annotations

import re
import threading

import orjson
import pytest
import zstandard
from django.db import connection, connections

from apps.core.ratelimit import RateLimited
from apps.trajectories import services
from apps.trajectories.models import (
    Event,
    Image,
    ReviewState,
    Tombstone,
    Trajectory,
    TrajectoryImage,
)
from apps.trajectories.services import (
    IMAGE_REF_PREFIX,
    NUL_REPLACEMENT,
    InvalidShare,
    ShareOptions,
    SharingRefused,
    trajectory_check_password,
    trajectory_delete,
    trajectory_ingest,
    trajectory_update,
)
from apps.trajectories.signals import trajectory_deleted, trajectory_stored
from tests.conftest import skip_or_fail
from tests.ingest_helpers import (
    data_url,
    dumps,
    ingest,
    ingest_one,
    png_bytes,
    share_payload,
    storage_files,
    v0_events,
)

pytestmark = pytest.mark.django_db


def raw_of(trajectory: Trajectory) -> bytes:
    return services.raw_read(trajectory)


def all_event_json() -> str:
    return "".join(
        orjson.dumps(data).decode() for data in Event.objects.values_list("data", flat=True)
    )


# --- Storing -------------------------------------------------------------------------------


def test_made_share_payload_moves_images_out_and_keeps_every_event(made_fixture, private_storage):
    data = made_fixture("openhands_share_payload_with_screenshots.json")
    payload = orjson.loads(data)
    result = trajectory_ingest(data=data, user=None, options=ShareOptions())
    assert result.errors == []
    (stored,) = result.stored
    trajectory = stored.trajectory
    assert stored.created and stored.password
    assert trajectory.num_events == Event.objects.filter(trajectory=trajectory).count() == 13
    # Every data URL left the events; each image is one content-addressed file and row.
    text = all_event_json()
    assert not re.search(r"data:image/[a-z]+;base64,[A-Za-z0-9+/]{20}", text)
    refs = {part[:64] for part in text.split(IMAGE_REF_PREFIX)[1:]}
    assert refs and refs == set(Image.objects.values_list("sha256", flat=True))
    assert TrajectoryImage.objects.filter(trajectory=trajectory).count() == len(refs)
    files = storage_files(private_storage)
    for image in Image.objects.all():
        assert image.path in files
        blob = services.image_read(image)
        assert blob.startswith(b"\x89PNG") and image.size == len(blob)
    # Totals and metadata from the events.
    assert trajectory.agent_version == "0.39.1"
    assert trajectory.model_name == "claude-sonnet-4-20250514"
    assert trajectory.started_at is not None and trajectory.ended_at > trajectory.started_at
    assert trajectory.total_cost and trajectory.total_tokens
    assert trajectory.head_fingerprint and trajectory.chain_fingerprint
    # Search text comes from the redacted view, built by the scan alone (services/search.py).
    assert trajectory.search_text == "" and trajectory.search_vector is None
    # The raw copy: the payload as sent, without the envelope's email (never stored).
    raw = raw_of(trajectory)
    assert payload["email"].encode() not in raw
    sent = {key: value for key, value in payload.items() if key != "email"}
    assert orjson.loads(raw) == sent


def test_file_raw_copy_is_byte_exact_and_compressed(real_fixture, private_storage, owner):
    data = real_fixture("openhands_v0_basic.json")
    trajectory = ingest_one(data, user=owner, filename="basic.json")
    assert raw_of(trajectory) == data
    stored = (private_storage / trajectory.raw_path).read_bytes()
    assert (
        stored != data and zstandard.ZstdDecompressor().decompressobj().decompress(stored) == data
    )
    assert trajectory.num_bytes == len(data)
    assert trajectory.raw_filename == "basic.json"
    assert trajectory.owner == owner and trajectory.deletion_password_hashes == []


def test_token_items_of_old_websocket_payloads_are_not_stored(private_storage):
    events = [{"token": "eyJ-secret-token", "status": "ok"}, *v0_events(1)]
    payload = share_payload(events, token="eyJ-envelope-token")
    trajectory = ingest_one(payload)
    raw = raw_of(trajectory)
    assert b"eyJ" not in raw
    assert "eyJ" not in all_event_json()


def test_nul_characters_are_replaced_and_the_event_kept():
    events = v0_events(1)
    events[2]["content"] = "binary\x00output\x00"
    events[2]["extras"]["weird\x00key"] = "x\x00y"
    events[1]["args"]["command"] = "printf '\\0'\x00"
    trajectory = ingest_one(events)
    assert trajectory.num_events == 3
    observation = Event.objects.get(trajectory=trajectory, position=2)
    assert observation.text == f"binary{NUL_REPLACEMENT}output{NUL_REPLACEMENT}"
    assert observation.data["extras"][f"weird{NUL_REPLACEMENT}key"] == f"x{NUL_REPLACEMENT}y"
    assert "\x00" not in all_event_json()
    # The raw copy keeps the original bytes (NULs included) for a lossless download.
    assert b"\\u0000" in raw_of(trajectory)


def test_markdown_and_bare_base64_images_are_moved_out(private_storage):
    red, blue = png_bytes((255, 0, 0)), png_bytes((0, 0, 255))
    events = v0_events(1, task=f"look at this ![screen]({data_url(red)}) please")
    events[2]["extras"]["screenshot_data"] = data_url(blue).split(",", 1)[1]
    events[2]["extras"]["svg"] = "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="
    events[2]["extras"]["broken"] = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA"  # truncated
    trajectory = ingest_one(events)
    message = Event.objects.get(trajectory=trajectory, position=0)
    assert "data:image" not in message.text and IMAGE_REF_PREFIX in message.text
    assert message.text.startswith("look at this ![screen](trajhub-image:")
    observation = Event.objects.get(trajectory=trajectory, position=2)
    assert observation.data["extras"]["screenshot_data"].startswith(IMAGE_REF_PREFIX)
    # SVG (markup) and broken images stay inline text.
    assert observation.data["extras"]["svg"].startswith("data:image/svg+xml")
    assert observation.data["extras"]["broken"].startswith("data:image/png")
    assert Image.objects.count() == 2
    assert len(storage_files(private_storage)) == 3  # two images and the raw upload


def test_same_image_in_two_trajectories_is_one_file(private_storage):
    shot = data_url(png_bytes())
    first = v0_events(1, task="one")
    first[0]["args"]["image_urls"] = [shot]
    second = v0_events(1, task="two")
    second[0]["args"]["image_urls"] = [shot]
    a = ingest_one(first)
    b = ingest_one(second)
    assert Image.objects.count() == 1
    assert TrajectoryImage.objects.filter(trajectory__in=[a, b]).count() == 2
    image_files = [f for f in storage_files(private_storage) if f.startswith("images/")]
    assert len(image_files) == 1


def test_records_of_one_file_never_merge_even_when_one_extends_another(owner):
    short, long = v0_events(1), v0_events(3)
    result = ingest(dumps(short) + b"\n" + dumps(long) + b"\n", user=owner)
    assert len({item.trajectory.pk for item in result.stored}) == 2
    # ... while a later upload of the longer one does update the stored shorter one.
    again = ingest(v0_events(3), user=owner).stored[0]
    assert again.trajectory.pk == result.stored[1].trajectory.pk and not again.created


def test_json_lines_store_each_valid_line_and_report_the_others(private_storage, owner):
    lines = [dumps(v0_events(1, task="first")), b"[1, 2]", dumps(v0_events(2, task="third"))]
    data = b"\n".join(lines) + b"\n"
    result = ingest(data, user=owner)
    assert [item.trajectory.title for item in result.stored] == ["first", "third"]
    assert len(result.errors) == 1 and result.errors[0]["where"].startswith("line 2")
    # Each trajectory keeps its own line as its raw copy (deleting one never keeps another's).
    assert raw_of(result.stored[0].trajectory) == lines[0]
    assert raw_of(result.stored[1].trajectory) == lines[2]


def test_unreadable_input_raises_format_error_and_stores_nothing(private_storage):
    for data in (b"", b"{not json", b"\xff\xfe", b'{"hello": "world"}'):
        with pytest.raises(services.FormatError):
            trajectory_ingest(data=data, user=None, options=ShareOptions())
    assert Trajectory.objects.count() == 0 and storage_files(private_storage) == []


def test_a_failure_inside_the_transaction_leaves_nothing_behind(private_storage, monkeypatch):
    events = v0_events(2)
    events[0]["args"]["image_urls"] = [data_url(png_bytes((1, 2, 3)))]

    def explode(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr("apps.trajectories.services.events.insert", explode)
    with pytest.raises(RuntimeError):
        ingest(events)
    assert Trajectory.objects.count() == Event.objects.count() == Image.objects.count() == 0
    assert storage_files(private_storage) == []


def test_an_image_file_another_trajectory_uses_survives_a_failed_ingest(
    private_storage, monkeypatch
):
    shot = data_url(png_bytes((9, 9, 9)))
    kept = v0_events(1, task="kept")
    kept[0]["args"]["image_urls"] = [shot]
    ingest_one(kept)
    failing = v0_events(1, task="failing")
    failing[0]["args"]["image_urls"] = [shot]
    monkeypatch.setattr("apps.trajectories.services.events.insert", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ingest(failing)
    image = Image.objects.get()
    assert image.path in storage_files(private_storage)


def test_stored_signal_is_sent_on_commit(django_capture_on_commit_callbacks):
    received = []

    def listener(sender, trajectory_id, created, **kwargs):
        received.append((trajectory_id, created))

    trajectory_stored.connect(listener)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            trajectory = ingest_one(v0_events(1))
        assert received == []  # not before the commit
        for callback in callbacks:
            callback()
        assert received == [(trajectory.pk, True)]
    finally:
        trajectory_stored.disconnect(listener)


def test_public_needs_the_licence():
    with pytest.raises(InvalidShare) as error:
        ingest(v0_events(1), visibility="public")
    assert error.value.where == "license_agreed"
    trajectory = ingest_one(v0_events(1), visibility="public", license_agreed=True)
    assert trajectory.visibility == "public" and trajectory.license == "MIT"
    assert trajectory.review_state == ReviewState.PENDING  # the scan decides, not the upload


def refusal(value) -> str:
    """The message of a refused upload, raised (whole document) or reported (per record)."""
    try:
        result = ingest(value)
    except services.FormatError as exc:
        return exc.message
    assert result.stored == []
    return result.errors[0]["message"]


def test_limits_come_from_settings(settings):
    settings.TRAJHUB_MAX_EVENTS = 4
    assert "over the limit of 4" in refusal(v0_events(3))
    settings.TRAJHUB_MAX_EVENTS = 50
    settings.TRAJHUB_MAX_FIELD_BYTES = 100
    events = v0_events(1)
    events[2]["content"] = "x" * 200
    assert "'content'" in refusal(events)
    settings.TRAJHUB_MAX_JSON_DEPTH = 3
    assert "nested deeper than 3" in refusal(v0_events(1))
    assert Trajectory.objects.count() == 0


# --- Dedup ----------------------------------------------------------------------------------


def test_owner_sharing_a_longer_session_updates_the_same_trajectory(
    owner, private_storage, django_capture_on_commit_callbacks
):
    first = ingest_one(v0_events(1), user=owner)
    first_raw = first.raw_path
    with django_capture_on_commit_callbacks(execute=True):
        second = ingest(v0_events(3), user=owner).stored[0]
    assert second.trajectory.share_id == first.share_id and not second.created
    assert Trajectory.objects.count() == 1
    assert Event.objects.filter(trajectory=first).count() == 7
    assert list(
        Event.objects.filter(trajectory=first)
        .order_by("position")
        .values_list("position", flat=True)
    ) == list(range(7))
    # The longer raw copy replaced the shorter one.
    assert first_raw not in storage_files(private_storage)
    second.trajectory.refresh_from_db()
    assert raw_of(second.trajectory) == dumps(v0_events(3))


def test_resharing_a_shorter_prefix_keeps_the_longer(owner):
    long = ingest_one(v0_events(3), user=owner)
    again = ingest(v0_events(1), user=owner).stored[0]
    assert again.trajectory.share_id == long.share_id and not again.created
    assert Event.objects.filter(trajectory=long).count() == 7


def test_identical_share_twice_is_one_trajectory(owner):
    one = ingest_one(v0_events(2), user=owner)
    two = ingest_one(v0_events(2), user=owner)
    assert one.share_id == two.share_id and Trajectory.objects.count() == 1


def test_a_different_session_or_another_account_is_a_new_trajectory(owner, other_user):
    mine = ingest_one(v0_events(2), user=owner)
    changed = v0_events(2)
    changed[1]["args"]["command"] = "rm -rf build"
    assert ingest_one(changed, user=owner).share_id != mine.share_id
    assert ingest_one(v0_events(2), user=other_user).share_id != mine.share_id
    assert ingest_one(v0_events(2)).share_id != mine.share_id  # anonymous, no email
    assert Trajectory.objects.count() == 4


def test_session_id_updates_even_when_the_content_changes(owner):
    first = ingest_one(v0_events(1, task="a"), user=owner, session_id="s-1")
    second = ingest_one(v0_events(2, task="b"), user=owner, session_id="s-1")
    third = ingest_one(v0_events(2, task="b"), user=owner, session_id="s-2")
    assert second.share_id == first.share_id != third.share_id
    assert Event.objects.filter(trajectory=first).count() == 5
    assert Event.objects.filter(trajectory=first, position=0).get().text == "b"


def test_anonymous_same_email_updates_and_every_password_stays_valid():
    one = ingest(share_payload(v0_events(1), email="a@example.org")).stored[0]
    two = ingest(share_payload(v0_events(2), email="A@example.org")).stored[0]
    assert two.trajectory.share_id == one.trajectory.share_id and not two.created
    assert one.password != two.password
    trajectory = Trajectory.objects.get()
    assert trajectory_check_password(trajectory=trajectory, password=one.password)
    assert trajectory_check_password(trajectory=trajectory, password=two.password)
    assert not trajectory_check_password(trajectory=trajectory, password="wrong")
    assert not trajectory_check_password(trajectory=trajectory, password="")
    other = ingest(share_payload(v0_events(2), email="b@example.org")).stored[0]
    assert other.trajectory.share_id != one.trajectory.share_id


def test_passwords_are_stored_hashed():
    stored = ingest(v0_events(1)).stored[0]
    hashes = Trajectory.objects.get().deletion_password_hashes
    assert len(hashes) == 1 and stored.password not in hashes[0]


def test_update_resets_review_but_not_a_moderator_decision(owner):
    trajectory = ingest_one(v0_events(1), user=owner)
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state=ReviewState.APPROVED)
    ingest_one(v0_events(2), user=owner)
    assert Trajectory.objects.get().review_state == ReviewState.PENDING
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state=ReviewState.HIDDEN)
    ingest_one(v0_events(3), user=owner)
    assert Trajectory.objects.get().review_state == ReviewState.HIDDEN


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_shares_make_one_trajectory():
    if connection.vendor != "postgresql":
        skip_or_fail("concurrency is tested on PostgreSQL (set DATABASE_URL)")
    payload = dumps(share_payload(v0_events(30), email="race@example.org"))
    barrier = threading.Barrier(4)
    results, errors = [], []

    def share():
        try:
            barrier.wait()
            results.append(trajectory_ingest(data=payload, user=None, options=ShareOptions()))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=share) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    ids = {result.stored[0].trajectory.share_id for result in results}
    assert len(ids) == 1 and Trajectory.objects.count() == 1
    assert Event.objects.count() == 61
    trajectory = Trajectory.objects.get()
    for result in results:  # every password issued along the way works
        assert trajectory_check_password(trajectory=trajectory, password=result.stored[0].password)


# --- Update and delete ---------------------------------------------------------------------


def test_update_fields_and_licence_rule(owner):
    trajectory = ingest_one(v0_events(1), user=owner)
    with pytest.raises(InvalidShare):
        trajectory_update(trajectory=trajectory, visibility="public")
    trajectory_update(
        trajectory=trajectory,
        visibility="public",
        license_agreed=True,
        title="New\x00 title",
        polarity="positive",
        feedback_text="good",
    )
    trajectory.refresh_from_db()
    assert trajectory.visibility == "public" and trajectory.license == "MIT"
    assert trajectory.title == f"New{NUL_REPLACEMENT} title" and trajectory.polarity == "positive"
    with pytest.raises(InvalidShare):
        trajectory_update(trajectory=trajectory, owner=None)
    with pytest.raises(InvalidShare):
        trajectory_update(trajectory=trajectory, visibility="secret")


def test_delete_removes_content_raw_and_unshared_images(
    private_storage, owner, django_capture_on_commit_callbacks
):
    shared, own = data_url(png_bytes((1, 1, 1))), data_url(png_bytes((2, 2, 2)))
    doomed_events = v0_events(1, task="doomed")
    doomed_events[0]["args"]["image_urls"] = [shared, own]
    kept_events = v0_events(1, task="kept")
    kept_events[0]["args"]["image_urls"] = [shared]
    doomed = ingest_one(doomed_events, user=owner)
    kept = ingest_one(kept_events, user=owner)
    Trajectory.objects.filter(pk=doomed.pk).update(visibility="public", review_state="approved")
    doomed.refresh_from_db()
    deleted = []

    def listener(sender, **kwargs):
        deleted.append(kwargs)

    trajectory_deleted.connect(listener)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            tombstone = trajectory_delete(trajectory=doomed)
    finally:
        trajectory_deleted.disconnect(listener)
    assert tombstone.share_id == doomed.share_id and tombstone.was_public
    assert Tombstone.objects.count() == 1
    assert not Trajectory.objects.filter(pk=doomed.pk).exists()
    assert Event.objects.filter(trajectory_id=doomed.pk).count() == 0
    assert Image.objects.count() == 1  # the one `kept` still shows
    files = storage_files(private_storage)
    assert doomed.raw_path not in files and kept.raw_path in files
    assert Image.objects.get().path in files
    assert len([f for f in files if f.startswith("images/")]) == 1
    assert deleted and deleted[-1]["share_id"] == doomed.share_id


# --- Anonymous sharing policy --------------------------------------------------------------


def test_anonymous_sharing_can_be_turned_off(settings, owner):
    settings.TRAJHUB_ANONYMOUS_SHARING = False
    with pytest.raises(SharingRefused):
        ingest(v0_events(1))
    assert ingest_one(v0_events(1), user=owner)


def test_anonymous_shares_are_rate_limited_per_address_and_per_email(settings):
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 2
    for task in ("a", "b"):
        ingest(v0_events(1, task=task), client_ip="10.0.0.1")
    with pytest.raises(RateLimited):
        ingest(v0_events(1, task="c"), client_ip="10.0.0.1")
    ingest(v0_events(1, task="d"), client_ip="10.0.0.2")  # another address is fine
    for index, ip in enumerate(("10.0.1.1", "10.0.1.2")):
        ingest(share_payload(v0_events(1, task=f"e{index}"), email="x@example.org"), client_ip=ip)
    with pytest.raises(RateLimited):
        ingest(share_payload(v0_events(1, task="f"), email="x@example.org"), client_ip="10.0.1.3")


def test_an_array_of_conversations_stores_each_with_its_own_raw_copy(owner):
    conversations = [
        {
            "conversations": [
                {"from": "human", "value": f"question {n}"},
                {"from": "gpt", "value": "ok"},
            ]
        }
        for n in range(3)
    ]
    result = ingest(conversations, user=owner)
    assert result.errors == [] and len(result.stored) == 3
    for stored, conversation in zip(result.stored, conversations, strict=True):
        assert orjson.loads(raw_of(stored.trajectory)) == conversation
        assert stored.trajectory.source_format == "sharegpt"
        assert stored.trajectory.num_events == 2


def test_every_real_fixture_is_stored_as_the_importers_read_it(real_fixture, fixtures_dir, owner):
    from apps.trajectories.importers import parse

    for path in sorted((fixtures_dir / "real").iterdir()):
        if path.name == "MANIFEST.txt":
            continue
        data = path.read_bytes()
        expected = parse(data)
        before = Trajectory.objects.count()
        result = trajectory_ingest(data=data, user=owner, options=ShareOptions(filename=path.name))
        assert len(result.errors) == len(expected.errors), path.name
        counts = [len(t.events) for t in expected.trajectories]
        stored = [s.trajectory for s in result.stored]
        # Each record is its own trajectory: records of one file never update each other.
        assert Trajectory.objects.count() - before == len(stored) == len(counts), path.name
        assert [t.num_events for t in stored] == counts, path.name
        for trajectory in stored:
            assert Event.objects.filter(trajectory=trajectory).count() == trajectory.num_events


def test_a_reshare_with_new_feedback_text_is_scanned_again(
    owner, django_capture_on_commit_callbacks
):
    """Sharing the same session again with only new feedback must not skip the scan."""
    from tests.ingest_helpers import ingest_one, v0_events

    events = v0_events(2, task="tidy the logs")
    with django_capture_on_commit_callbacks(execute=True):
        first = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    first.refresh_from_db()
    assert first.review_state == "approved"
    secret = "ghp_" + "Zq8rT2xLm4Vb7Nc1Kd9Pf3Hs6Jw0Ya5Ue8Io"
    with django_capture_on_commit_callbacks(execute=True):
        again = ingest_one(
            events, user=owner, visibility="public", license_agreed=True, feedback_text=secret
        )
    assert again.pk == first.pk
    again.refresh_from_db()
    assert again.feedback_text == secret
    assert again.review_state == "held"
