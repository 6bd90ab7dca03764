"""Secret and personal-data scanning of trajectory text: the engine's entry points. Pure Python.

`Scanner(allowlist).scan(text)` returns `Detection(kind, text, start, end)` for every credential
and every piece of personal data (email, phone number, IPv4/IPv6 address) that the allowlist does
not excuse; module-level `scan(text)` does the same with the default allowlist. Behind them
(`apps/moderation/scanning/`): the Kingfisher library's vendor rules, the hand-written rules for
what it does not cover, and views of the text as a reader sees it (colour codes removed,
URL-decoded, unwrapped, Base64-decoded) whose findings are mapped back to the stored text.
"""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate, compress, count, filterfalse
from operator import add

import phonenumbers

from apps.moderation.scanning import candidates, checks, library, normalize
from apps.moderation.scanning import rules as hand
from apps.moderation.scanning.allowlist import DEFAULT_ALLOWLIST, Allowlist
from apps.moderation.scanning.detection import (
    PERSONAL,
    PERSONAL_KINDS,
    SECRET,
    SECRET_KINDS,
    Detection,
    category,
)
from apps.moderation.scanning.memo import ScanMemo
from apps.moderation.scanning.runs import Runs

__all__ = [
    "DEFAULT_ALLOWLIST",
    "PERSONAL",
    "PERSONAL_KINDS",
    "SECRET",
    "SECRET_KINDS",
    "Allowlist",
    "Detection",
    "ScanMemo",
    "Scanner",
    "category",
    "scan",
    "version",
]

