"""Redaction in one pass: the output is what one regular expression of every original, longest
first, gives (the implementation before issue 7's many-findings case), for any number of them."""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.trajectories import redaction
from apps.trajectories.redaction import Matcher, redactor
from apps.trajectories.rendering.text import END, START, Marks


def regex_redact(redactions: dict[str, str], text: str) -> str:
    """The old redactor, verbatim: one alternation, longest original first."""
    originals = sorted((key for key in redactions if key), key=len, reverse=True)
    if not originals:
        return text
    pattern = re.compile("|".join(re.escape(original) for original in originals))
    return pattern.sub(lambda match: redactions[match.group(0)], text)


MODES = {
    "alternation": (redaction.ALTERNATION_MAX, redaction.SHORT_TEXT_LOOKUPS),
    "direct": (0, 10**12),  # no index: a look-up per position and length
    "index": (0, 0),  # the prefix index, whatever the text's length
}


def use_mode(monkeypatch, mode: str) -> None:
    alternation_max, short = MODES[mode]
    monkeypatch.setattr(redaction, "ALTERNATION_MAX", alternation_max)
    monkeypatch.setattr(redaction, "SHORT_TEXT_LOOKUPS", short)


@pytest.fixture(params=list(MODES))
def mode(request, monkeypatch):
    use_mode(monkeypatch, request.param)
    return request.param


ALPHABET = "ab.@-] ^\\\n"


@settings(max_examples=300, deadline=None)
@given(
    originals=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=6), max_size=12),
    text=st.text(alphabet=ALPHABET + "xyz", max_size=80),
)
def test_index_equals_the_alternation_on_overlapping_originals(originals, text):
    """Originals that are prefixes, suffixes and infixes of one another, regex metacharacters."""
    redactions = {original: f"<X_{i}>" for i, original in enumerate(originals)}
    old = regex_redact(redactions, text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        for mode in MODES:
            use_mode(monkeypatch, mode)
            assert redactor(redactions)(text) == old, mode


def test_many_emails_and_their_placeholders(mode):
    rng = random.Random(7)
    emails = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 9))) + f"{i}@mail.com"
        for i in range(600)
    ]
    redactions = {email: f"<EMAIL_{i + 1}>" for i, email in enumerate(emails)}
    text = " ".join(
        rng.choice(emails) + rng.choice(["", ".", ">", "x", "\u00e9"]) for _ in range(400)
    )
    text += " nothing here" + emails[0][:-1]  # a cut original is not one
    assert redactor(redactions)(text) == regex_redact(redactions, text)
    visitor = Marks(redactions, show_original=False)
    marked = visitor.mark(text + " <EMAIL_3> typed by hand")
    table = {p: p for p in redactions.values()} | redactions
    expected = re.compile("|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))).sub(
        lambda m: START + table[m.group(0)] + END, text + " <EMAIL_3> typed by hand"
    )
    assert marked == expected
    assert not any(email in visitor.plain(text) for email in emails)
    owner = Marks(redactions, show_original=True)
    assert owner.mark(text).replace(START, "").replace(END, "") == text


def test_index_reads_the_text_once_however_many_originals():
    """The index does work per character of text, not per original: 300,000 originals, the
    issue's case, and a page of text costs at most a prefix look-up per position."""
    originals = [f"u{i}.leak@gmail.com" for i in range(300_000)]
    matcher = Matcher(originals)
    text = " ".join(originals[::1000]) + " plain words" * 100
    lookups = 0

    class Counting(set):
        def __contains__(self, key):
            nonlocal lookups
            lookups += 1
            return super().__contains__(key)

    matcher._build_index()
    matcher._prefixes = Counting(matcher._prefixes)
    spans = matcher.spans(text)
    assert [text[a:b] for a, b in spans] == originals[::1000]
    assert lookups <= len(text)


@settings(max_examples=200, deadline=None)
@given(
    originals=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=6), max_size=12),
    text=st.text(alphabet=ALPHABET + "xyz", max_size=80),
    before=st.integers(min_value=0, max_value=90),
)
def test_spans_before_a_position_are_the_first_spans(originals, text, before):
    """What compare cuts its summaries by: the matches that start before `before`, exactly as
    the whole search finds them."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for mode in MODES:
            use_mode(monkeypatch, mode)
            matcher = Matcher(set(originals))
            whole = matcher.spans(text)
            assert matcher.spans(text, before=before) == [s for s in whole if s[0] < before], mode
