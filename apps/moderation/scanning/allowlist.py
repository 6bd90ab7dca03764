"""What the scanner never flags: reserved example domains, loopback and private networks, bot
identities, placeholders and documentation examples. Built from DEFAULT_ALLOWLIST plus a setting."""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
        r"(?i)(?:dummy|placeholder|redacted|fake|sample|changeme|xxxxx)", r"\*\*\*",
        # A variable or a template, not its value: `$DB_PASSWORD`, `${TOKEN}`, `$(cat key)`; a
        # `$` then 16 or more of mixed case and digits is a value that starts with `$`.
        r"^(?!\$(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{16,}$)"
        r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$",
        r"^\$\(", r"^<[^>]*>$", r"\{\{",
    ],
    # Phone numbers reserved for fiction and documentation (NANP 555-0100..0199).
    "phones": [r"555[ .-]?01\d\d$"],
}
# fmt: on


# A pattern that is `(?i)` and an alternation of lowercase words, such as `(?i)example` and
# `(?i)(?:dummy|placeholder|...)`: on an ASCII value, a word `in` the value's lowercased copy
# finds what it finds. `re` has no literal to search for in a case-insensitive alternation, so it
# tried the words at every position of every value (half of `allows_secret`'s time on the bench
# corpus, which asks it of every finding).
_WORD_LIST = r"[a-z0-9_-]+(?:\|[a-z0-9_-]+)*"
_WORDS_ONLY = re.compile(rf"\(\?i\)(?:\(\?:({_WORD_LIST})\)|({_WORD_LIST}))")


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
    # `patterns` split for ASCII values: the case-insensitive words, and the other patterns.
    _words: tuple[str, ...] = field(default=(), repr=False)
    _other_patterns: tuple[re.Pattern[str], ...] = field(default=(), repr=False)
    # `networks` as sorted, disjoint ranges of integers per IP version: (starts, ends).
    _ranges: dict[int, tuple[list[int], list[int]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ranges = {version: _ranges(self.networks, version) for version in (4, 6)}
        object.__setattr__(self, "_ranges", ranges)  # frozen: set once, here

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
        patterns = tuple(re.compile(p) for p in merged["patterns"])
        words: list[str] = []
        others: list[re.Pattern[str]] = []
        for pattern in patterns:
            spelled = _WORDS_ONLY.fullmatch(pattern.pattern)
            if spelled is None:
                others.append(pattern)
            else:
                words.extend((spelled.group(1) or spelled.group(2)).split("|"))
        return cls(
            domains=domains,
            networks=tuple(ipaddress.ip_network(n, strict=False) for n in merged["networks"]),
            values=frozenset(v.casefold() for v in merged["values"]),
            patterns=patterns,
            phones=tuple(re.compile(p) for p in merged["phones"]),
            _domain_set=frozenset(domains),
            _words=tuple(words),
            _other_patterns=tuple(others),
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
        # A bisection over the networks' merged ranges: `address in network` for each of twenty
        # networks was most of the time an IP address took to check (`ipaddress` is Python).
        starts, ends = self._ranges[address.version]
        number = int(address)
        at = bisect_right(starts, number) - 1
        return at >= 0 and number <= ends[at]

    def allows_value(self, value: str) -> bool:
        return value.casefold() in self.values

    def allows_secret(self, value: str) -> bool:
        if self.allows_value(value):
            return True
        patterns = self.patterns
        if self._words and value.isascii():
            # `map` runs the word tests in C (a generator's frame cost more than the tests).
            if any(map(value.lower().__contains__, self._words)):
                return True
            patterns = self._other_patterns
        for pattern in patterns:  # a loop, not `any` of a generator: a third quicker
            if pattern.search(value):
                return True
        return False

    def allows_phone(self, value: str) -> bool:
        return any(p.search(value) for p in self.phones)


def _ranges(
    networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network], version: int
) -> tuple[list[int], list[int]]:
    """The networks of one IP version as sorted, disjoint (merged) ranges of integers."""
    spans = sorted(
        (int(net.network_address), int(net.broadcast_address))
        for net in networks
        if net.version == version
    )
    starts: list[int] = []
    ends: list[int] = []
    for low, high in spans:
        if ends and low <= ends[-1] + 1:
            ends[-1] = max(ends[-1], high)
        else:
            starts.append(low)
            ends.append(high)
    return starts, ends
