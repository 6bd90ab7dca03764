"""Secret and personal-data detectors for trajectory text. Pure Python: no Django here.

`Scanner(allowlist).scan(text)` returns `Detection(kind, text, start, end)` for every credential
(API keys and tokens of the common vendors, AWS keys, private key blocks, JWTs, bearer tokens,
URLs with a password, high-entropy `password=` / `api_key=` assignments) and every piece of
personal data (email, phone number, IPv4/IPv6 address) that the allowlist does not excuse.

Speed (DESIGN.md: at least 1/10 of one compiled regular expression over the same text) comes from
how Python's `re` searches: a pattern whose first instruction is a literal or a character class
gets a C-level scan that skips every position where it cannot start. So the detectors are
combined into a few alternations whose every branch starts with a literal (`s` of `sk-`, `@` of an
email, `:` of `://`), or with one character class (digits for IPs and phone numbers), and word
boundaries are written as look-behinds placed *after* that first character. Detectors whose
anchors (`sk-`, `ghp_`, `AKIA`...) do not occur in a text are left out of its alternation, a
cheap substring test; compiled alternations are cached per set of detectors.
"""

from __future__ import annotations

import ipaddress
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

SECRET = "secret"
PERSONAL = "personal"


@dataclass(frozen=True, slots=True)
class Detection:
    """One finding: what kind, the matched text, and where it is in the scanned string."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)


# --- Validators (run only on matches, so they may be slow-ish Python) ---------------------------


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


def _char_classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def _random_looking(value: str) -> bool:
    """A vendor-prefixed token body: enough distinct characters to be a key, not `xxxx` or `aaaa`."""
    return len(set(value)) >= 8


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# Identifier-like values are code, not credentials: `password=self.password`, `key=settings.KEY`.
_CODE_LIKE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+"
)


def _high_entropy(value: str) -> bool:
    """A generic assignment's value: looks like a real credential, not a word, path or variable."""
    if len(value) < 8 or _CODE_LIKE.fullmatch(value):
        return False
    if value[0] in "$%<{[(#" or value.startswith(("/", "./", "~/", "http")):
        return False
    return _char_classes(value) >= 2 and shannon_entropy(value) >= 3.0


def _token_like(value: str) -> bool:
    return _random_looking(value) and _has_digit_and_letter(value)


# --- Detectors ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Detector:
    """One pattern. `pattern` starts right after `first` (the literal that anchors the branch).

    A `(?P<value>...)` group, if present, is the part that is reported and redacted (the secret of
    `password=...`, not the word `password`). `triggers`: substrings of which one must occur for
    the detector to run at all (tested on the lowercased text when `lower`).
    """

    name: str
    kind: str
    category: str
    family: str
    first: str
    pattern: str
    triggers: tuple[str, ...] = ()
    check: Callable[[str], bool] | None = None
    priority: int = 5  # lower wins when two findings overlap


_B64URL = r"A-Za-z0-9_\-"
# End of a token: not followed by another token character.
_END = rf"(?![{_B64URL}])"

