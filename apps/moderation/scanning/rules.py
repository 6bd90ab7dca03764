"""The hand-written rules: what the Kingfisher library does not cover.

Personal data (email, phone, IPv4/IPv6), keyword assignments whose value has no format of its own
(`DB_PASSWORD=...`, `ENCRYPTION_KEY=...`, a JSON member named `api_key`), passwords on command
lines (`mysql -p'...'`, `--password ...`), bearer and basic authorization headers, AWS keys that
stand alone (the library reports an access key id only next to its secret, and a secret only
after a keyword), private keys cut off before their END line, and key formats the library's
rules miss (OpenAI keys without the `T3BlbkFJ` marker, `sk-None-...`, Anthropic OAuth tokens).

Speed comes from how Python's `re` searches: a pattern whose first instruction is a literal or a
character class gets a C-level scan that skips every position where it cannot start. So the rules
are combined into a few alternations whose every branch starts with a literal (`s` of `sk-`, `@`
of an email, `:` of `://`), or with one character class (digits for IPs and phone numbers), and
word boundaries are written as look-behinds placed *after* that first character. Rules whose
anchors do not occur in a short text are left out of its alternation (a cheap substring test);
compiled alternations are cached per set of rules.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from apps.moderation.scanning.detection import PERSONAL, SECRET

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


def random_looking(value: str) -> bool:
    """A vendor-prefixed token body: enough distinct characters to be a key, not `xxxx` or `aaaa`."""
    return len(set(value)) >= 8


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# Identifier-like values are code, not credentials: `password=self.password`, `key=settings.KEY`.
_CODE_LIKE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+"
    r"|[A-Za-z_][A-Za-z0-9_]*\(\)?"
)
# A reference to a variable, not its value: `$DB_PASSWORD`, `${TOKEN}`, `$(cat key)`, `%PASS%`.
_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_]+%")


def high_entropy(value: str) -> bool:
    """A generic assignment's value: looks like a real credential, not a word, path or variable.

    A value may start with `$` or `#` (`$ecr3t!x`, `#k9!Lm2`): only a whole variable reference
    is code.
    """
    if len(value) < 8 or _CODE_LIKE.fullmatch(value) or _REFERENCE.fullmatch(value):
        return False
    if value[0] in "<{[(" or value.startswith(("/", "./", "~/", "http")):
        return False
    return _char_classes(value) >= 2 and shannon_entropy(value) >= 3.0


def token_like(value: str) -> bool:
    return random_looking(value) and _has_digit_and_letter(value)


def _command_password(value: str) -> bool:
    """`mysql -p'...'`, `--password ...`: quotes stripped, not a flag, a variable or a prompt."""
    value = value.strip("'\"")
    if len(value) < 4 or value.startswith("-") or _REFERENCE.fullmatch(value):
        return False
    return len(set(value)) >= 4


_HEX = frozenset("0123456789abcdefABCDEF")


def aws_secret_like(value: str) -> bool:
    """A bare 40-character AWS secret key: mixed case and digits, random, not a hex digest."""
    if all(c in _HEX for c in value):
        return False
    has = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
    )
    return all(has) and shannon_entropy(value) >= 4.2


# --- Rules --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One pattern. `pattern` starts right after `first` (the literal that anchors the branch).

    A `(?P<value>...)` group, if present, is the part that is reported and redacted (the secret of
    `password=...`, not the word `password`). `triggers`: substrings of which one must occur for
    the rule to run at all on a short text (tested on the lowercased text for keyword rules).
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
# An assignment: `KEY=v`, `"key": "v"`, `key => v`, `key := v`.
_ASSIGN = r"[\"']?\s*(?:=|:|=>|:=)\s*[\"']?"
_VALUE = r"(?P<value>[^\s\"'`,;<>(){}\[\]\\\x00]{8,256})"

# Vendor formats that the library's rules find only next to the vendor's name (or not at all),
# though the format alone is distinctive: (kind, prefix, body after the prefix).
# fmt: off
_PREFIXED: tuple[tuple[str, str, str], ...] = (
    ("clickhouse_api_key", "4b1d", r"[A-Za-z0-9]{38}"),
    ("gocardless_token", "live_", r"[A-Za-z0-9_\-=]{40}"),
    ("grafana_api_key", "eyJrIjoi", r"[A-Za-z0-9]{32,400}={0,3}"),
    ("grafana_token", "glc_", r"[A-Za-z0-9+/]{32,400}={0,3}"),
    ("grafana_token", "glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("mailgun_api_key", "key-", r"[a-f0-9]{32}"),
    ("mailgun_api_key", "pubkey-", r"[a-f0-9]{32}"),
    ("mapbox_token", "pk.", r"[a-z0-9]{60}(?:\.[a-z0-9]{22})?"),
    ("mapbox_token", "sk.", r"[a-z0-9]{60}(?:\.[a-z0-9]{22})?"),
    ("new_relic_key", "NRJS-", r"[a-f0-9]{19}"),
    ("new_relic_key", "NRII-", r"[a-z0-9-]{32}"),
    ("new_relic_key", "NRAK-", r"[a-z0-9]{27}"),
    ("plaid_token", "access-", r"(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    ("planetscale_token", "pscale_", r"(?:tkn|oauth|pw)_[\w=.-]{32,64}"),
    ("typeform_token", "tfp_", r"[a-z0-9\-_.=]{59}"),
    ("yandex_token", "t1.", r"[A-Z0-9a-z_-]+={0,2}\.[A-Z0-9a-z_-]{86}={0,2}"),
    ("yandex_api_key", "AQVN", r"[A-Za-z0-9_\-]{35,38}"),
    ("duffel_token", "duffel_", r"(?:test|live)_[a-z0-9_\-=]{43}"),
    ("frameio_token", "fio-u-", r"[a-z0-9\-_=]{64}"),
)
# fmt: on


def _prefixed_rules() -> tuple[Rule, ...]:
    rules = []
    for index, (kind, prefix, body) in enumerate(_PREFIXED):
        boundary = rf"(?<![A-Za-z0-9_\-.]{re.escape(prefix)})"
        rules.append(
            Rule(
                f"prefixed_{index}",
                kind,
                SECRET,
                "literal",
                prefix[0],
                rf"{re.escape(prefix[1:])}{boundary}{body}(?![A-Za-z0-9_\-=])",
                (prefix,),
                random_looking,
                0,
            )
        )
    return tuple(rules)


# Fields: name, kind, category, family, first, pattern, triggers, check, priority.
# fmt: off
RULES: tuple[Rule, ...] = (
    *_prefixed_rules(),
    # ---- key formats the library misses: literal anchors, case-sensitive ------------------------
    Rule(
        "anthropic", "anthropic_api_key", SECRET, "literal", "s",
        rf"k-ant-(?<![\w\-]sk-ant-)(?:api|admin|sid|oat|ort)\d{{2}}-[{_B64URL}]{{32,}}{_END}",
        ("sk-ant-",), random_looking, 0,
    ),
    Rule(
        "openai", "openai_api_key", SECRET, "literal", "s",
        rf"k-(?<![\w\-]sk-)(?:(?:proj|svcacct|admin|None)-[{_B64URL}]{{20,}}|[A-Za-z0-9]{{20,}}){_END}",
        ("sk-",), token_like, -2,
    ),
    Rule(
        "aws_key_id", "aws_access_key", SECRET, "literal", "A",
        r"(?:KIA|SIA|BIA|CCA)(?<![A-Za-z0-9]A[KSBC][IC]A)[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("AKIA", "ASIA", "ABIA", "ACCA"), random_looking, 0,
    ),
    # A private key whose END line is missing (a title or preview cut it off): still a key.
    Rule(
        "private_key", "private_key", SECRET, "literal", "-",
        r"----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\x00]{0,20000}?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\s\\:,.-]*)",
        ("PRIVATE KEY",), None, 0,
    ),
    Rule(
        "url_credentials", "url_credentials", SECRET, "literal", ":",
        r"//[A-Za-z0-9._~%!$&'*+,;=-]{0,128}:(?P<value>[^\s/?#@\"'<>\x00]{3,256})@[A-Za-z0-9\[]",
        ("://",), None, 2,
    ),
    # The local part of an email is found by the post-processor, looking back from the `@`.
    Rule(
        "email", "email", PERSONAL, "literal", "@",
        r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24})(?![A-Za-z0-9-])",
        ("@",), None, 6,
    ),
    # ---- keyword assignments and command lines: matched on the lowercased text -----------------
    Rule(
        "aws_secret", "aws_secret_key", SECRET, "keyword", "a",
        r"ws_?secret_?(?:access_?)?key[\"']?\s*(?:=|:|=>)\s*[\"']?"
        r"(?P<value>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        ("aws",), random_looking, 0,
    ),
    *(
        Rule(
            f"assignment_{first}", "secret", SECRET, "keyword", first,
            rf"(?:{keywords}){_ASSIGN}{_VALUE}",
            triggers, high_entropy, 5,
        )
        for first, keywords, triggers in (
            ("p", r"assw(?:or)?d|assphrase|wd|rivate[_-]?key", ("pass", "pwd", "private")),
            ("s", r"ecret(?:[_-]?key)?|igning[_-]?(?:key|secret)|ession[_-]?(?:key|secret)", ("secret", "signing", "session")),
            ("a", r"pi[_-]?(?:key|token|secret)|ccess[_-]?(?:key|token)|uth[_-]?(?:key|token)|pp[_-]?(?:key|secret)", ("api", "access", "auth", "app")),
            ("c", r"lient[_-]?secret|ookie[_-]?secret|rypt(?:o)?[_-]?key", ("client", "cookie", "crypt")),
            ("t", r"oken", ("token",)),
            ("e", r"ncryption[_-]?key|nc(?:rypt)?[_-]?key", ("enc",)),
            ("m", r"aster[_-]?key", ("master",)),
            ("h", r"mac[_-]?(?:key|secret)", ("hmac",)),
            ("j", r"wt[_-]?(?:key|secret)", ("jwt",)),
        )
    ),
    # `mysql -u root -p'pw' db`, `mysqldump -pS3cret db` (no space: -p with a space prompts).
    Rule(
        "mysql_password", "password", SECRET, "keyword", "m",
        r"(?:ysql|ysqldump|ysqladmin|ariadb)\b[^\n]{0,200}?\s-p(?P<value>'[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s'\"-][^\s'\"]{0,127})",
        ("mysql", "mariadb"), _command_password, 3,
    ),
    # `--password pw`, `--password=pw`, `--db-password 'pw'`.
    Rule(
        "flag_password", "password", SECRET, "keyword", "-",
        r"-(?:[a-z]+-)?(?:password|passwd|pass)(?:=|\s+)(?P<value>'[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s'\"-][^\s'\"]{0,127})",
        ("--",), _command_password, 4,
    ),
    Rule(
        "bearer", "bearer_token", SECRET, "keyword", "b",
        r"earer\s+(?P<value>[a-z0-9._~+/-]{16,}=*)(?![a-z0-9._~+/=-])",
        ("bearer",), token_like, 4,
    ),
    Rule(
        "basic_auth", "bearer_token", SECRET, "keyword", "a",
        r"uthorization[\"']?\s*:\s*[\"']?basic\s+(?P<value>[a-z0-9+/]{8,}=*)",
        ("authorization",), None, 4,
    ),
    # ---- numbers: one character-class anchor, boundaries as look-behinds after it -------------
    Rule(
        "ipv4", "ip_address", PERSONAL, "number", "",
        r"(?<=[0-9])\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)",
        (), None, 7,
    ),
    Rule(
        "phone_intl", "phone", PERSONAL, "number", "",
        r"(?<=\+)[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?![\w-]|\.\d)",
        (), None, 7,
    ),
    Rule(
        "phone_nanp", "phone", PERSONAL, "number", "",
        r"(?:(?<=\()\d{3}\)[ .-]?|(?<=[2-9])\d{2}[ .-])\d{3}[ .-]\d{4}(?![\w-]|\.\d)",
        (), None, 7,
    ),
)
# fmt: on

# A bare AWS secret key: 40 characters of its alphabet standing alone. Its own pass finds each
# maximal run of the alphabet once (greedy, no backtracking) and keeps the runs of exactly 40.
AWS_SECRET_RUNS = re.compile(r"[A-Za-z0-9/+=]{40,}")

IPV6_KIND = "ip_address"
BY_NAME = {rule.name: rule for rule in RULES}
PRIORITY: dict[str, int] = {}
for _rule in RULES:
    PRIORITY[_rule.kind] = min(PRIORITY.get(_rule.kind, 9), _rule.priority)
FAMILY: dict[str, tuple[Rule, ...]] = {}
for _rule in RULES:
    FAMILY[_rule.family] = (*FAMILY.get(_rule.family, ()), _rule)
del _rule

# Changes whenever a rule changes: recorded with each scan, so a change triggers rescans.
VERSION = hashlib.sha256(
    "\n".join(
        f"{r.name}|{r.kind}|{r.first}|{r.pattern}|{r.triggers}|{getattr(r.check, '__name__', '')}"
        for r in RULES
    ).encode()
    + AWS_SECRET_RUNS.pattern.encode()
).hexdigest()[:12]


@lru_cache(maxsize=512)
def compiled(family: str, names: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of the given rules: `<first>(?P<name>...)|...`.

    Every branch starts with its literal (or the family's one character class), so `re` can skip
    positions where none could start. `lastgroup` names the rule (its group closes last).
    """
    branches = []
    for name in names:
        rule = BY_NAME[name]
        body = rule.pattern.replace("(?P<value>", f"(?P<{name}__v>")
        branches.append(f"{re.escape(rule.first)}(?P<{name}>{body})")
    if family == "number":
        # Digits, `+` (international numbers) and `(` (area codes); the look-behind after the
        # anchor keeps a number that continues a word, a version or another number out.
        return re.compile(r"[0-9+(](?<![\w.+(\-][0-9+(])(?:" + "|".join(branches) + ")")
    return re.compile("|".join(branches))


@lru_cache(maxsize=8)
def compiled_ignorecase(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(compiled("keyword", names).pattern, re.IGNORECASE)
