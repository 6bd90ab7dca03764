"""The demo generator: realistic, deterministic, any size, and importable by TrajHub itself."""

import io
import random
import re

import orjson
import pytest
from PIL import Image

from apps.demo import generator as demo
from apps.trajectories.importers import parse


def images_of(session):
    found = []
    for event in session["events"]:
        extras = event.get("extras", {})
        args = event.get("args", {})
        for url in [
            extras.get("screenshot"),
            extras.get("set_of_marks"),
            *(extras.get("image_urls") or []),
            *(args.get("image_urls") or []),
        ]:
            if url:
                found.append(url)
    return found


def decode_png(url):
    import base64

    assert url.startswith("data:image/png;base64,")
    data = base64.b64decode(url.split(",", 1)[1])
    image = Image.open(io.BytesIO(data))
    image.verify()
    return data


def test_same_seed_same_bytes_other_seed_other_session():
    first = demo.share_payload(demo.generate_session(random.Random(11)))
    again = demo.share_payload(demo.generate_session(random.Random(11)))
    other = demo.share_payload(demo.generate_session(random.Random(12)))
    assert first == again
    assert first != other


def test_sessions_are_independent_of_count():
    few = [demo.share_payload(s) for s in demo.sessions(3, 2)]
    more = [demo.share_payload(s) for s in demo.sessions(3, 5)]
    assert few == more[:2]
    assert len(set(more)) == 5


def test_openhands_shape():
    session = demo.generate_session(random.Random(4), events=60, screenshots=2, plots=1)
    events = session["events"]
    assert len(events) == 60
    system, task, finish = events[0], events[1], events[-1]
    assert system["action"] == "system" and system["source"] == "agent"
    assert system["args"]["openhands_version"] == session["openhands_version"]
    assert system["args"]["agent_class"] == session["agent"]
    assert task["action"] == "message" and task["source"] == "user"
    assert task["args"]["content"] == session["task"]
    assert finish["action"] == "finish"
    ids = [e["id"] for e in events]
    assert ids == sorted(set(ids))
    stamps = [e["timestamp"] for e in events]
    assert stamps == sorted(stamps)
    by_id = {e["id"]: e for e in events}
    for event in events:
        if "observation" in event:
            cause = by_id[event["cause"]]
            assert "action" in cause and cause["id"] < event["id"]
    models = {
        e["tool_call_metadata"]["model_response"]["model"]
        for e in events
        if "tool_call_metadata" in e
    }
    assert models == {session["model"]}
    metrics = [e["llm_metrics"] for e in events if "llm_metrics" in e]
    costs = [m["accumulated_cost"] for m in metrics]
    assert costs == sorted(costs) and costs[-1] > 0
    assert metrics[-1]["accumulated_token_usage"]["model"] == session["model"]
    kinds = {e.get("action") or e.get("observation") for e in events}
    assert {"run", "browse", "run_ipython"} <= kinds
    runs = [e for e in events if e.get("observation") == "run"]
    assert all(e["success"] == (e["extras"]["metadata"]["exit_code"] == 0) for e in runs)


def test_varied_sessions():
    many = list(demo.sessions(8, 40))
    assert len({s["title"] for s in many}) >= 25
    assert len({s["model"] for s in many}) >= 5
    assert len({s["agent"] for s in many}) >= 3
    assert {s["permissions"] for s in many} == {"public", "private"}
    assert {s["polarity"] for s in many} == {"positive", "negative"}
    kinds = {e.get("action") or e.get("observation") for s in many for e in s["events"]}
    assert {"read", "edit", "error", "think", "browse_interactive"} <= kinds
    edits = [e for s in many for e in s["events"] if e.get("observation") == "edit"]
    assert edits and all(e["extras"]["diff"].startswith("--- a/") for e in edits)
    assert all(e["extras"]["old_content"] != e["extras"]["new_content"] for e in edits)


def test_images_are_real_and_distinct_pngs():
    session = demo.generate_session(random.Random(9), events=40, screenshots=5, plots=2)
    urls = images_of(session)
    assert len(urls) >= 12  # 5 screenshots + 5 set-of-marks + 2 plots (+ an attached photo)
    blobs = [decode_png(url) for url in urls]
    assert len(set(blobs)) == len(blobs)


def test_screenshot_bytes_makes_heavy_screenshots():
    session = demo.generate_session(
        random.Random(2), events=5, screenshots=1, screenshot_bytes=150_000
    )
    (shot, *_) = images_of(session)
    assert len(decode_png(shot)) > 150_000


@pytest.mark.parametrize("target", [10_000, 1_000_000, 3_000_000])
def test_target_bytes(target):
    session = demo.generate_session(random.Random(target), target_bytes=target)
    size = len(demo.share_payload(session))
    assert target <= size <= target * 1.08
    if target == 1_000_000:
        assert 300 <= len(session["events"]) <= 380


def test_too_few_events_for_the_images_is_refused():
    with pytest.raises(ValueError, match="cannot hold 3 screenshots"):
        demo.generate_session(random.Random(1), events=6, screenshots=3)


def test_share_payload_envelope_and_overrides():
    session = demo.generate_session(random.Random(5))
    body = orjson.loads(
        demo.share_payload(session, email="", permissions="private", polarity="negative")
    )
    assert list(body) == ["version", "email", "polarity", "feedback", "permissions", "trajectory"]
    assert body["email"] == "" and body["permissions"] == "private"
    assert body["polarity"] == body["feedback"] == "negative"
    assert "token" not in body
    assert body["trajectory"] == session["events"]


def test_v0_array_drops_what_the_export_drops():
    session = demo.generate_session(random.Random(6), events=20, screenshots=2)
    plain = orjson.loads(demo.v0_array(session))
    assert isinstance(plain, list) and len(plain) == 20
    browse = [e for e in plain if e.get("observation") == "browse"]
    assert browse and all(
        "screenshot" not in e["extras"] and "dom_object" not in e["extras"] for e in browse
    )
    kept = orjson.loads(demo.v0_array(session, include_screenshots=True, wrapped=True))
    assert all(
        e["extras"]["screenshot"].startswith("data:image/png")
        for e in kept["trajectory"]
        if e.get("observation") == "browse"
    )


@pytest.mark.parametrize("as_share", [True, False])
def test_trajhub_imports_what_it_generates(as_share):
    session = demo.generate_session(random.Random(7), events=30, screenshots=1)
    data = demo.share_payload(session) if as_share else demo.v0_array(session)
    result = parse(data)
    (item,) = result.items
    assert item.error is None
    assert len(item.trajectory.events) == 30


def test_titles_and_tasks_read_as_english():
    """Issue 11: "validateer", "computeing" and "the cache cache" were in the demo tasks."""
    doubled = re.compile(r"\b([a-z]+) \1\b", re.IGNORECASE)
    for seed in (0, 1, 2):
        for session in demo.sessions(seed, 200):
            for text in (session["title"], session["task"]):
                assert not doubled.search(text), text
                assert not re.search(r"eer\b|eing\b", text), text
