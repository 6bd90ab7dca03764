"""An OpenHands share payload read as a stream (issue 24: ingest memory <= 2x the payload at
1 MB and 20 MB): the request body goes to a file, ijson reads it twice (its shape, then its
items one at a time), and each event is prepared, its screenshots stored, as it is read. What a
sharer sees stays as it was: the same rows and raw copy, the same errors, nothing half stored."""

from __future__ import annotations

import gc
import io
import random
import tracemalloc

import orjson
import pytest
from django.test import RequestFactory

from apps.demo import generator as demo
from apps.trajectories.api.openhands import share_od_trajectory
from apps.trajectories.importers import Limits, openhands_share, stream
from apps.trajectories.models import Event, Image, Trajectory
from apps.trajectories.services import raw_read
from tests.ingest_helpers import share_payload, storage_files, v0_events

pytestmark = pytest.mark.django_db


def demo_payload(seed: str, **spec) -> bytes:
    session = demo.generate_session(random.Random(seed), **spec)
    return demo.share_payload(session, permissions="private")


def served_peak(body: bytes) -> tuple[int, dict]:
    """tracemalloc's peak while the drop-in view handles `body` (the request is made before,
    so the client's own copy of the body is not counted), and the envelope it answered."""
    request = RequestFactory().post(
        "/share_od_trajectory", data=body, content_type="application/json"
    )
    gc.collect()
    tracemalloc.start()
    try:
        response = share_od_trajectory(request)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, orjson.loads(response.content)


@pytest.mark.parametrize(
    "spec",
    [
        {"target_bytes": 1_000_000, "events": 340},
        {"target_bytes": 4_000_000, "events": 240, "screenshots": 10, "screenshot_bytes": 100_000},
    ],
    ids=["1mb", "4mb-screenshots"],
)
def test_a_share_payload_is_handled_within_twice_its_size(spec, private_storage):
    """Read whole, the body, orjson's parse and the events made of it lived at once: 3-4x the
    payload. Read as a stream, what is held is the events made ready to store."""
    warm = demo_payload("warm", target_bytes=20_000, events=10)
    served_peak(warm)  # imports and first-use caches are not the payload's
    body = demo_payload(f"stream:{spec}", **spec)
    peak, answer = served_peak(body)
    assert answer["statusCode"] == 200, answer
    trajectory = Trajectory.objects.get(share_id=answer["body"]["feedback_id"])
    assert trajectory.num_events == spec["events"]
    assert peak <= 2 * len(body), f"{peak / len(body):.2f}x the payload"


def test_the_stream_makes_what_the_whole_document_makes():
    """The same events (fields and data), header and warnings from both readings of one
    payload, tokens stripped, websocket noise and non-events left out."""
    events = v0_events(4)
    events[2] = {**events[2], "token": "secret-token"}
    events.insert(3, {"bogus": 1})
    events.insert(1, {"token": "eyJ", "status": "ok"})
    payload = share_payload(events, polarity="positive", feedback="so good")
    body = orjson.dumps({"token": "t0", **payload})
    whole = openhands_share.convert(orjson.loads(body))
    found = stream.scan(io.BytesIO(body), format=None, limits=Limits())
    assert found is not None and found.count == len(events)
    header, made = stream.convert(found, limits=Limits())
    streamed = list(made)
    assert [vars(event) for event in streamed] == [vars(event) for event in whole.events]
    assert "token" not in streamed[2].data
    header.events = whole.events
    assert vars(header) == vars(whole)
    assert (
        header.warnings
        == whole.warnings
        == [
            {
                "where": "event 4",
                "message": "left out: event has neither 'action' nor 'observation'",
            }
        ]
    )


def test_flat_events_without_ids_are_linked_as_a_whole_document_links_them():
    flat = [
        {"action": "run", "command": "ls", "source": "agent"},
        {"observation": "run", "content": "a.txt", "source": "environment"},
        {"action": "run", "command": "pwd", "source": "agent"},
        {"observation": "run", "content": "/", "source": "environment"},
    ]
    body = orjson.dumps(share_payload(flat))
    whole = openhands_share.convert(orjson.loads(body))
    found = stream.scan(io.BytesIO(body), format=None, limits=Limits())
    assert found is not None
    _, made = stream.convert(found, limits=Limits())
    streamed = list(made)
    assert [(e.original_id, e.cause) for e in streamed] == [
        ("0", ""),
        ("1", "0"),
        ("2", ""),
        ("3", "2"),
    ]
    assert [(e.original_id, e.cause) for e in streamed] == [
        (e.original_id, e.cause) for e in whole.events
    ]


@pytest.mark.parametrize(
    "body",
    [
        b'{"trajectory": [{"id": 1}], "version": "1.0"}\n{"trajectory": []}\n',  # JSON Lines
        b'{"trajectory": [{"id": 1, "source": "user", "action": "message"}]}',  # an export
        b'{"version": "1.0", "samples": [], "trajectory": [1]}',  # another key
        b'{"version": "1.0", "trajectory": [1], "trajectory": [2]}',  # said twice
        b'{"version": "1.0", "trajectory": null}',
        b'{"version": "1.0", "trajectory": []}',
        b'[{"version": "1.0", "trajectory": [1]}]',
        b'{"version": "1.0", "trajectory": [1, 2,, 3]}',
    ],
)
def test_what_is_not_a_plain_share_payload_is_read_whole(body):
    assert stream.scan(io.BytesIO(body), format=None, limits=Limits()) is None


