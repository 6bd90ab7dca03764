"""Find from a per-trajectory index (issue 24): made from the redacted text after the scan,
it answers exactly what reading every event answers, in a fixed number of queries that never
read the events for a word; a redacted value is never findable by its raw value, and an index
made with another map is never used."""

from __future__ import annotations

import json
import random

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Event, FindIndex, Trajectory
from apps.trajectories.selectors.find import find_by_index, find_by_reading
from tests.ingest_helpers import reindex
from tests.trajectories.viewer_factories import ingest, openhands_session

pytestmark = pytest.mark.django_db

EMAIL = "jane.doe@example-mail.com"
# A GitHub token of the documented shape (ghp_ + 36), made up for this test.
TOKEN = "ghp_" + "R8f2kQ9xLm3Vt7Wb1Zc4Yd6Ne0Hj5Gs2Pa8U"
QUERIES = [
    "round",
    "tests/test_1.py::test_case_2 passed",
    "exit code 1",
    "Running command: pytest -x",
    "passed   [ 50%]",
    "(x):",
    "f1(x):\n    return x",
    "test_case_1",
    ".py",
    "::test",
    "/workspace/app/",
    "ROUND",
    "ound",
    "round 8:",
    "ROUND 8",
    "tests/test_1",
    "passed   [",
    "run",
    "message",
    "email_1",
    "<EMAIL_1>",
    "jane",
    "jane.doe",
    "-",
    ":",
    "zzz-not-there",
    "Ünïcode",
    "e",
]


def _events() -> list[dict]:
    events = openhands_session(60, screenshots=2, output_lines=12)
    events[0]["args"]["content"] = f"Mail {EMAIL} about ÜNÏCODE tests"
    events[2]["content"] = f"sent to {EMAIL}\n"
    return events