# Fields: name, kind, category, family, first, pattern, triggers, check, priority.
# fmt: off
DETECTORS: tuple[Detector, ...] = (
    # ---- vendor-prefixed tokens: literal anchors, case-sensitive ---------------------------------
    Detector(
        "anthropic", "anthropic_api_key", SECRET, "literal", "s",
        rf"k-ant-(?<![\w\-]sk-ant-)(?:api|admin|sid)\d{{2}}-[{_B64URL}]{{32,}}{_END}",
        ("sk-ant-",), _random_looking, 0,
    ),
    Detector(
        "openai", "openai_api_key", SECRET, "literal", "s",
        rf"k-(?<![\w\-]sk-)(?:(?:proj|svcacct|admin)-[{_B64URL}]{{20,}}|[A-Za-z0-9]{{20,}}){_END}",
        ("sk-",), _token_like, 0,
    ),
    Detector(
        "stripe", "stripe_key", SECRET, "literal", "s",
        r"k_(?<![\w]sk_)(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9])",
        ("sk_live_", "sk_test_"), _random_looking, 0,
    ),
    Detector(
        "stripe_restricted", "stripe_key", SECRET, "literal", "r",
        r"k_(?<![\w]rk_)(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9])",
        ("rk_live_", "rk_test_"), _random_looking, 0,
    ),
    Detector(
        "github", "github_token", SECRET, "literal", "g",
        r"h[pousr]_(?<![\w]gh[pousr]_)[A-Za-z0-9]{36,}(?![A-Za-z0-9])",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _random_looking, 0,
    ),
    Detector(
        "github_pat", "github_token", SECRET, "literal", "g",
        r"ithub_pat_(?<![\w]github_pat_)[A-Za-z0-9_]{50,}(?![A-Za-z0-9_])",
        ("github_pat_",), _random_looking, 0,
    ),
    Detector(
        "gitlab", "gitlab_token", SECRET, "literal", "g",
        rf"lpat-(?<![\w]glpat-)[{_B64URL}]{{20,}}{_END}",
        ("glpat-",), _random_looking, 0,
    ),
    Detector(
        "slack", "slack_token", SECRET, "literal", "x",
        r"ox[abposr]-(?<![\w]xox[abposr]-)\d+-[A-Za-z0-9-]{8,}(?![A-Za-z0-9-])",
        ("xox",), _random_looking, 0,
    ),
    Detector(
        "slack_webhook", "slack_webhook", SECRET, "literal", "h",
        r"ooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
        ("hooks.slack.com",), None, 0,
    ),
    Detector(
        "huggingface", "huggingface_token", SECRET, "literal", "h",
        r"f_(?<![\w]hf_)[A-Za-z0-9]{30,}(?![A-Za-z0-9])",
        ("hf_",), _random_looking, 0,
    ),
    Detector(
        "aws_key_id", "aws_access_key_id", SECRET, "literal", "A",
        r"(?:KIA|SIA|BIA|CCA)(?<![A-Za-z0-9]A[KSBC][IC]A)[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("AKIA", "ASIA", "ABIA", "ACCA"), _random_looking, 0,
    ),
    Detector(
        "google", "google_api_key", SECRET, "literal", "A",
        rf"Iza(?<![\w]AIza)[{_B64URL}]{{35}}{_END}",
        ("AIza",), None, 0,
    ),
    Detector(
        "private_key", "private_key", SECRET, "literal", "-",
        r"----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\x00]{0,20000}?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\s\\:,.-]*)",
        ("PRIVATE KEY",), None, 0,
    ),
    Detector(
        "jwt", "jwt", SECRET, "literal", "e",
        rf"yJ(?<![{_B64URL}]eyJ)[{_B64URL}]{{8,}}\.eyJ[{_B64URL}]{{8,}}\.[{_B64URL}]{{16,}}{_END}",
        ("eyJ",), None, 1,
    ),
    Detector(
        "url_credentials", "url_credentials", SECRET, "literal", ":",
        r"//[A-Za-z0-9._~%!$&'*+,;=-]{0,128}:(?P<value>[^\s/?#@\"'<>\x00]{3,256})@[A-Za-z0-9\[]",
        ("://",), None, 2,
    ),
    # The local part of an email is found by the post-processor, looking back from the `@`.
    Detector(
        "email", "email", PERSONAL, "literal", "@",
        r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24})(?![A-Za-z0-9-])",
        ("@",), None, 6,
    ),
    # ---- keyword assignments: matched on the lowercased text -----------------------------------
    Detector(
        "aws_secret", "aws_secret_access_key", SECRET, "keyword", "a",
        r"ws_?secret_?(?:access_?)?key[\"']?\s*(?:=|:|=>)\s*[\"']?"
        r"(?P<value>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        ("aws",), _random_looking, 0,
    ),
    *(
        Detector(
            f"assignment_{first}", "secret", SECRET, "keyword", first,
            rf"(?:{keywords})[\"']?\s*(?:=|:|=>|:=)\s*[\"']?(?P<value>[^\s\"'`,;<>(){{}}\[\]\\\x00]{{8,256}})",
            triggers, _high_entropy, 5,
        )
        for first, keywords, triggers in (
            ("p", r"assw(?:or)?d|assphrase|wd|rivate[_-]?key", ("pass", "pwd", "private")),
            ("s", r"ecret(?:[_-]?key)?", ("secret",)),
            ("a", r"pi[_-]?(?:key|token|secret)|ccess[_-]?(?:key|token)|uth[_-]?(?:key|token)", ("api", "access", "auth")),
            ("c", r"lient[_-]?secret", ("client",)),
            ("t", r"oken", ("token",)),
        )
    ),
    Detector(
        "bearer", "bearer_token", SECRET, "keyword", "b",
        r"earer\s+(?P<value>[a-z0-9._~+/-]{16,}=*)(?![a-z0-9._~+/=-])",
        ("bearer",), _token_like, 4,
    ),
    Detector(
        "basic_auth", "bearer_token", SECRET, "keyword", "a",
        r"uthorization[\"']?\s*:\s*[\"']?basic\s+(?P<value>[a-z0-9+/]{8,}=*)",
        ("authorization",), None, 4,
    ),
    # ---- numbers: one character-class anchor, boundaries as look-behinds after it -------------
    Detector(
        "ipv4", "ip_address", PERSONAL, "number", "",
        r"(?<=[0-9])\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)",
        (), None, 7,
    ),
    Detector(
        "phone_intl", "phone", PERSONAL, "number", "",
        r"(?<=\+)[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?![\w-]|\.\d)",
        (), None, 7,
    ),
    Detector(
        "phone_nanp", "phone", PERSONAL, "number", "",
        r"(?:(?<=\()\d{3}\)[ .-]?|(?<=[2-9])\d{2}[ .-])\d{3}[ .-]\d{4}(?![\w-]|\.\d)",
        (), None, 7,
    ),
)
# fmt: on