def test_the_depth_guard_stops_the_scan_before_anything_is_built():
    """ijson builds what it is given: 5,000,000 levels of arrays would take gigabytes (2,000,000
    had the test process killed). The scan counts levels and stops at the limit, holding only
    the events of ijson's one read ahead (64 KB of input: about 4 MB), not the 10 MB body's."""
    levels = 5_000_000
    body = io.BytesIO(b'{"version": "1.0", "trajectory": [' + b"[" * levels + b"]" * levels + b"]}")
    gc.collect()
    tracemalloc.start()
    try:
        with pytest.raises(stream.FormatError) as caught:
            stream.scan(body, format=None, limits=Limits())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.message == "JSON nested deeper than 200 levels"
    assert peak < 6_000_000


def post(client, body: bytes):
    return client.post("/share_od_trajectory", data=body, content_type="application/json")


def screenshot_payload() -> bytes:
    return demo_payload(
        "broken", target_bytes=2_000_000, events=60, screenshots=8, screenshot_bytes=100_000
    )


def assert_nothing_stored(private_storage) -> None:
    assert Trajectory.objects.count() == 0 and Event.objects.count() == 0
    assert Image.objects.count() == 0
    assert storage_files(private_storage) == []


def test_a_body_that_breaks_in_the_middle_of_events_stores_nothing(client, private_storage):
    body = screenshot_payload()
    cut = body.index(b'"observation"', len(body) // 2)
    response = post(client, body[:cut] + b"}oops" + body[cut:])
    assert response.status_code == 400
    message = response.json()["body"]["message"]
    assert message.startswith("line 1, column ") and "not valid JSON" in message
    assert_nothing_stored(private_storage)
    response = post(client, body[: len(body) // 2])  # cut off
    assert response.status_code == 400 and "not valid JSON" in response.json()["body"]["message"]
    assert_nothing_stored(private_storage)


def test_an_event_refused_after_screenshots_were_stored_stores_nothing(client, private_storage):
    """Valid JSON whose 50th item is no event: the screenshots of the events before it were
    stored as they were read, and are removed again."""
    payload = orjson.loads(screenshot_payload())
    payload["trajectory"][50] = "not an event"
    response = post(client, orjson.dumps(payload))
    assert response.status_code == 400
    assert response.json()["body"]["message"] == "event 50: event is a string, not an object"
    assert_nothing_stored(private_storage)


def test_a_field_over_the_limit_mid_stream_names_the_event(client, private_storage, settings):
    settings.TRAJHUB_MAX_FIELD_BYTES = 200_000
    payload = orjson.loads(screenshot_payload())
    payload["trajectory"][40]["message"] = "x" * 300_000
    response = post(client, orjson.dumps(payload))
    assert response.status_code == 400
    message = response.json()["body"]["message"]
    assert message == "event 40: field 'message' is 300,000 bytes, over the limit of 200,000"
    assert_nothing_stored(private_storage)


def test_too_many_events_mid_stream_are_counted_and_refused(client, private_storage, settings):
    settings.TRAJHUB_MAX_EVENTS = 30
    response = post(client, screenshot_payload())
    assert response.status_code == 400
    assert response.json()["body"]["message"] == "60 events, over the limit of 30"
    assert_nothing_stored(private_storage)


def test_a_streamed_share_keeps_its_raw_copy_and_updates_its_session(client, private_storage):
    """The raw copy is the payload without its email, byte for byte what the whole reading
    wrote; sharing the same run again, longer, updates the same row."""
    events = v0_events(3)
    payload = share_payload(events, email="me@example.org")
    first = post(client, orjson.dumps(payload)).json()["body"]
    trajectory = Trajectory.objects.get(share_id=first["feedback_id"])
    expected = {k: v for k, v in payload.items() if k != "email"}
    assert raw_read(trajectory) == orjson.dumps(expected)
    longer = share_payload(v0_events(5), email="me@example.org")
    second = post(client, orjson.dumps(longer)).json()["body"]
    assert second["feedback_id"] == first["feedback_id"]
    trajectory.refresh_from_db()
    assert trajectory.num_events == len(v0_events(5))
    assert Event.objects.filter(trajectory=trajectory).count() == trajectory.num_events


@pytest.mark.parametrize("extra", [0, 1])
def test_the_scan_takes_the_depth_limit_and_refuses_one_level_more(extra):
    """Levels counted as the whole-document check counts them: object > trajectory > event >
    `extras` > ..., the limit itself accepted."""
    limit = 20
    value: list = []
    for _ in range(limit - 4 + extra):
        value = [value]
    events = v0_events(1)
    events[-1] = {**events[-1], "extras": value}
    body = io.BytesIO(orjson.dumps(share_payload(events)))
    if extra:
        with pytest.raises(stream.FormatError, match=f"JSON nested deeper than {limit} levels"):
            stream.scan(body, format=None, limits=Limits(max_depth=limit))
    else:
        assert stream.scan(body, format=None, limits=Limits(max_depth=limit)) is not None


def test_raw_copies_written_at_once_or_after_an_abandoned_one_stay_whole():
    """The kept compressor serves one copy at a time: a second writer opened meanwhile gets its
    own, and one opened after an abandoned copy starts afresh."""
    from apps.trajectories.services.storage import RawWriter

    def text(copy) -> bytes:
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(copy.compressed.read())

    abandoned = RawWriter()
    abandoned.write(b"a" * 100_000)
    first, second = RawWriter(), RawWriter()
    first.write(b"first " * 1000)
    second.write(b"second " * 1000)
    assert text(second.done()) == b"second " * 1000
    assert text(first.done()) == b"first " * 1000
    del abandoned
    again = RawWriter()
    again.write(b"again")
    assert text(again.done()) == b"again"
