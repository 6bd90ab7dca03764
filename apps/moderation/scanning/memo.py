"""What one scan has already read (`Scanner.scan_many`): a repeated string (agents print the
same output, file and error again and again) is read once. Pure Python, no Django."""

from __future__ import annotations

from apps.moderation.scanning.detection import Detection


class ScanMemo:
    """The findings of the strings one scan has read, by string, so that a repeated string is
    not read again (`Scanner.scan_many`). Holds at most `max_chars` characters of strings; past
    that, new strings are scanned every time (memory stays bounded on a huge trajectory).

    The strings read are a set, and only those with findings (few) have an entry of their own.
    """

    def __init__(self, max_chars: int = 64 << 20):
        self.max_chars = max_chars
        self.full = False  # a string was left out: lookups must check every string
        self._chars = 0
        self._seen: set[str] = set()
        self._hits: dict[str, tuple[Detection, ...]] = {}  # the strings with findings

    def __contains__(self, text: str) -> bool:
        return text in self._seen

    def get(self, text: str) -> tuple[Detection, ...] | None:
        if text not in self._seen:
            return None
        return self._hits.get(text, ())

    def add(self, text: str, found: tuple[Detection, ...]) -> None:
        if self._chars + len(text) > self.max_chars:
            self.full = True
            return
        self._seen.add(text)
        self._chars += len(text)
        if found:
            self._hits[text] = found

    def add_many(self, texts: list[str], found: dict[int, list[Detection]], chars: int) -> None:
        """`texts` (`chars` characters in all) with their findings, `found[i]` those of
        `texts[i]` (absent: none); one set update when all fit."""
        if self._chars + chars > self.max_chars:
            for index, text in enumerate(texts):
                self.add(text, tuple(found.get(index, ())))
            return
        self._seen.update(texts)
        self._chars += chars
        hits = self._hits
        for index, own in found.items():
            hits[texts[index]] = tuple(own)
