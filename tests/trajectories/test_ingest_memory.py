"""What ingest holds in memory (issues 22 and 24: ingest memory toward the payload): a JSON Lines
session is read one record at a time, prepared events keep their data once, and the changes that
made that possible keep the behaviour a sharer sees (errors naming the line, raw copies without
an envelope's email)."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from apps.trajectories.importers import FormatError, parse
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.importers.jsonio import JsonLines, decode_json
from apps.trajectories.services import events as prepared_events
from apps.trajectories.services import raw_read
from tests.ingest_helpers import ingest, share_payload, v0_events

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "claude_code_session.jsonl"


def claude_session(rounds: int) -> bytes:
    """The sample session's records `rounds` times over, each round's uuids made unique (as
    bench_archive.py makes its 20 MB session)."""
    records = [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    lines = [
        orjson.dumps({**record, "uuid": f"{record.get('uuid')}-{round_}"})
        for round_ in range(rounds)
        for record in records
    ]
    return b"\n".join(lines) + b"\n"


def traced_peak(run) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_claude_code_session_is_read_one_record_at_a_time():
    """Importing a 3 MB session peaks well under what holding its records parsed takes (it
    peaked at 12x the file, twice that: the body as text, its lines and every record at once)."""
    data = claude_session(300)
    held = traced_peak(lambda: [orjson.loads(line) for line in data.splitlines()])
    result = None

    def run() -> None:
        nonlocal result
        result = parse(data)

    peak = traced_peak(run)
    assert result is not None and len(result.trajectories) == 1
    assert len(result.trajectories[0].events) > 3000
    assert peak < held / 2, (peak / len(data), held / len(data))


def test_json_lines_are_parsed_when_read():
    data = claude_session(2)
    value, lines = decode_json(data)
    assert lines and isinstance(value, JsonLines)
    assert value[0] == (1, orjson.loads(data.split(b"\n")[0]))
    # Each read parses the line afresh: nothing parsed is kept by the sequence.
    assert value[0][1] is not value[0][1]
    assert value.raw(1) == data.split(b"\n")[1]
    assert [number for number, _ in value[:3]] == [1, 2, 3]


def test_prepared_events_keep_their_data_once():
    """orjson's output keeps a buffer of at least 4 KB: 2,000 events held 8 MB of it, beside a
    second copy of their data as dicts."""
    events = [
        CanonicalEvent("agent", "action", "run", f"ls {n}", {"command": f"ls {n}", "n": n})
        for n in range(2000)
    ]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        prepared = prepared_events.prepare(events, {}, lambda *args: None)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(prepared.events) == 2000
    assert prepared.events[5].data is None
    assert orjson.loads(prepared.events[5].data_json) == {"command": "ls 5", "n": 5}
    # About 800 bytes an event now (the row, its fingerprints, its JSON); orjson's buffer alone
    # was over 4 KB an event before.
    assert held < 2000 * 2000, held / 2000


def test_prepared_events_carry_their_summary_and_time_span():
    """Made as the events are prepared, from the same rows: counts, timeline letters, errors,
    and the first and last timestamp whatever their order."""
    late, early = datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)
    events = [
        CanonicalEvent("user", "message", "message", "go", timestamp=late),
        CanonicalEvent("agent", "action", "run", "ls", {"command": "ls"}, timestamp=early),
        CanonicalEvent(
            "environment", "observation", "run", "boom", {"extras": {"metadata": {"exit_code": 2}}}
        ),
    ]
    prepared = prepared_events.prepare(events, {}, lambda *args: None)
    summary = prepared.summary
    assert summary.chain_fingerprint == prepared.chain[-1]
    assert summary.letters == ["u", "c", "o"] and summary.errors == [3]
    assert dict(summary.counts) == {"message": 1, "run": 2}
    assert summary.compare_steps
    assert (prepared.first_timestamp, prepared.last_timestamp) == (early, late)


def test_the_first_bad_line_of_a_session_is_the_one_named():
    """Records are checked as the importer reads them: a record it cannot read on line 2 is
    named before a line of broken JSON further down (which used to be named first)."""
    lines = claude_session(1).split(b"\n")
    conversation = next(
        n for n, line in enumerate(lines) if b'"type":"user"' in line and b'"message"' in line
    )
    record = orjson.loads(lines[conversation])
    del record["message"]
    lines[conversation] = orjson.dumps(record)
    lines.insert(len(lines) - 2, b'{"type": "user", broken')
    result = parse(b"\n".join(lines))
    (item,) = result.items
    assert item.error is not None
    assert item.error.where == f"line {conversation + 1}"
    assert "without a message" in item.error.message


def test_invalid_utf8_on_a_json_line_names_the_line_and_byte():
    good = orjson.dumps([{"action": "message", "args": {"content": "hi"}, "source": "user"}])
    bad = b'[{"action": "message", "args": {"content": "caf\xe9"}, "source": "user"}]'
    data = good + b"\n" + bad + b"\n"
    result = parse(data)
    errors = [item.error for item in result.items if item.error is not None]
    assert len(result.trajectories) == 1 and len(errors) == 1
    assert errors[0].where == "line 2"
    position = data.index(b"\xe9")
    assert errors[0].message == f"not valid UTF-8 (byte {position})"


def test_a_broken_document_whose_first_line_is_json_is_one_error():
    """A first line that is JSON by itself does not make the rest JSON Lines when most of it
    is not."""
    data = b'{"a": 1}\n' + b"\n".join(b"not json %d" % n for n in range(10))
    with pytest.raises(FormatError) as caught:
        parse(data)
    assert caught.value.message.startswith("not valid JSON")
    assert caught.value.where == "line 2, column 1"


@pytest.mark.django_db
def test_share_envelopes_on_json_lines_are_stored_without_their_email(private_storage):
    """A raw JSON line is stored as sent unless it may be an envelope: then it is parsed and
    stored without its email, even when a key is written with escapes."""
    plain = orjson.dumps(share_payload(v0_events(1, task="one"), email="plain@example.org"))
    escaped = (
        orjson.dumps(share_payload(v0_events(1, task="two"), email="escaped@example.org"))
        .replace(b'"email"', b'"\\u0065mail"')
        .replace(b'"trajectory"', b'"\\u0074rajectory"')
    )
    other = orjson.dumps(v0_events(1, task="three"))
    result = ingest(plain + b"\n" + escaped + b"\n" + other + b"\n")
    assert result.errors == [] and len(result.stored) == 3
    raws = [raw_read(stored.trajectory) for stored in result.stored]
    assert b"plain@example.org" not in raws[0] and b"escaped@example.org" not in raws[1]
    assert orjson.loads(raws[1])["trajectory"][0]["message"] == "two"
    assert raws[2] == other
