"""Where the hand-written rules match (`rules.py`): one Vectorscan pass over every rule's core,
then each rule's own pattern tried only where its core matched. Pure Python, no Django."""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import hyperscan

from apps.moderation.scanning import rules as hand
from apps.moderation.scanning.rules import BY_NAME, IPV6_HINT, Rule, compiled, compiled_numbers


class Candidates:
    """Where the rules match: one Vectorscan pass (the `hyperscan` package) over every rule's core
    finds where each can start, and each rule's own pattern (`re`) is tried only there.

    `re` cannot do this itself: an alternation of rules that start with different characters has
    no literal prefix, so `re` tries every branch at nearly every position, and a pass per rule
    reads the text once per rule. Vectorscan reads it once for all of them, and the cores, being
    the rules' first characters rather than their anchors alone, leave few places to try (a
    keyword followed by `=` and eight characters of a value, not every `token` in the code).
    Measured on the bench corpus: the three passes it replaced (an Aho-Corasick pass over the
    anchors of literal and of keyword rules, and the number alternation under `finditer`) cost
    0.7 of the floor, this one 0.2 with the checks after it.
    """

    def __init__(self, rules: tuple[Rule, ...]):
        self.rules = rules
        self._patterns: list[re.Pattern[str]] = []
        self._families: list[str] = []
        numbers = compiled_numbers()
        for rule in rules:
            if rule.family == "number":
                # One alternation, as `finditer` of it reads numbers: a match of any number rule
                # is looked for where any of their cores matched, `lastgroup` naming the rule.
                self._patterns.append(numbers)
            else:
                self._patterns.append(compiled(rule.name, rule.family == "keyword"))
            self._families.append(rule.family)
        self._ipv6 = len(rules)
        self._gaps = {i: rule.anchor.encode() for i, rule in enumerate(rules) if rule.gap}
        flags = [
            hyperscan.HS_FLAG_SOM_LEFTMOST
            | (hyperscan.HS_FLAG_CASELESS if rule.family == "keyword" else 0)
            for rule in rules
        ]
        self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._database.compile(
            expressions=[rule.core.encode() for rule in rules] + [IPV6_HINT.encode()],
            ids=list(range(len(rules) + 1)),
            flags=[*flags, hyperscan.HS_FLAG_SOM_LEFTMOST],
        )
        self._local = threading.local()

    def _scratch(self) -> hyperscan.Scratch:
        # Vectorscan's scratch space is one per thread (the development server scans in threads).
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def find(
        self, text: str, data: bytes
    ) -> tuple[dict[str, list[tuple[Rule, re.Match[str]]]], list[int]]:
        """Each family's matches in `text` (`data`: its `one_byte_copy`), each rule's as `finditer`
        of its pattern gives them (the number rules': of their alternation), and the offsets where
        an IPv6 address may start."""
        if not text.isascii() and "\u212a" in text:
            # The Kelvin sign lowercases to `k`, so `TO\u212aEN=...` is a keyword to `re`.
            data = text.replace("\u212a", "k").encode("ascii", "replace")
        hits: list[tuple[int, int, int]] = []
        self._database.scan(data, match_event_handler=_hit, context=hits, scratch=self._scratch())
        found: dict[str, list[tuple[Rule, re.Match[str]]]] = {
            "literal": [], "keyword": [], "number": []
        }  # fmt: skip
        ipv6: list[int] = []
        resume: dict[object, int] = {}  # rule index (number rules: "number") -> end of its match
        patterns, families, ipv6_id, gaps = self._patterns, self._families, self._ipv6, self._gaps
        lowered: bytes | None = None
        # Sorted by start: a place reported for several ends is tried once (or again with the
        # next end, where the rule did not match there), and each rule's matches come as
        # `finditer` reaches them (left to right, not overlapping one another).
        previous = (-1, -1)
        for start, index, end in sorted(set(hits)):
            same = (start, index) == previous  # the same place, another end
            previous = (start, index)
            if same and index not in gaps:
                continue
            if index == ipv6_id:
                ipv6.append(start)
                continue
            family = families[index]
            key = family if family == "number" else index
            if start < resume.get(key, 0):
                continue
            match = patterns[index].match(text, start)
            if match is None and index in gaps:
                if lowered is None:
                    lowered = data.lower()
                match = _at_later_anchor(patterns[index], gaps[index], text, lowered, start, end)
            if match is None:
                continue
            resume[key] = max(match.end(), match.start() + 1)
            rule = BY_NAME[match.lastgroup] if family == "number" else self.rules[index]  # type: ignore[index]
            found[family].append((rule, match))
        return found, ipv6


def _hit(index: int, start: int, end: int, flags: int, hits: object) -> None:
    hits.append((start, index, end))  # type: ignore[attr-defined]


def _at_later_anchor(
    pattern: re.Pattern[str], anchor: bytes, text: str, lowered: bytes, start: int, end: int
) -> re.Match[str] | None:
    """The first match of a rule with a gap (`Rule.gap`) at one of its anchors after `start`
    and before `end`: the core matched from `start` to `end`, and maybe from them too."""
    at = lowered.find(anchor, start + 1, end)
    while at >= 0:
        match = pattern.match(text, at)
        if match is not None:
            return match
        at = lowered.find(anchor, at + 1, end)
    return None


@lru_cache(maxsize=1)
def candidates() -> Candidates:
    """The rules' candidate pass, built once per process (compiling takes about 0.1 s)."""
    return Candidates(tuple(rule for family in hand.FAMILY.values() for rule in family))
