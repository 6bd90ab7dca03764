"""The scanning engine's shortcuts give exactly what the straightforward forms give.

Speed work replaced a few plain constructs by cheaper ones (bench/bench_scan.py): one
Aho-Corasick pass over every rule's anchor instead of an alternation of the rules, Base64-alphabet
runs found on a one-byte-per-character copy instead of a character-class pattern, a byte table
instead of a control-character search, and the library reading a long text in pieces. Each is
checked here against the form it replaced, on text made to hit its edges.
"""

from __future__ import annotations

import random
import re
import string

import pytest

from apps.moderation.scanners import Scanner
from apps.moderation.scanning import library, normalize
from apps.moderation.scanning import rules as hand
from tests.moderation import samples as s


def noisy_text(seed: int, size: int = 6000) -> str:
    """Code-like text full of anchors, near-misses, runs of every length and non-ASCII."""
    rng = random.Random(seed)
    pieces = [
        "token",
        "TOKEN=",
        "api_key: ",
        "--password ",
        "--db-pass x",
        "mysql -u root -p",
        "Bearer ",
        "authorization: basic ",
        "sk-",
        "sk-ant-",
        "AKIA",
        "ASIA",
        "@",
        "://",
        "-----BEGIN RSA PRIVATE KEY-----",
        "passwd=",
        "secret_key => '",
        "é",
        "İ",
        "日本",
        "=",
        "==",
        "/",
        "+",
        "\n",
        "\x00",
        " ",
        "\t",
        "'",
        '"',
        "key-",
        "glc_",
        "live_",
    ]
    out = []
    while sum(map(len, out)) < size:
        if rng.random() < 0.5:
            out.append(rng.choice(pieces))
        else:
            alphabet = rng.choice([string.ascii_letters + string.digits + "+/", string.hexdigits])
            out.append(
                "".join(rng.choices(alphabet, k=rng.choice([3, 19, 20, 21, 39, 40, 41, 64])))
            )
    return "".join(out)


@pytest.mark.parametrize("seed", range(12))
def test_anchor_pass_finds_what_a_pass_per_rule_finds(seed):
    text = noisy_text(seed)
    for family, haystack in (("literal", text), ("keyword", text.lower())):
        anchors = hand.anchors(family)
        got = sorted((rule.name, match.span()) for rule, match in anchors.matches(haystack))
        expected = sorted(
            (rule.name, match.span())
            for rule in hand.FAMILY[family]
            for match in re.compile(rule.source).finditer(haystack)
        )
        assert got == expected


@pytest.mark.parametrize("seed", range(12))
def test_alphabet_runs_are_the_character_class_runs(seed):
    text = noisy_text(seed)
    expected = [m.span() for m in re.finditer(r"[A-Za-z0-9+/]{20,}={0,2}", text)]
    assert hand.alphabet_runs(text) == expected


def test_bare_aws_secret_is_a_run_of_exactly_forty_standing_alone():
    secret = s.aws_secret()
    scanner = Scanner()
    assert [d.text for d in scanner.scan(f"secret {secret} end")] == [secret]
    assert [d.text for d in scanner.scan(f"x {secret} \u00e9")] == [secret]
    # Part of a longer run, or after `=` (the keyword rules' and the library's business).
    assert not [d for d in scanner.scan(f"x {secret}A y") if d.kind == "aws_secret_key"]
    assert not [d for d in scanner.scan(f"x =={secret} y") if d.kind == "aws_secret_key"]


@pytest.mark.parametrize("character", ["\x01", "\x07", "\x0b", "\x1b", "\x1f", "\x7f"])
def test_terminal_view_sees_every_control_character(character):
    text = f"before é {character} after"
    view = normalize.terminal(text)
    assert view is not None and character not in view.text
    assert normalize.terminal("plain\ttext\r\nwith NUL \x00 and é 日本") is None


def test_long_text_is_read_in_pieces_without_losing_or_doubling_a_finding(monkeypatch):
    """Keys at every distance from the cuts, in one long string and in NUL-joined strings."""
    rng = random.Random(5)
    lines = []
    while sum(map(len, lines)) < 5 * library.CHUNK:
        lines.append("".join(rng.choices(string.ascii_lowercase + " ", k=rng.randint(10, 300))))
        if rng.random() < 0.2:
            lines.append(f"export GITHUB_TOKEN={s.github_token()}")
        if rng.random() < 0.1:
            lines.append(s.private_key_block())
    for separator in ("\n", "\x00"):
        text = separator.join(lines)
        assert len(library._pieces(text)) > 3
        pieced = [(d.kind, d.start, d.end) for d in library.find(text)]
        monkeypatch.setattr(library, "CHUNK", len(text))
        whole = [(d.kind, d.start, d.end) for d in library.find(text)]
        monkeypatch.undo()
        assert pieced == whole
        assert len(whole) >= 10


def test_overlap_removal_keeps_what_the_pairwise_comparison_kept():
    """Bisection over the kept spans (it was a comparison with every kept span: minutes for the
    300,000 findings of issue 7's many-findings share)."""
    from apps.moderation.scanners import Detection, _without_overlaps

    rng = random.Random(11)
    for _ in range(200):
        found = []
        for _ in range(rng.randint(0, 40)):
            start = rng.randint(0, 100)
            end = start + rng.randint(1, 15)
            found.append((rng.randint(-2, 7), Detection("k", "x" * (end - start), start, end)))
        ranked = sorted(found, key=lambda i: (i[0], i[1].start - i[1].end, i[1].start))
        pairwise: list[Detection] = []
        for _, d in ranked:
            if all(d.end <= k.start or d.start >= k.end for k in pairwise):
                pairwise.append(d)
        pairwise.sort(key=lambda d: d.start)
        assert _without_overlaps(found) == pairwise