IPV6_KIND = "ip_address"
SECRET_KINDS = frozenset(d.kind for d in DETECTORS if d.category == SECRET)
PERSONAL_KINDS = frozenset(d.kind for d in DETECTORS if d.category == PERSONAL)
KINDS = SECRET_KINDS | PERSONAL_KINDS
_BY_NAME = {d.name: d for d in DETECTORS}
_PRIORITY = {d.kind: d.priority for d in DETECTORS}
_FAMILY: dict[str, tuple[Detector, ...]] = {}
for _d in DETECTORS:
    _FAMILY[_d.family] = (*_FAMILY.get(_d.family, ()), _d)
del _d


@lru_cache(maxsize=512)
def _compiled(family: str, names: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of the given detectors: `<first>(?P<name>...)|...`.

    Every branch starts with its literal (or the family's one character class), so `re` can skip
    positions where none could start. `lastgroup` names the detector (its group closes last).
    """
    branches = []
    for name in names:
        detector = _BY_NAME[name]
        body = detector.pattern.replace("(?P<value>", f"(?P<{name}__v>")
        branches.append(f"{re.escape(detector.first)}(?P<{name}>{body})")
    if family == "number":
        # Digits, `+` (international numbers) and `(` (area codes); the look-behind after the
        # anchor keeps a number that continues a word, a version or another number out.
        return re.compile(r"[0-9+(](?<![\w.+(\-][0-9+(])(?:" + "|".join(branches) + ")")
    return re.compile("|".join(branches))


_SEPARATOR = "\x00"
_TRIGGER_LIMIT = 64 * 1024
# JSON keys that name a credential: `password`, `DB_PASSWORD`, `openai_api_key`, `x-api-key`.
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_.\-])(?:passw(?:or)?d|passphrase|secret|(?:api|access|auth|secret|private)"
    r"[_\-]?(?:key|token)|client[_\-]?secret|apikey|token)$"
)

# IPv6: anchored on `::` or on three colon-separated hex groups, then widened and parsed.
_IPV6_HINT = re.compile(r":(?::|[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:)")
_IPV6_CANDIDATE = re.compile(r"[0-9A-Fa-f:]*(?:\.\d{1,3}){0,3}")
_HEX_COLON = frozenset("0123456789abcdefABCDEF:")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# A name that looks like an email but is a file (`icon@2x.png`) or a package version (`pkg@1.2`).
_FILE_TLDS = frozenset(
    "png jpg jpeg gif svg webp ico bmp js mjs cjs ts tsx jsx py rb go rs css scss html htm json "
    "yaml yml toml txt md lock map wasm zip gz tar so dll exe pdf xml csv ipynb sh".split()
)


# --- Allowlist ----------------------------------------------------------------------------------

# fmt: off
DEFAULT_ALLOWLIST: dict[str, list[str]] = {
    # A domain covers itself and its subdomains; "*.test" and "test" mean the same.
    "domains": [
        "example.com", "example.org", "example.net", "*.example", "*.test", "*.invalid",
        "*.localhost", "localhost", "yourdomain.com", "domain.com",
    ],
    "networks": [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "fe80::/10", "fc00::/7", "2001:db8::/32", "ff00::/8",
    ],
    # Exact values (case-insensitive) that are never flagged: bot identities and placeholders.
    "values": [
        "openhands@all-hands.dev", "noreply@github.com", "git@github.com", "git@gitlab.com",
        "git@bitbucket.org", "YOUR_API_KEY", "YOUR-API-KEY", "your_api_key_here", "api_key",
        "changeme", "password", "passwd", "pass", "secret", "postgres", "root", "admin",
        "user", "test", "guest", "mysecretpassword", "hunter2", "token",
    ],
    # Regular expressions searched in a secret's value: documentation examples and placeholders.
    "patterns": [
        r"(?i)example", r"(?i)^(?:your|my|insert|replace|enter|put)[-_ ]",
        r"(?i)(?:dummy|placeholder|redacted|fake|sample|changeme|xxxxx)", r"\*{3}",
        r"\.\.\.|…", r"^\$\{?[A-Za-z_]", r"^<[^>]*>$", r"\{\{",
    ],
    # Phone numbers reserved for fiction and documentation (NANP 555-0100..0199).
    "phones": [r"555[ .-]?01\d\d$"],
}
# fmt: on


def _domain_entry(entry: str) -> str:
    return entry.strip().lower().removeprefix("*.").strip(".")


@dataclass(frozen=True)
class Allowlist:
    """What the scanner never flags. Built from DEFAULT_ALLOWLIST plus a setting's entries."""

    domains: tuple[str, ...] = ()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    values: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = ()
    phones: tuple[re.Pattern[str], ...] = ()
    _domain_set: frozenset[str] = field(default=frozenset(), repr=False)

    @classmethod
    def build(cls, config: Mapping[str, Iterable[str] | bool] | None = None) -> Allowlist:
        """The defaults plus `config`'s lists; `{"use_defaults": False, ...}` replaces them."""
        config = dict(config or {})
        use_defaults = bool(config.pop("use_defaults", True))
        unknown = set(config) - set(DEFAULT_ALLOWLIST)
        if unknown:
            raise ValueError(f"unknown scan allowlist keys: {sorted(unknown)}")
        merged: dict[str, list[str]] = {}
        for key, default in DEFAULT_ALLOWLIST.items():
            extra = config.get(key) or []
            if isinstance(extra, str | bool):
                raise ValueError(f"scan allowlist {key!r} must be a list of strings")
            merged[key] = [*(default if use_defaults else []), *extra]
        domains = tuple(sorted({_domain_entry(d) for d in merged["domains"] if d.strip()}))
        return cls(
            domains=domains,
            networks=tuple(ipaddress.ip_network(n, strict=False) for n in merged["networks"]),
            values=frozenset(v.casefold() for v in merged["values"]),
            patterns=tuple(re.compile(p) for p in merged["patterns"]),
            phones=tuple(re.compile(p) for p in merged["phones"]),
            _domain_set=frozenset(domains),
        )

    def allows_domain(self, domain: str) -> bool:
        domain = domain.lower().rstrip(".")
        if domain in self._domain_set:
            return True
        parts = domain.split(".")
        return any(".".join(parts[i:]) in self._domain_set for i in range(1, len(parts)))

    def allows_ip(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address.version == net.version and address in net for net in self.networks)

    def allows_value(self, value: str) -> bool:
        return value.casefold() in self.values

    def allows_secret(self, value: str) -> bool:
        return self.allows_value(value) or any(p.search(value) for p in self.patterns)

    def allows_phone(self, value: str) -> bool:
        return any(p.search(value) for p in self.phones)


# --- The scanner --------------------------------------------------------------------------------


class Scanner:
    """Finds secrets and personal data in strings. Thread-safe; build one per allowlist."""

    def __init__(self, allowlist: Allowlist | None = None, kinds: Iterable[str] | None = None):
        self.allowlist = allowlist or Allowlist.build()
        wanted = set(kinds) if kinds is not None else set(KINDS)
        self._kinds = frozenset(wanted)
        unknown = wanted - KINDS
        if unknown:
            raise ValueError(f"unknown finding kinds: {sorted(unknown)}")
        self._literal = tuple(d for d in _FAMILY["literal"] if d.kind in wanted)
        self._keyword = tuple(d for d in _FAMILY["keyword"] if d.kind in wanted)
        self._literal_names = tuple(d.name for d in self._literal)
        self._keyword_names = tuple(d.name for d in self._keyword)
        number = tuple(d.name for d in _FAMILY["number"] if d.kind in wanted)
        self._number = _compiled("number", number) if number else None
        self._ipv6 = IPV6_KIND in wanted

    def scan(self, text: str) -> list[Detection]:
        """Every finding in `text`, in order, without overlaps (the more specific kind wins)."""
        if len(text) < 6:
            return []
        found: list[Detection] = []
        # Substring tests pay off on short texts; a long one contains most anchors anyway.
        short = len(text) < _TRIGGER_LIMIT
        names = (
            tuple(d.name for d in self._literal if any(t in text for t in d.triggers))
            if short
            else self._literal_names
        )
        if names:
            self._run(_compiled("literal", names), text, text, found)
        if self._keyword:
            lower = text.lower()
            # Lowercasing keeps offsets unless a character grows (e.g. "İ"); then skip the trick.
            if len(lower) == len(text):
                names = (
                    tuple(d.name for d in self._keyword if any(t in lower for t in d.triggers))
                    if short
                    else self._keyword_names
                )
                if names:
                    self._run(_compiled("keyword", names), lower, text, found)
            else:
                names = tuple(d.name for d in self._keyword)
                self._run(_compiled_ignorecase(names), text, text, found)
        if self._number is not None:
            self._run(self._number, text, text, found)
        if self._ipv6 and _IPV6_HINT.search(text):
            self._ipv6_scan(text, found)
        if len(found) > 1:
            found = _without_overlaps(found)
        return found

    def scan_many(self, texts: Sequence[str]) -> list[tuple[int, Detection]]:
        """Scan many strings in one pass: `(index into texts, detection within that string)`.

        Joining amortizes the per-call cost over the many short strings of an event's JSON. No
        pattern matches across the NUL separator; a string that itself contains NUL can only lose
        a finding that spans it.
        """
        if not texts:
            return []
        starts: list[int] = []
        offset = 0
        for text in texts:
            starts.append(offset)
            offset += len(text) + 1
        out: list[tuple[int, Detection]] = []
        for detection in self.scan(_SEPARATOR.join(texts)):
            index = bisect_right(starts, detection.start) - 1
            base = starts[index]
            if detection.end > base + len(texts[index]):
                continue
            out.append(
                (
                    index,
                    Detection(
                        detection.kind, detection.text, detection.start - base, detection.end - base
                    ),
                )
            )
        return out

    def scan_pair(self, key: str, value: str) -> Detection | None:
        """A JSON member such as `"DB_PASSWORD": "..."`: the key names a secret, the value is one.

        Scanning strings one by one cannot see this (the key and the value are two strings).
        """
        if len(value) < 8 or len(key) > 64 or not _SECRET_KEY.search(key):
            return None
        if "secret" not in self._kinds:
            return None
        stripped = value.strip()
        if (
            stripped != value
            or not _high_entropy(value)
            or any(c.isspace() for c in value)
            or self.allowlist.allows_secret(value)
        ):
            return None
        return Detection("secret", value, 0, len(value))

    def _run(
        self, pattern: re.Pattern[str], haystack: str, text: str, out: list[Detection]
    ) -> None:
        allow = self.allowlist
        for match in pattern.finditer(haystack):
            name = match.lastgroup
            detector = _BY_NAME[name]  # type: ignore[index]
            start, end = match.start(), match.end()
            value_group = f"{name}__v"
            if value_group in pattern.groupindex and match.start(value_group) >= 0:
                start, end = match.span(value_group)
            kind = detector.kind
            if kind == "email":
                at = start - 1
                start = at
                floor = max(0, at - 64)
                while start > floor and text[start - 1] in _EMAIL_LOCAL:
                    start -= 1
                while start < at and text[start] == ".":
                    start += 1
                if start == at or (start == floor and floor and text[floor - 1] in _EMAIL_LOCAL):
                    continue
                domain = text[at + 1 : end]
                if domain.rsplit(".", 1)[-1].lower() in _FILE_TLDS or allow.allows_domain(domain):
                    continue
            if kind == "secret":
                # "Your new password: aB3#fG7!kL9@." - the full stop ends the sentence.
                while end - start > 8 and text[end - 1] == ".":
                    end -= 1
            value = text[start:end]
            if detector.category == SECRET:
                if detector.check is not None and not detector.check(value):
                    continue
                if allow.allows_secret(value) or _truncated(text, end):
                    continue
            elif kind == "email":
                if allow.allows_value(value):
                    continue
            elif kind == "ip_address":
                try:
                    address = ipaddress.IPv4Address(value)
                except ValueError:
                    continue
                if allow.allows_ip(address):
                    continue
            elif kind == "phone":
                digits = sum(c.isdigit() for c in value)
                if digits < 8 or digits > 15 or allow.allows_phone(value):
                    continue
            out.append(Detection(kind, value, start, end))

    def _ipv6_scan(self, text: str, out: list[Detection]) -> None:
        pos = 0
        while True:
            hint = _IPV6_HINT.search(text, pos)
            if hint is None:
                return
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
                out.append(Detection(IPV6_KIND, value, start, end))


@lru_cache(maxsize=8)
def _compiled_ignorecase(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_compiled("keyword", names).pattern, re.IGNORECASE)


def _truncated(text: str, end: int) -> bool:
    """A key shown cut short (`sk-abc...`) is a placeholder or a masked display, not a secret."""
    return text.startswith(("...", "…"), end)


def _without_overlaps(found: list[Detection]) -> list[Detection]:
    """Keep the more specific finding where two overlap (a JWT beats `token=`, a key beats an email)."""
    ranked = sorted(found, key=lambda d: (_PRIORITY[d.kind], d.start, d.start - d.end))
    kept: list[Detection] = []
    for detection in ranked:
        if all(detection.end <= k.start or detection.start >= k.end for k in kept):
            kept.append(detection)
    kept.sort(key=lambda d: d.start)
    return kept


_default_scanner: Scanner | None = None


def scan(text: str) -> list[Detection]:
    """Scan with the default allowlist (pure-Python callers; Django code passes its settings)."""
    global _default_scanner
    if _default_scanner is None:
        _default_scanner = Scanner()
    return _default_scanner.scan(text)