_SEPARATOR = "\x00"
# JSON keys that name a credential: `password`, `DB_PASSWORD`, `openai_api_key`, `x-api-key`.
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_.\-])(?:passw(?:or)?d|passphrase|secret|(?:api|access|auth|secret|private"
    r"|encryption|signing|master|session|app|hmac|jwt)[_\-]?(?:key|token)|client[_\-]?secret"
    r"|apikey|token)$"
)

# IPv6: anchored on `::` or on three colon-separated hex groups, then widened and parsed.
_IPV6_HINT = re.compile(hand.IPV6_HINT)
_IPV6_CANDIDATE = re.compile(r"[0-9A-Fa-f:]*(?:\.\d{1,3}){0,3}")
_HEX_COLON = frozenset("0123456789abcdefABCDEF:")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
# The same characters as a run `re` reads back from an `@` in one match (`Scanner._take`).
_EMAIL_LOCAL_RUN = re.compile("[" + re.escape("".join(sorted(_EMAIL_LOCAL))) + "]*")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# A name that looks like an email but is a file (`icon@2x.png`) or a package version (`pkg@1.2`).
_FILE_TLDS = frozenset(
    "png jpg jpeg gif svg webp ico bmp js mjs cjs ts tsx jsx py rb go rs css scss html htm json "
    "yaml yml toml txt md lock map wasm zip gz tar so dll exe pdf xml csv ipynb sh".split()
)
_AWS_BARE_PRIORITY = 6
_NEXT_PARAMETER = re.compile(r"&[A-Za-z_][A-Za-z0-9_.-]*=")
_Found = list[tuple[int, Detection]]  # (priority: lower wins an overlap, detection)


# Bumped when the engine's own code changes what a scan finds (the rules have their digests):
# 2 - a match across two strings of a batch no longer hides the findings in them.
# 3 - the bound on decoded Base64 runs counts per string of a batch, not per batch.
# 4 - the library reads the Base64 view (vendor keys encoded without their padding), and
#     Base64 wrapped at 64 or 76 columns is decoded once unwrapped.
# 5 - the Markdown view: backslash escapes and entity references decoded, as the page shows
#     an agent's message (`&#115;k-proj-...` is a key).
# 6 - a token wrapped after `KEY = ` (8 characters or more on the full line, 20 with the next
#     line's) is unwrapped; `$` then a random value is a value, not a variable (allowlist).
# 7 - each event's own id and cause are read too (the events API and the page show them).
# 8 - a prose value after a second anchor in the window is found (`token_count ... tokens. v`),
#     and `\x1c`-`\x1f` read as spaces in the keyword rules' places, as `re` reads them.
ENGINE = 8


def version(cache_dir: str | None = None) -> str:
    """Engine and rules version, recorded with each scan: a change means a rescan is due."""
    return f"{library.version(cache_dir)};hand-{hand.VERSION};engine-{ENGINE}"


def _library_priority(kind: str) -> int:
    if kind in library.GENERIC_KINDS:
        return 2
    return -1 if kind in _MAPPED_KINDS else 0


_MAPPED_KINDS = library.MAPPED_KINDS


class Scanner:
    """Finds secrets and personal data in strings. Thread-safe; build one per allowlist.

    `cache_dir`: where the library keeps its compiled rules (None: the user's cache directory).
    """

    def __init__(self, allowlist: Allowlist | None = None, *, cache_dir: str | None = None):
        self.allowlist = allowlist or Allowlist.build()
        self.cache_dir = cache_dir

    # --- the passes -------------------------------------------------------------------------

    def scan(self, text: str) -> list[Detection]:
        """Every finding in `text`, in order, without overlaps (the more specific kind wins).

        Offsets and `text` of each detection are into the string given; a finding in colour-coded,
        percent-encoded, wrapped or Base64 text covers the stored span and carries the value a
        reader sees in `value`.
        """
        if len(text) < 6:
            return []
        encoded, data = _encodings(text)
        marks = normalize.marks(data)
        term = normalize.terminal(text, data, marks)
        if term is not None:
            base = term.text
            encoded, data = _encodings(base)
            runs = Runs(data)
        else:
            base = text
            runs = Runs(data, marks=marks)
        found = self._all(
            base, personal=True, use_library=True, runs=runs, data=data, encoded=encoded
        )
        unwrapped = normalize.unwrapped(base, data)
        for view, personal, use_library in (
            (normalize.url_decoded(base), True, True),
            (normalize.markdown_decoded(base), True, True),
            (unwrapped, False, True),
            (normalize.base64_decoded(base, runs), False, True),
        ):
            if view is not None:
                inner = self._all(view.text, personal=personal, use_library=use_library)
                found.extend(_mapped(view, base, inner))
        if unwrapped is not None:
            # Base64 as `base64` prints it, wrapped at 76 columns: decoded once unwrapped.
            decoded = normalize.base64_decoded(unwrapped.text)
            if decoded is not None:
                inner = self._all(decoded.text, personal=False, use_library=True)
                found.extend(_mapped(unwrapped, base, _mapped(decoded, unwrapped.text, inner)))
        if term is not None:
            found = _mapped(term, text, found)
        if _SEPARATOR in text:
            # A match across the NUL between two strings of a batch (the library reads NUL as a
            # space) is no finding; left in, it could win the overlap with the real finding in
            # one of the strings, which would then be lost with it.
            found = [item for item in found if _SEPARATOR not in item[1].text]
        if len(found) > 1:
            return _without_overlaps(found)
        return [detection for _, detection in found]

    def _all(
        self,
        text: str,
        *,
        personal: bool,
        use_library: bool,
        runs: Runs | None = None,
        data: bytes | None = None,
        encoded: bytes | None = None,
    ) -> _Found:
        """`data`: `text`'s one-byte copy and `encoded` its UTF-8 (`_encodings`), if at hand."""
        found: _Found = []
        if data is None or encoded is None:
            encoded, data = _encodings(text)
        if use_library:
            allow = self.allowlist
            for detection in library.find(text, self.cache_dir, encoded):
                if not allow.allows_secret(detection.shown):
                    found.append((_library_priority(detection.kind), detection))
        matches, ipv6 = candidates.candidates().find(text, data)
        for rule, match in matches["literal"]:
            if personal or rule.category != PERSONAL:
                self._take(match, rule, "value", text, found)
        for rule, match in matches["keyword"]:
            self._take(match, rule, "value", text, found)
        self._aws_bare(text, Runs(data) if runs is None else runs, found)
        if personal:
            for rule, match in matches["number"]:
                self._take(match, rule, f"{rule.name}__v", text, found)
            if ipv6:
                self._ipv6_scan(text, found, ipv6)
        return found

    def _aws_bare(self, text: str, runs: Runs, out: _Found) -> None:
        """A bare AWS secret key: a run of exactly 40 characters of its alphabet, no `=` in it
        or before it (`KEY=<40 characters>` is the keyword rules' and the library's)."""
        allow = self.allowlist
        for start, end in runs.of_length(40):
            if start and text[start - 1] == "=":
                continue
            value = text[start:end]
            if "=" in value:
                continue
            if checks.aws_secret_like(value) and not allow.allows_secret(value):
                out.append((_AWS_BARE_PRIORITY, Detection("aws_secret_key", value, start, end)))

    def scan_many(
        self, texts: Sequence[str], memo: ScanMemo | None = None
    ) -> list[tuple[int, Detection]]:
        """Scan many strings in one pass: `(index into texts, detection within that string)`.

        Joining amortizes the per-call cost over the many short strings of an event's JSON. No
        pattern matches across the NUL separator; a string that itself contains NUL can only lose
        a finding that spans it. Each distinct string is read once: a repeated one (agents print
        the same output, file and error again and again) gets the findings of its first copy,
        within this call and, given one `memo` for the calls of one scan, across them. Each
        detection keeps the value a reader sees (`Detection.value`), as `scan()` gives it.
        """
        if not texts:
            return []
        if memo is None:
            memo = ScanMemo()
        known = memo._seen
        # The strings not read yet, once each, picked in C (`filterfalse`) in their order here:
        # the known ones are let go before they are hashed into a dict.
        fresh = list(dict.fromkeys(filterfalse(known.__contains__, texts) if known else texts))
        if fresh:
            joined = _SEPARATOR.join(fresh)
            detections = self.scan(joined)
            per_text: dict[int, list[Detection]] = {}
            for detection, (index, base) in zip(
                detections, _strings_of(joined, fresh, detections), strict=True
            ):
                if detection.end > base + len(fresh[index]):
                    continue
                per_text.setdefault(index, []).append(
                    Detection(
                        detection.kind,
                        detection.text,
                        detection.start - base,
                        detection.end - base,
                        detection.value,
                    )
                )
            memo.add_many(fresh, per_text, len(joined) - len(fresh) + 1)
        hits = memo._hits
        if not memo.full:
            if not hits:
                return []
            # The indexes of the strings with findings, picked in C (most strings have none).
            return [
                (index, detection)
                for index in compress(count(), map(hits.__contains__, texts))
                for detection in hits[texts[index]]
            ]
        out: list[tuple[int, Detection]] = []
        for index, text in enumerate(texts):
            found = memo.get(text)
            if found is None:  # past the memo's bound: scanned again on its own
                found = tuple(detection for _, detection in self.scan_many([text]))
            out.extend((index, detection) for detection in found)
        return out

    def scan_pair(self, key: str, value: str) -> Detection | None:
        """A JSON member such as `"DB_PASSWORD": "..."`: the key names a secret, the value is one.

        Scanning strings one by one cannot see this (the key and the value are two strings).
        """
        if len(value) < 8 or len(key) > 64 or not _SECRET_KEY.search(key):
            return None
        stripped = value.strip()
        if (
            stripped != value
            or not checks.high_entropy(value)
            or any(c.isspace() for c in value)
            or self.allowlist.allows_secret(value)
        ):
            return None
        return Detection("secret", value, 0, len(value))

    def _take(
        self, match: re.Match[str], matched: hand.Rule, value_group: str, text: str, out: _Found
    ) -> None:
        """A match of `matched` (found in `text` or its lowercased copy: same offsets), checked
        and post-processed on `text`; appended to `out` unless it is excused."""
        allow = self.allowlist
        start, end = match.start(), match.end()
        if value_group in match.re.groupindex and match.start(value_group) >= 0:
            start, end = match.span(value_group)
        kind = matched.kind
        if kind == "email":
            at = start - 1
            start = at
            floor = max(0, at - 64)
            # The local part, read back from the `@`: one match on the reversed 64 characters
            # before it, not a Python step per character.
            start = at - _EMAIL_LOCAL_RUN.match(text[floor:at][::-1]).end()  # type: ignore[union-attr]
            while start < at and text[start] == ".":
                start += 1
            if start == at or (start == floor and floor and text[floor - 1] in _EMAIL_LOCAL):
                return
            domain = text[at + 1 : end]
            if domain.rsplit(".", 1)[-1].lower() in _FILE_TLDS or allow.allows_domain(domain):
                return
        if (
            kind == "password"
            and end - start > 2
            and text[start] in "'\""
            and (text[start] == text[end - 1])
        ):
            start, end = start + 1, end - 1  # `-p'pw'`: the password, not its quotes
        if kind == "secret":
            # "Your new password: aB3#fG7!kL9@." - the full stop ends the sentence.
            while end - start > 8 and text[end - 1] == ".":
                end -= 1
            # `?key=value&x=1` in a URL: the value ends at the next parameter.
            parameter = _NEXT_PARAMETER.search(text, start, end)
            if parameter is not None:
                end = parameter.start()
        value = text[start:end]
        if matched.category == SECRET:
            if matched.check is not None and not matched.check(value):
                return
            # A key followed by `...` or `…` is a key all the same (a partial one too).
            if allow.allows_secret(value):
                return
        elif kind == "email":
            if allow.allows_value(value):
                return
        elif kind == "user_name":
            if not checks.personal_user_name(value) or allow.allows_value(value):
                return
        elif kind == "host":
            if not checks.personal_host_name(value) or allow.allows_value(value):
                return
        elif kind == "ip_address":
            try:
                address = ipaddress.IPv4Address(value)
            except ValueError:
                return
            if allow.allows_ip(address):
                return
        elif kind == "phone":
            digits = sum(c.isdigit() for c in value)
            if digits < 8 or digits > 15 or allow.allows_phone(value):
                return
            if not _valid_phone(value):
                return
        out.append((matched.priority, Detection(kind, value, start, end)))

    def _ipv6_scan(self, text: str, out: _Found, hints: list[int]) -> None:
        """An IPv6 address around each place `hints` (in order) says one may stand, the hint
        pattern's matches read left to right as `finditer` would."""
        pos = 0
        for at in hints:
            if at < pos:
                continue
            hint = _IPV6_HINT.match(text, at)
            if hint is None:
                continue
            start = hint.start()
            while start > 0 and text[start - 1] in _HEX_COLON:
                start -= 1
            candidate = _IPV6_CANDIDATE.match(text, start)
            end = candidate.end() if candidate else hint.end()
            pos = max(end, hint.end())
            before = text[start - 1] if start else ""
            after = text[end] if end < len(text) else ""
            if before in _WORD or before == "." or after in _WORD:
                continue
            value = text[start:end]
            # Three groups at least: `::2` is a Python slice far more often than an address.
            if sum(1 for group in value.split(":") if group) < 3:
                continue
            try:
                address = ipaddress.IPv6Address(value)
            except ValueError:
                continue
            if not self.allowlist.allows_ip(address):
                out.append((7, Detection(hand.IPV6_KIND, value, start, end)))


def _strings_of(joined: str, texts: list[str], found: list[Detection]) -> list[tuple[int, int]]:
    """For each detection in `joined` (`texts` joined by NUL), the index of its string and where
    that string starts. The separators between one detection and the next are counted in C
    (`str.count`): the start of every string, 2,000 integers a batch for a few findings, took
    about a twentieth of the scan's time on the bench corpus. The separators after the last
    detection are counted too, so that one pass over the text tells whether a string holds a
    NUL itself; then every detection is placed by the strings' lengths."""
    out = []
    index = base = at = 0
    ordered = True
    for detection in found:
        if detection.start < at:  # out of order (the scan sorts them): placed by the lengths
            ordered = False
            break
        between = joined.count(_SEPARATOR, at, detection.start)
        if between:
            index += between
            base = joined.rfind(_SEPARATOR, at, detection.start) + 1
        at = detection.start
        out.append((index, base))
    if ordered and index + joined.count(_SEPARATOR, at) == len(texts) - 1:
        return out
    starts = list(map(add, accumulate(map(len, texts), initial=0), count()))
    out = []
    for detection in found:
        index = bisect_right(starts, detection.start) - 1
        out.append((index, starts[index]))
    return out


def _encodings(text: str) -> tuple[bytes, bytes]:
    """`text` in UTF-8 (what the library reads) and its one-byte copy (what the cores and the
    Base64 runs are searched in), the second made from the first."""
    encoded = text.encode("utf-8", "surrogatepass")
    if text.isascii():
        return encoded, encoded
    return encoded, hand.one_byte_copy_of_utf8(encoded)


@lru_cache(maxsize=4096)
def _valid_phone(value: str) -> bool:
    """A number phonenumbers knows to be assigned: `+` numbers in their own country's plan,
    the others as North American ones (the pattern only finds `(415) 555-2671` shapes)."""
    try:
        number = phonenumbers.parse(value, None if value.startswith("+") else "US")
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)


