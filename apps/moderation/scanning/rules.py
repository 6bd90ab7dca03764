"""The hand-written rules: what the Kingfisher library does not cover.

Personal data (email, phone, IPv4/IPv6), keyword assignments whose value has no format of its own
(`DB_PASSWORD=...`, `ENCRYPTION_KEY=...`, a JSON member named `api_key`), passwords on command
lines (`mysql -p'...'`, `--password ...`), bearer and basic authorization headers, AWS keys that
stand alone (the library reports an access key id only next to its secret, and a secret only
after a keyword), private keys cut off before their END line, and key formats the library's
rules miss (OpenAI keys without the `T3BlbkFJ` marker, `sk-None-...`, Anthropic OAuth tokens).
A rule stays only if the library misses what it finds: disabled one at a time, each of these
loses a recall sample, a test, or a shape checked against the library alone (the keyword rows:
the library has no generic assignment rule). Grafana `glsa_`, Duffel and Frame.io tokens and AWS
secret keys after a keyword were dropped: the library finds them, as the kind they already had
(a 40-character value of lowercase letters and digits after `aws_secret_key=`, which no real key
is, the library skips; the keyword rows flag it as `secret`).

Speed: each rule has a core (`Rule.core`), a short pattern that matches wherever the rule can
start a match. One Vectorscan pass over every rule's core (`candidates.Candidates`, through the
`hyperscan` package) finds where rules can match, and each rule's own pattern (`re`, for its
look-arounds, groups and the checks after it) is tried only there. Keyword rules match case-insensitively. The
number rules share one alternation, and maximal runs of the Base64 alphabet (bare AWS secret keys,
Base64-encoded text) are found once on a one-byte-per-character copy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from apps.moderation.scanning.checks import (
    command_password,
    high_entropy,
    personal_host_name,
    personal_user_name,
    random_key_value,
    random_looking,
    random_token,
    token_like,
)
from apps.moderation.scanning.detection import PERSONAL, SECRET
from apps.moderation.scanning.runs import MIN_RUN
from apps.moderation.scanning.runs import alphabet_runs as alphabet_runs  # its old home

# --- Rules --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    r"""One pattern: `anchor`, the literal every match starts with, then `pattern`.

    A `(?P<value>...)` group, if present, is the part that is reported and redacted (the secret of
    `password=...`, not the word `password`). Keyword rules match case-insensitively; their
    anchors and patterns are written in lowercase.

    `core` finds where the rule can match (`candidates.Candidates`): a Vectorscan pattern, read on a copy of
    the text with one byte per character where every non-ASCII character reads `?`, that matches
    from every position where `source` matches. It is the rule without its look-arounds and with
    its open-ended tail cut to its shortest, so that each place is reported once or a few times;
    `\s` and `\d` read `[\s?]` and `[0-9?]` there (`re` gives them non-ASCII spaces and digits),
    and a class that `re` lets a non-ASCII character through must let `?` through.
    """

    name: str
    kind: str
    category: str
    family: str
    anchor: str
    pattern: str
    check: Callable[[str], bool] | None = None
    priority: int = 5  # lower wins when two findings overlap
    core: str = ""
    # The core has a gap that another of the rule's anchors may stand in (`token ... token: v`):
    # Vectorscan reports each end once, from its leftmost start, so a match that starts at the
    # later anchor is looked for there too (`candidates.Candidates.find`).
    gap: bool = False

    @property
    def source(self) -> str:
        return re.escape(self.anchor) + self.pattern


_B64URL = r"A-Za-z0-9_\-"
# End of a token: not followed by another token character.
_END = rf"(?![{_B64URL}])"
# An assignment: `KEY=v`, `"key": "v"`, `key => v`, `key := v`.
_ASSIGN = r"[\"']?\s*(?:=|:|=>|:=)\s*[\"']?"
_VALUE = r"(?P<value>[^\s\"'`,;<>(){}\[\]\\\x00]{8,256})"
# In cores (see `Rule`): what `\s` and `\d` may match, a non-ASCII character reading `?`
# (`\s` is `\x1c`-`\x1f` too to `re`, not to Vectorscan).
_S = r"[\s\x1c-\x1f?]"
_D = r"[0-9?]"
_ASSIGN_CORE = rf"[\"']?{_S}*(?:=|:|=>|:=){_S}*[\"']?"
_VALUE_CORE = r"[^\s\"'`,;<>(){}\[\]\\\x00]{8}"
# The character before a value in prose (`(?<=[\s"'`:=(])`), in the core: the value's first 24
# characters after it, so that a long value is offered once, at its start, not at every one of
# its characters past the 24th (a thousand places a megabyte on the bench corpus).
_PROSE_BEFORE = r"[\s\x1c-\x1f?\"'`:=(]"

# Vendor formats that the library's rules find only next to the vendor's name (or not at all),
# though the format alone is distinctive: (kind, prefix, body after the prefix, the body's core
# where it is not the body itself: its open-ended tail cut to its shortest).
# fmt: off
_PREFIXED: tuple[tuple[str, str, str, str], ...] = (
    ("clickhouse_api_key", "4b1d", r"[A-Za-z0-9]{38}", ""),
    ("gocardless_token", "live_", r"[A-Za-z0-9_\-=]{40}", ""),
    ("grafana_api_key", "eyJrIjoi", r"[A-Za-z0-9]{32,400}={0,3}", r"[A-Za-z0-9]{32}"),
    ("grafana_token", "glc_", r"[A-Za-z0-9+/]{32,400}={0,3}", r"[A-Za-z0-9+/]{32}"),
    ("mailgun_api_key", "key-", r"[a-f0-9]{32}", ""),
    ("mailgun_api_key", "pubkey-", r"[a-f0-9]{32}", ""),
    ("mapbox_token", "pk.", r"[a-z0-9]{60}(?:\.[a-z0-9]{22})?", r"[a-z0-9]{60}"),
    ("mapbox_token", "sk.", r"[a-z0-9]{60}(?:\.[a-z0-9]{22})?", r"[a-z0-9]{60}"),
    ("new_relic_key", "NRJS-", r"[a-f0-9]{19}", ""),
    ("new_relic_key", "NRII-", r"[a-z0-9-]{32}", ""),
    ("new_relic_key", "NRAK-", r"[a-z0-9]{27}", ""),
    ("plaid_token", "access-", r"(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ""),
    ("planetscale_token", "pscale_", r"(?:tkn|oauth|pw)_[\w=.-]{32,64}", r"(?:tkn|oauth|pw)_[\w=.?-]{32}"),
    ("typeform_token", "tfp_", r"[a-z0-9\-_.=]{59}", ""),
    ("yandex_token", "t1.", r"[A-Z0-9a-z_-]+={0,2}\.[A-Z0-9a-z_-]{86}={0,2}", r"[A-Z0-9a-z_-]"),
    ("yandex_api_key", "AQVN", r"[A-Za-z0-9_\-]{35,38}", r"[A-Za-z0-9_\-]{35}"),
    # Missed standing alone in command output (issue 22, a corpus from the gitleaks rules).
    ("artifactory_api_key", "AKCp", r"[A-Za-z0-9]{69}", ""),
    ("artifactory_reference_token", "cmVmd", r"[A-Za-z0-9]{59}", ""),
    ("flyio_token", "fo1_", r"[A-Za-z0-9_\-]{43}", ""),
    ("flyio_token", "fm1a_", r"[A-Za-z0-9+/]{100,}={0,3}", r"[A-Za-z0-9+/]{100}"),
    ("flyio_token", "fm1r_", r"[A-Za-z0-9+/]{100,}={0,3}", r"[A-Za-z0-9+/]{100}"),
    ("flyio_token", "fm2_", r"[A-Za-z0-9+/]{100,}={0,3}", r"[A-Za-z0-9+/]{100}"),
    ("harness_token", "pat.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", ""),
    ("harness_token", "sat.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", ""),
)

# Keyword assignments whose value has no format of its own (`DB_PASSWORD=...`, a JSON member
# named `api_key`): one rule, driven by this table of keywords. Each row is the keyword's
# literal start (its anchor) and the rest of its spellings.
KEYWORDS: tuple[tuple[str, str], ...] = (
    ("passw", r"(?:or)?d"), ("passphrase", ""), ("pwd", ""), ("private", r"[_-]?key"),
    ("secret", r"(?:[_-]?key)?"), ("signing", r"[_-]?(?:key|secret)"),
    ("session", r"[_-]?(?:key|secret)"),
    ("api", r"[_-]?(?:key|token|secret)"), ("access", r"[_-]?(?:key|token)"),
    ("auth", r"[_-]?(?:key|token)"), ("app", r"[_-]?(?:key|secret)"),
    ("client", r"[_-]?secret"), ("cookie", r"[_-]?secret"), ("crypt", r"o?[_-]?key"),
    ("token", ""), ("enc", r"(?:ryption|rypt)?[_-]?key"), ("master", r"[_-]?key"),
    ("hmac", r"[_-]?(?:key|secret)"), ("jwt", r"[_-]?(?:key|secret)"),
)
# fmt: on


def _prefixed_rules() -> tuple[Rule, ...]:
    rules = []
    for index, (kind, prefix, body, core) in enumerate(_PREFIXED):
        boundary = rf"(?<![A-Za-z0-9_\-.]{re.escape(prefix)})"
        rules.append(
            Rule(
                f"prefixed_{index}",
                kind,
                SECRET,
                "literal",
                prefix,
                rf"{boundary}{body}(?![A-Za-z0-9_\-=])",
                random_looking,
                0,
                re.escape(prefix) + (core or body),
            )
        )
    return tuple(rules)


def _keyword_rules() -> tuple[Rule, ...]:
    return tuple(
        Rule(f"assignment_{anchor}", "secret", SECRET, "keyword", anchor,
             rf"{rest}{_ASSIGN}{_VALUE}", high_entropy, 5,
             rf"{re.escape(anchor)}{rest}{_ASSIGN_CORE}{_VALUE_CORE}")
        for anchor, rest in KEYWORDS
    )  # fmt: skip


# Fields: name, kind, category, family, anchor, pattern, check, priority, core.
# fmt: off
RULES: tuple[Rule, ...] = (
    *_prefixed_rules(),
    # ---- key formats the library misses: literal anchors, case-sensitive ------------------------
    Rule(
        "anthropic", "anthropic_api_key", SECRET, "literal", "sk-ant-",
        rf"(?<![\w\-]sk-ant-)(?:api|admin|sid|oat|ort)\d{{2}}-[{_B64URL}]{{32,}}{_END}",
        random_looking, 0,
        rf"sk-ant-(?:api|admin|sid|oat|ort){_D}{{2}}-[{_B64URL}]{{32}}",
    ),
    # Azure AD client secrets: three characters, a digit, then `Q~`; no literal start, so the
    # anchor is empty and the core (which starts at the first character) finds where to try.
    Rule(
        "azure_ad_client_secret", "azure_client_secret", SECRET, "literal", "",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        random_looking, 0,
        r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31}",
    ),
    Rule(
        "openai", "openai_api_key", SECRET, "literal", "sk-",
        rf"(?<![\w\-]sk-)(?:(?:proj|svcacct|admin|None)-[{_B64URL}]{{20,}}|[A-Za-z0-9]{{20,}}){_END}",
        token_like, -2,
        rf"sk-(?:(?:proj|svcacct|admin|None)-[{_B64URL}]{{20}}|[A-Za-z0-9]{{20}})",
    ),
    *(
        Rule(
            f"aws_key_id_{anchor}", "aws_access_key", SECRET, "literal", anchor,
            rf"(?<![A-Za-z0-9]{anchor})[A-Z0-9]{{16}}(?![A-Za-z0-9])",
            random_looking, 0, rf"{anchor}[A-Z0-9]{{16}}",
        )
        for anchor in ("AKIA", "ASIA", "ABIA", "ACCA")
    ),
    # A private key whose END line is missing (a title or preview cut it off): still a key.
    Rule(
        "private_key", "private_key", SECRET, "literal", "-----BEGIN",
        r"[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\x00]{0,20000}?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\s\\:,.-]*)",
        None, 0, r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY",
    ),
    Rule(
        "url_credentials", "url_credentials", SECRET, "literal", "://",
        r"[A-Za-z0-9._~%!$&'*+,;=-]{0,128}:(?P<value>[^\s/?#@\"'<>\x00]{3,256})@[A-Za-z0-9\[]",
        None, 2,
        r"://[A-Za-z0-9._~%!$&'*+,;=-]{0,128}:[^\s/#@\"'<>\x00]{3,256}@[A-Za-z0-9\[]",
    ),
    # The user-name part of a home folder (local sessions of Claude Code, Codex, ... are full of
    # them): personal data, the rest of the path kept so that the trajectory still reads.
    *(
        Rule(
            f"home_user_{index}", "user_name", PERSONAL, "literal", anchor,
            rf"(?<![A-Za-z0-9_.~\-]{re.escape(anchor)})"
            r"(?P<value>[A-Za-z0-9][A-Za-z0-9._\-]{0,63})(?![A-Za-z0-9._\-])",
            personal_user_name, 3,
            re.escape(anchor) + r"[A-Za-z0-9][A-Za-z0-9._\-]",
        )
        for index, anchor in enumerate(("/Users/", "/home/", "\\Users\\"))
    ),
    # The machine's name in a shell prompt (`alice@alice-laptop:~/app$`, `alice@Alices-MBP ~ %`,
    # `[alice@build7 app]$`): it names the person's computer. An email's domain has a dot, and
    # `git@github.com:org/repo` is followed by neither `:~` nor `:/` nor a prompt sign.
    Rule(
        "prompt_host", "host", PERSONAL, "literal", "@",
        r"(?<=[A-Za-z0-9_.\-]@)(?P<value>[A-Za-z][A-Za-z0-9\-]{1,62})"
        r"(?=:[~/]|\s+~[^\s]*\s*[%$#>]|\s+[^\s@]{1,64}\s*[%$#>](?:\s|$)|\s[^\s\]]{1,64}\][$#%])",
        personal_host_name, 4, r"@[A-Za-z][A-Za-z0-9\-]",
    ),
    # The local part of an email is found by the post-processor, looking back from the `@`.
    Rule(
        "email", "email", PERSONAL, "literal", "@",
        r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24})(?![A-Za-z0-9-])",
        None, 6, r"@[A-Za-z0-9]",
    ),
    # ---- keyword assignments and command lines: matched case-insensitively ---------------------
    *_keyword_rules(),
    # `KEY=<random>`, `SOME_KEY: <random>`: a generic key named only `key`, its value random
    # (mixed case and digits, 20 or more: hex digests and UUIDs never are).
    Rule(
        "generic_key", "secret", SECRET, "keyword", "key",
        rf"(?<![a-z0-9]key)(?<![a-z0-9]-key){_ASSIGN}(?P<value>[a-z0-9]{{20,256}})(?![a-z0-9+/=_\-])",
        random_key_value, 5, rf"key{_ASSIGN_CORE}[a-z0-9]{{20}}",
    ),
    # A random token a few words after a word naming a credential, in prose: `Loaded credential
    # <random> from vault`, `the api key: <random>`.
    *(
        Rule(
            f"prose_{anchor.replace(' ', '_')}", "secret", SECRET, "keyword", anchor,
            rf"{rest}s?\b[^\n\x00]{{0,40}}?(?<=[\s\"'`:=(])(?P<value>[a-z0-9]{{24,128}})"
            r"(?![a-z0-9+/=_\-]|\.[a-z0-9])",
            random_token, 7,
            rf"{re.escape(anchor)}{rest}[^\n\x00]{{0,40}}{_PROSE_BEFORE}[a-z0-9]{{24}}", True,
        )
        for anchor, rest in (
            ("credential", ""), ("secret", ""), ("token", ""), ("passw", "(?:or)?d"),
            ("api", r"[ _-]?key"),
        )
    ),
    # `mysql -u root -p'pw' db`, `mysqldump -pS3cret db` (no space: -p with a space prompts).
    *(
        Rule(
            f"{client}_password", "password", SECRET, "keyword", client,
            rf"{rest}\b[^\n\x00]{{0,200}}?\s-p(?P<value>'[^'\n\x00]{{1,128}}'|\"[^\"\n\x00]{{1,128}}\"|[^\s'\"\x00-][^\s'\"\x00]{{0,127}})",
            command_password, 3, client + rest,
        )
        for client, rest in (("mysql", "(?:dump|admin)?"), ("mariadb", ""))
    ),
    # `--password pw`, `--password=pw`, `--db-password 'pw'`.
    Rule(
        "flag_password", "password", SECRET, "keyword", "--",
        r"(?:[a-z]+-)?(?:password|passwd|pass)(?:=|\s+)(?P<value>'[^'\n\x00]{1,128}'|\"[^\"\n\x00]{1,128}\"|[^\s'\"-][^\s'\"\x00]{0,127})",
        command_password, 4, rf"--(?:[a-z?]+-)?(?:password|passwd|pass)(?:=|{_S})",
    ),
    Rule(
        "bearer", "bearer_token", SECRET, "keyword", "bearer",
        r"\s+(?P<value>[a-z0-9._~+/-]{16,}=*)(?![a-z0-9._~+/=-])",
        token_like, 4, rf"bearer{_S}+[a-z0-9._~+/?-]{{16}}",
    ),
    Rule(
        "basic_auth", "bearer_token", SECRET, "keyword", "authorization",
        r"[\"']?\s*:\s*[\"']?basic\s+(?P<value>[a-z0-9+/]{8,}=*)",
        None, 4, rf"authorization[\"']?{_S}*:{_S}*[\"']?basic{_S}+[a-z0-9+/?]{{8}}",
    ),
    # ---- numbers: one character-class anchor, boundaries as look-behinds after it -------------
    # (Their cores start at that anchor: a digit, `+` or `(`.) Their digits are ASCII ones: the
    # anchor already is, so `\d` after it found only numbers that mix scripts (an ASCII first
    # digit, fullwidth ones after it), which nobody writes, and no IPv4 address (`ipaddress`
    # refuses other digits); but `[0-9?]` in the cores kept Vectorscan's number states alive
    # through every run of non-ASCII text (CJK reads `????`): four tenths of the candidate pass
    # on real agent text (bench_scan.py's corpus, 1.85 -> 1.16 ms a megabyte). Their edges are
    # ASCII word characters too: CJK is written without spaces, and `\w` on either side of
    # `\u96fb\u8a71(415) 555-2671\u3067\u3059` hid the number.
    Rule(
        "ipv4", "ip_address", PERSONAL, "number", "",
        r"(?<=[0-9])[0-9]{0,2}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?![A-Za-z0-9_]|\.[0-9])",
        None, 7, r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]",
    ),
    Rule(
        "phone_intl", "phone", PERSONAL, "number", "",
        r"(?<=\+)[1-9][0-9]{0,2}[ .-]?(?:\([0-9]{1,4}\)[ .-]?)?[0-9]{1,4}(?:[ .-]?[0-9]{2,4}){1,4}"
        r"(?![A-Za-z0-9_-]|\.[0-9])",
        None, 7, r"\+[1-9][0-9]{0,2}[ .-]?(?:\([0-9]{1,4}\)[ .-]?)?[0-9]{1,4}[ .-]?[0-9]{2}",
    ),
    Rule(
        "phone_nanp", "phone", PERSONAL, "number", "",
        r"(?:(?<=\()[0-9]{3}\)[ .-]?|(?<=[2-9])[0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}(?![A-Za-z0-9_-]|\.[0-9])",
        None, 7, r"(?:\([0-9]{3}\)[ .-]?|[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}",
    ),
)
# fmt: on

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
        f"{r.name}|{r.kind}|{r.source}|{getattr(r.check, '__name__', '')}" for r in RULES
    ).encode()
    # What the runs are, spelled as the pattern that found them before `bytes.find` did (the
    # same runs: a new spelling of the same thing must not make every trajectory due a rescan).
    + b"a" * MIN_RUN
    + rb"[a]*={0,2}"
).hexdigest()[:12]


@lru_cache(maxsize=256)
def compiled(name: str, ignorecase: bool = False) -> re.Pattern[str]:
    """One rule on its own, its anchor first: matched where its core was found."""
    return re.compile(BY_NAME[name].source, re.IGNORECASE if ignorecase else 0)


# Where an IPv6 address may stand (`scanner.Scanner._ipv6_scan` widens and parses from there).
IPV6_HINT = r":(?::|[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:)"


def one_byte_copy(text: str) -> bytes:
    """`text` with one byte per character, every non-ASCII character read as `?`: what the
    cores (`Rule.core`) and the Base64 runs are searched in, at the same offsets as `text`."""
    return text.encode("ascii", "replace")


_LEAD_AS_QUESTION = bytes(c if c < 0x80 else 0x3F for c in range(256))
_CONTINUATION = bytes(range(0x80, 0xC0))


def one_byte_copy_of_utf8(encoded: bytes) -> bytes:
    """`one_byte_copy` of the text whose UTF-8 (surrogates passed) is `encoded`: each
    character's lead byte read as `?` and its continuation bytes dropped, in one C pass (the
    scan has the UTF-8 at hand for the library; encoding the text again with `replace` costs a
    third more on text with non-ASCII characters)."""
    return encoded.translate(_LEAD_AS_QUESTION, _CONTINUATION)


@lru_cache(maxsize=1)
def compiled_numbers() -> re.Pattern[str]:
    """The number rules as one alternation under one character-class anchor, `lastgroup` naming
    the rule: digits, `+` (international numbers) and `(` (area codes); the look-behind after the
    anchor keeps a number that continues a word, a version or another number out."""
    branches = []
    for rule in FAMILY["number"]:
        body = rule.pattern.replace("(?P<value>", f"(?P<{rule.name}__v>")
        branches.append(f"(?P<{rule.name}>{body})")
    return re.compile(r"[0-9+(](?<![A-Za-z0-9_.+(\-][0-9+(])(?:" + "|".join(branches) + ")")