def _indexed(owner, **kwargs) -> Trajectory:
    trajectory = ingest(json.dumps(_events()).encode(), owner=owner, visibility="public", **kwargs)
    reindex(trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def _loaded(trajectory: Trajectory) -> Trajectory:
    """As the page's access loads it (with the redaction index, not the map)."""
    from apps.trajectories.selectors.redactions import with_redaction_index

    return with_redaction_index(Trajectory.objects.filter(pk=trajectory.pk)).get()


@pytest.mark.parametrize("redactions", [{}, {EMAIL: "<EMAIL_1>"}])
@pytest.mark.parametrize("show_original", [False, True])
def test_the_index_answers_what_reading_every_event_answers(owner, redactions, show_original):
    trajectory = _indexed(owner, redactions=redactions)
    assert FindIndex.objects.filter(trajectory=trajectory).exists()
    loaded = _loaded(trajectory)
    for query in QUERIES:
        indexed = find_by_index(loaded, query, show_original=show_original)
        read = find_by_reading(loaded, query, show_original=show_original)
        if indexed is None:
            assert not any(ch.isalnum() or ch == "_" for ch in query), query
            continue
        assert indexed == read, query
    found = find_by_index(loaded, "jane", show_original=show_original)
    assert found is not None and (found.total > 0) == (show_original or not redactions)


WORDS = ["a", "ab", "ba", "aba", "Cargo", "cargo", "test", "tests", "x_1", "straße", "STRASSE"]
WORDS += ["Ünï", "é9", "_", "jane"]
SEPARATORS = [" ", "  ", "\n", "\n    ", ", ", ". ", "/", "-", "::", "(", ")", "'", "—", "@"]
SEPARATORS += ["-" * 70, " " * 80]  # longer than the index keeps: those steps are read


def _random_text(rng: random.Random) -> str:
    parts = [rng.choice(["", *SEPARATORS])]
    for _ in range(rng.randrange(0, 30)):
        parts += [rng.choice(WORDS), rng.choice(SEPARATORS)]
    if rng.random() < 0.3:
        parts.append(f"{EMAIL} ")
    return "".join(parts[:-1] if rng.random() < 0.5 else parts)


@pytest.mark.parametrize("redactions", [{}, {EMAIL: "<EMAIL_1>"}])
@pytest.mark.parametrize("show_original", [False, True])
def test_queries_of_several_words_answer_what_reading_answers(owner, redactions, show_original):
    """Where the words are (their separators, the step edges, repeated words whose matches
    overlap, casefolding that changes lengths, separators too long to keep) gives exactly the
    steps and hits that reading every event's text gives, for any piece of any text."""
    rng = random.Random(24)
    events = openhands_session(40, screenshots=0, output_lines=3)
    texts = []
    for event in events:
        if "observation" in event:
            event["content"] = _random_text(rng)
            texts.append(event["content"])
    # Matches that overlap, which str.count counts once: "a a" is once in "a a a".
    events[2]["content"] = "a a a a, aba aba aba\nab ab-ab ab"
    trajectory = ingest(
        json.dumps(events).encode(), owner=owner, visibility="public", redactions=redactions
    )
    reindex(trajectory)
    loaded = _loaded(Trajectory.objects.get(pk=trajectory.pk))
    queries = {
        "a a",
        "a a a",
        "aba aba",
        "ab ab",
        "ab ba",
        "cargo test",
        "STRASSE straße",
        "jane.doe@",
    }
    while len(queries) < 250:
        text = rng.choice(texts)
        start = rng.randrange(0, max(len(text), 1))
        piece = text[start : start + rng.randrange(1, 24)].strip()
        if piece:
            queries.add(piece if rng.random() < 0.7 else piece.upper())
    for query in sorted(queries):
        indexed = find_by_index(loaded, query, show_original=show_original)
        read = find_by_reading(loaded, query, show_original=show_original)
        if indexed is None:
            assert not any(ch.isalnum() or ch == "_" for ch in query), query
            continue
        assert indexed == read, query


@pytest.mark.parametrize("steps", [8, 240])
def test_find_reads_no_event_for_a_word_and_a_fixed_number_of_queries(owner, steps):
    events = openhands_session(steps, screenshots=0, output_lines=12)
    trajectory = ingest(json.dumps(events).encode(), owner=owner, visibility="public")
    reindex(trajectory)
    url = f"{trajectory.get_absolute_url()}find?q=passed"
    with CaptureQueriesContext(connection) as captured:
        data = Client().get(url).json()
    assert data["total"] > 0 and data["matched"] == len(data["steps"])
    sql = [query["sql"] for query in captured.captured_queries]
    # access, the index's row, the postings of the words matched
    assert len(sql) == 3, sql
    assert not any(f'FROM "{Event._meta.db_table}"' in statement for statement in sql)


@pytest.mark.parametrize("steps", [8, 240])
@pytest.mark.parametrize(
    "query",
    ["case_1 passed", "round 1.", "tests/test_1.py::test", "/test_1.py", "passed   ["],
)
def test_a_phrase_reads_no_event_and_a_fixed_number_of_queries(owner, steps, query):
    events = openhands_session(steps, screenshots=0, output_lines=12)
    trajectory = ingest(json.dumps(events).encode(), owner=owner, visibility="public")
    reindex(trajectory)
    base = trajectory.get_absolute_url()
    with CaptureQueriesContext(connection) as captured:
        data = Client().get(f"{base}find", {"q": query}).json()
    assert data["total"] > 0 and data["matched"] == len(data["steps"])
    sql = [query["sql"] for query in captured.captured_queries]
    # access, the index's row (with each step's type), where the words matched are
    assert len(sql) == 3, sql
    assert not any(f'FROM "{Event._meta.db_table}"' in statement for statement in sql)


def test_a_secret_is_never_findable_by_its_raw_value(owner, settings):
    settings.TRAJHUB_OCR = False
    events = _events()
    events[4]["content"] = f"export GITHUB_TOKEN={TOKEN}\n"
    trajectory = ingest(
        json.dumps(events).encode(), owner=owner, visibility="public", review_state="pending"
    )
    trajectory_scan(trajectory=trajectory)  # finds the token and the address, indexes them
    Trajectory.objects.filter(pk=trajectory.pk).update(review_state="approved")
    trajectory.refresh_from_db()
    index = FindIndex.objects.get(trajectory=trajectory)
    assert index.indexed_at == trajectory.indexed_at
    for part in (TOKEN.lower(), TOKEN[4:20].lower(), "jane", "example"):
        assert part not in index.terms
    # What lies between words is of the redacted text too: no piece of a raw value.
    assert not any("@" in separator or "ghp" in separator for separator in index.separators)
    base = trajectory.get_absolute_url()
    visitor = Client()
    for query in (
        TOKEN,
        TOKEN[4:20],
        TOKEN[-10:],
        "jane.doe",
        EMAIL,
        f"GITHUB_TOKEN={TOKEN[:10]}",
        f"export GITHUB_TOKEN={TOKEN}",
        f"sent to {EMAIL}",
        "sent to jane",
        "Mail jane.doe@",
    ):
        assert visitor.get(f"{base}find", {"q": query}).json()["total"] == 0, query
        data = visitor.get(f"{base}find", {"q": query, "limit": 5, "snippets": "1"}).json()
        assert data["steps"] == [] and data["snippets"] == []
    placeholder = visitor.get(f"{base}find", {"q": "GITHUB_TOKEN", "snippets": "1"}).json()
    assert placeholder["total"] >= 1
    assert all(TOKEN[4:12] not in text for _, text in placeholder["snippets"])
    signed_in = Client()
    signed_in.force_login(owner)
    assert signed_in.get(f"{base}find", {"q": TOKEN}).json()["total"] == 1


def test_an_index_made_with_another_map_is_never_used(owner):
    trajectory = _indexed(owner)
    base = trajectory.get_absolute_url()
    assert Client().get(f"{base}find?q=jane").json()["total"] >= 2
    # A moderator redacts it: the trigger marks the index stale at once, before any rebuild.
    Trajectory.objects.filter(pk=trajectory.pk).update(redactions={EMAIL: "<EMAIL_1>"})
    assert Client().get(f"{base}find?q=jane").json()["total"] == 0
    assert find_by_index(_loaded(trajectory), "jane", show_original=False) is None
    reindex(trajectory)
    assert Client().get(f"{base}find?q=jane").json()["total"] == 0
    assert Client().get(f"{base}find?q=email_1").json()["total"] >= 2
    assert (
        FindIndex.objects.get(trajectory=trajectory).indexed_at
        == Trajectory.objects.get(pk=trajectory.pk).indexed_at
    )


def test_steps_come_in_pages_with_short_redacted_snippets(owner):
    trajectory = _indexed(owner, redactions={EMAIL: "<EMAIL_1>"})
    base = trajectory.get_absolute_url()
    every = Client().get(f"{base}find?q=passed").json()
    assert every["matched"] > 5 and every["next"] is None
    first = Client().get(f"{base}find?q=passed&limit=4&snippets=1").json()
    assert first["steps"] == every["steps"][:4] and first["next"] == 4
    assert first["total"] == every["total"] and first["matched"] == every["matched"]
    assert [step for step, _ in first["snippets"]] == [step for step, _, _ in first["steps"]]
    assert all("passed" in text.lower() and len(text) < 200 for _, text in first["snippets"])
    second = Client().get(f"{base}find?q=passed&limit=4&offset=4").json()
    assert second["steps"] == every["steps"][4:8]
    mail = Client().get(f"{base}find?q=sent to&snippets=1").json()
    assert mail["snippets"] and all(
        "<EMAIL_1>" in text and "jane" not in text for _, text in mail["snippets"]
    )


def test_an_index_made_before_words_had_places_still_answers(owner):
    """Indexes of the first version (no positions, no step types) answer one word from their
    postings and leave a phrase to reading, until the sweep makes them again."""
    from apps.trajectories.services.redaction_index import redaction_index_sweep

    trajectory = _indexed(owner, redactions={EMAIL: "<EMAIL_1>"})
    FindIndex.objects.filter(trajectory=trajectory).update(
        version=1, step_words=b"", step_types=b"", occurrences=b"", occurrence_offsets=b""
    )
    loaded = _loaded(trajectory)
    for query in ("passed", "run", "round 8:", "email_1"):
        read = find_by_reading(loaded, query, show_original=False)
        indexed = find_by_index(loaded, query, show_original=False)
        assert indexed == read or (indexed is None and " " in query), query
    assert redaction_index_sweep(limit=10) >= 1
    assert FindIndex.objects.get(trajectory=trajectory).version == 2
    loaded = _loaded(trajectory)
    assert find_by_index(loaded, "round 8:", show_original=False) == find_by_reading(
        loaded, "round 8:", show_original=False
    )


def test_a_query_matching_many_words_reads_the_whole_column(owner, monkeypatch):
    """Past MANY_TERMS matched words the postings and occurrences are read whole, not sliced
    word by word (a one-letter query matched 25,000 words of a 50,000-step run: 5 s of
    slices); the answer is the same."""
    from apps.trajectories.selectors import find_store

    trajectory = _indexed(owner, redactions={EMAIL: "<EMAIL_1>"})
    loaded = _loaded(trajectory)
    monkeypatch.setattr(find_store, "MANY_TERMS", 1)
    for query in ("e", "s", "round 8:", "tests/test_1", "passed   ["):
        assert find_by_index(loaded, query, show_original=False) == find_by_reading(
            loaded, query, show_original=False
        ), query
