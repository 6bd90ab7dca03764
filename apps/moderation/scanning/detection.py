"""What the scanner reports, and which kinds are personal data (the rest are secrets)."""

from __future__ import annotations

from typing import NamedTuple

SECRET = "secret"
PERSONAL = "personal"

# Personal data: auto-redactable by default (settings.TRAJHUB_AUTO_REDACT_KINDS). Every other
# kind, whichever rule found it, is a secret.
PERSONAL_KINDS = frozenset({"email", "phone", "ip_address", "user_name", "host"})


def category(kind: str) -> str:
    return PERSONAL if kind in PERSONAL_KINDS else SECRET


class _SecretKinds:
    """`kind in SECRET_KINDS`: the library's rules make the set of secret kinds open-ended."""

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and bool(kind) and kind not in PERSONAL_KINDS


SECRET_KINDS = _SecretKinds()


class Detection(NamedTuple):
    """One finding: its kind and where it is in the scanned string.

    `text` is exactly `scanned[start:end]`, as stored (it may hold colour codes, a line break
    where a terminal wrapped the line, or percent-escapes); `value` is the secret as a reader
    sees it once those are removed or decoded ("" when it is `text` itself). Both are redacted
    with the same placeholder.

    A named tuple, immutable and hashable: a scan makes two or three of these per finding (its
    rule's, then moved to the string's and the stored text's offsets), and a tuple is made in C,
    where a frozen dataclass sets each field through `object.__setattr__` (three times as long).
    """

    kind: str
    text: str
    start: int
    end: int
    value: str = ""

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    @property
    def shown(self) -> str:
        """The value a reader sees: what placeholders are numbered by."""
        return self.value or self.text