def _mapped(view: normalize.View, stored: str, found: _Found) -> _Found:
    """Findings in a view, as spans of the stored text (the plain pass may have found the same
    span: overlap removal keeps one)."""
    out: _Found = []
    for priority, detection in found:
        span = view.to_stored(detection.start, detection.end)
        if span is None:
            continue
        text = stored[span[0] : span[1]]
        shown = detection.shown
        if text == shown:
            shown = ""
        out.append((priority, Detection(detection.kind, text, span[0], span[1], shown)))
    return out


def _without_overlaps(found: _Found) -> list[Detection]:
    """Keep the more specific finding where two overlap (a vendor key beats `token=`, a key
    beats an email), then the longer one (a whole wrapped key beats its first line).

    The kept spans are disjoint, so, sorted by start, only the neighbours of a candidate's place
    can overlap it: a bisection per finding (a batch of 20,000 outputs with 15 emails each has
    300,000 findings; comparing each with every kept one took minutes)."""
    ranked = sorted(found, key=lambda item: (item[0], item[1].start - item[1].end, item[1].start))
    starts: list[int] = []
    kept: list[Detection] = []
    for _, detection in ranked:
        at = bisect_right(starts, detection.start)
        if at and kept[at - 1].end > detection.start:
            continue
        if at < len(kept) and kept[at].start < detection.end:
            continue
        starts.insert(at, detection.start)
        kept.insert(at, detection)
    return kept


_default_scanner: Scanner | None = None


def scan(text: str) -> list[Detection]:
    """Scan with the default allowlist (pure-Python callers; Django code passes its settings)."""
    global _default_scanner
    if _default_scanner is None:
        _default_scanner = Scanner()
    return _default_scanner.scan(text)
