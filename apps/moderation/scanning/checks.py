"""The checks the hand-written rules run on a match (`Rule.check`): entropy, character
classes, "random-looking" and the like. They run only on matches, so they may be slow-ish
Python; the hot ones read the value in C (see the comments).

Pure Python, no Django.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import kingfisher_sdk

# n * log2(n) for the count n of one character in a value of up to 256 characters (assignment
# values are at most 256, bare AWS keys 40): the entropy is then one Counter and a table look-up
# per distinct character, log2(length) - sum(n log2 n) / length, the same sum regrouped.
_TABLE_MAX = 256
_N_LOG2_N = tuple(n * math.log2(n) if n else 0.0 for n in range(_TABLE_MAX + 1))


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    length = len(value)
    counts = Counter(value).values()
    if length <= _TABLE_MAX:
        return math.log2(length) - sum(map(_N_LOG2_N.__getitem__, counts)) / length
    return -sum(n / length * math.log2(n / length) for n in counts)


# Kingfisher's entropy (Rust, over bytes: an ASCII value's characters) is 8 times quicker than a
# Counter and agrees with `shannon_entropy` to within 1e-5 (measured on 200,000 values: it sums
# differently). It decides unless it is that close to the threshold; there ours does, so a value
# right at the bound is judged as before.
_NATIVE_MARGIN = 1e-4


def _entropy_at_least(value: str, bits: float) -> bool:
    if value.isascii():
        native = kingfisher_sdk.shannon_entropy(value.encode("ascii"))
        if abs(native - bits) > _NATIVE_MARGIN:
            return native >= bits
    return shannon_entropy(value) >= bits


# The character classes of an ASCII value are read in C (casing, `isalnum`, one search for a
# digit, or set operations on its distinct characters), not by a Python-level `any` per class
# over every character; other values take the plain path.
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_DIGIT = re.compile(r"[0-9]")


def _char_classes(value: str) -> int:
    if value.isascii():
        # In C: a value has a lowercase letter if upper-casing changes it, an uppercase one if
        # lower-casing does, and another character if it is not alphanumeric (ASCII only).
        return (
            (value != value.upper())
            + (value != value.lower())
            + (_DIGIT.search(value) is not None)
            + (not value.isalnum() and value != "")
        )
    chars = set(value)
    return (
        any(c.islower() for c in chars)
        + any(c.isupper() for c in chars)
        + any(c.isdigit() for c in chars)
        + any(not c.isalnum() for c in chars)
    )


def random_looking(value: str) -> bool:
    """A vendor-prefixed token body: enough distinct characters to be a key, not `xxxx` or `aaaa`."""
    return len(set(value)) >= 8


def _has_digit_and_letter(value: str) -> bool:
    if value.isascii():
        # A letter is what upper- and lower-casing tell apart (as in `_char_classes`).
        return _DIGIT.search(value) is not None and value.upper() != value.lower()
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# Identifier-like values are code, not credentials: `password=self.password`, `key=settings.KEY`.
_CODE_LIKE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+"
    r"|[A-Za-z_][A-Za-z0-9_]*\(\)?"
)
# A reference to a variable, not its value: `$DB_PASSWORD`, `${TOKEN}`, `$(cat key)`, `%PASS%`.
_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_]+%")
# A `$` then a random string (mixed case and digits, 16 or more) is a value that starts with `$`
# (`DB_PASSWORD=$Xk9fQ2mZ...`), not a reference such as `$DB_PASSWORD` or `$db_pass`.
_DOLLAR_RANDOM = re.compile(r"\$[A-Za-z0-9]{16,}")


def _is_reference(value: str) -> bool:
    if _REFERENCE.fullmatch(value) is None:
        return False
    return not (_DOLLAR_RANDOM.fullmatch(value) and mixed_random(value[1:], 16))


# An identifier in CamelCase or with digits between words (`OAuth2ClientCredentialsProvider`):
# code, not a random value, though it has both cases and digits.
_WORDLIKE = re.compile(r"(?:[a-z]{2,}|[A-Z]{1,2}[a-z]{2,}|[A-Z]{2,}(?![a-z])|[0-9]+|_)+")


def mixed_random(value: str, length: int = 24) -> bool:
    """A random token: `length` or more characters with lowercase, uppercase and digits, many
    distinct ones, high entropy, not a CamelCase identifier. Hex digests and UUIDs (one case)
    never pass."""
    if len(value) < length or not value.isascii():
        return False
    chars = set(value)
    if chars.isdisjoint(_LOWER) or chars.isdisjoint(_UPPER) or chars.isdisjoint(_DIGITS):
        return False
    if len(chars) < min(12, len(value) // 2) or _WORDLIKE.fullmatch(value):
        return False
    return _entropy_at_least(value, 3.5)


def random_token(value: str) -> bool:
    """A value of the prose and generic `KEY=` rules (24 and 20 characters or more)."""
    return mixed_random(value, 24)


def random_key_value(value: str) -> bool:
    return mixed_random(value, 20)


def high_entropy(value: str) -> bool:
    """A generic assignment's value: looks like a real credential, not a word, path or variable.

    A value may start with `$` or `#` (`$ecr3t!x`, `#k9!Lm2`): only a whole variable reference
    is code.
    """
    if len(value) < 8 or _CODE_LIKE.fullmatch(value) or _is_reference(value):
        return False
    if value[0] in "<{[(" or value.startswith(("/", "./", "~/", "http")):
        return False
    return _char_classes(value) >= 2 and _entropy_at_least(value, 3.0)


def token_like(value: str) -> bool:
    return random_looking(value) and _has_digit_and_letter(value)


def command_password(value: str) -> bool:
    """`mysql -p'...'`, `--password ...`: quotes stripped, not a flag, a variable or a prompt."""
    value = value.strip("'\"")
    if len(value) < 4 or value.startswith("-") or _is_reference(value):
        return False
    return len(set(value)) >= 4


_HEX = frozenset("0123456789abcdefABCDEF")


def aws_secret_like(value: str) -> bool:
    """A bare 40-character AWS secret key: mixed case and digits, random, not a hex digest."""
    chars = set(value)
    if chars <= _HEX:
        return False
    if value.isascii():
        has = (
            not chars.isdisjoint(_LOWER),
            not chars.isdisjoint(_UPPER),
            not chars.isdisjoint(_DIGITS),
        )
    else:
        has = (
            any(c.islower() for c in chars),
            any(c.isupper() for c in chars),
            any(c.isdigit() for c in chars),
        )
    return all(has) and _entropy_at_least(value, 4.2)


# Home folders that name no one: CI and container users, placeholders in docs, system accounts.
GENERIC_USERS = frozenset(
    """
    user users username name yourname your-name your_name yourusername your-username
    your_username myuser me you runner runneradmin ubuntu debian root admin administrator
    shared public default guest all nobody openhands app appuser node jovyan vscode coder dev
    developer ec2-user circleci travis vagrant linuxbrew git postgres www-data docker ci build
    builder buildkite-agent agent workspace sandbox test tester testuser demo example foo bar
    gitpod codespace cloudshell-user pi kali claude devin swe-agent
    """.split()
)


def personal_user_name(value: str) -> bool:
    """The user-name part of a home folder (`/Users/alice/`) names someone, unless it is a
    generic account (CI runners, containers, placeholders in documentation). At least three
    characters: a redaction replaces its value wherever it stands in the trajectory (that is
    how the name is also hidden in `alice@laptop` prompts and `whoami` output), and a shorter
    one would cut up ordinary words."""
    return len(value) >= 3 and not value.isdigit() and value.casefold() not in GENERIC_USERS


# Machine names that name no one: containers, CI, defaults.
GENERIC_HOSTS = GENERIC_USERS | frozenset(
    """
    localhost localhost.localdomain host hostname machine computer server laptop desktop
    container devcontainer codespaces runner sandbox buildkitsandbox worker box vm
    """.split()
)
_CONTAINER_ID = re.compile(r"[0-9a-f]{12}|[0-9a-f]{64}")


def personal_host_name(value: str) -> bool:
    """A machine name in a shell prompt names the person's computer (`Alices-MacBook-Pro`),
    unless it is a generic one or a container's id (`root@3f2a1b4c5d6e:/workspace#`). At least
    three characters, for the reason personal_user_name gives."""
    if len(value) < 3 or value.casefold() in GENERIC_HOSTS:
        return False
    return not _CONTAINER_ID.fullmatch(value)
