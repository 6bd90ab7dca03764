"""Scan misses a moderator approved and published: each shape is found now, and the new
detections flag nothing in hex digests, UUIDs, Base64 image data or the demo data."""

from __future__ import annotations

import base64
import random
import uuid

import pytest

from apps.moderation.scanning.scanner import Scanner
from apps.trajectories.redaction import redactor
from tests.moderation import samples as s


def _key(seed: str, length: int = 32) -> str:
    """A random key of mixed case and digits, the same for a test wherever it runs."""
    rng = random.Random(seed)
    while True:
        value = "".join(rng.choices(s.ALNUM, k=length))
        if not (value.isalpha() or value.isdigit() or value.islower() or value.isupper()):
            return value


def _covered(text: str, value: str) -> bool:
    at = text.index(value)
    inside: set[int] = set()
    for detection in Scanner().scan(text):
        inside.update(range(detection.start, detection.end))
    return set(range(at, at + len(value))) <= inside


def _secrets(text: str) -> list:
    return [d for d in Scanner().scan(text) if d.kind not in {"email", "phone", "ip_address"}]


@pytest.mark.parametrize(
    ("template", "dollar"),
    [
        ("DB_PASSWORD={v}", True),
        ("mysql -u root -p'{v}' shop", True),
        ("mysql -u root -p'{v}' shop", False),
    ],
)
def test_dollar_values_are_values(template, dollar):
    value = ("$" if dollar else "") + _key(template + str(dollar))
    assert _covered(template.format(v=value), value)


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD=$DB_PASSWORD",
        "DB_PASSWORD=${TOKEN}",
        "DB_PASSWORD=$(cat key)",
        "DB_PASSWORD=$db_pass_value",
        "mysql -u root -p'$DB_PASSWORD' shop",
    ],
)
def test_references_stay_references(text):
    assert _secrets(text) == []


@pytest.mark.parametrize(
    "template",
    [
        "Loaded credential {v} from vault",
        "the secret is {v} now",
        "using token {v}",
        "password was {v}, rotate it",
        "the api key: {v}",
    ],
)
def test_random_value_after_a_keyword_in_prose(template):
    value = _key(template)
    assert _covered(template.format(v=value), value)


@pytest.mark.parametrize("keyword", ["KEY", "SOME_KEY", "key"])
def test_generic_key_assignment(keyword):
    value = _key(keyword, 24)
    assert _covered(f"{keyword}={value}", value)


def test_wrapped_aws_secret_is_redacted_whole():
    key = s.aws_secret()
    head = "aws_secret_access_key = "
    cut = 40 - len(head)
    text = f"$ cat ~/.aws/credentials\n{head}{key[:cut]}\n{key[cut:]}\n$ ls\n"
    found = Scanner().scan(text)
    redactions = {}
    for detection in found:
        redactions[detection.text] = f"[{detection.kind}]"
        if detection.value:
            redactions[detection.value] = f"[{detection.kind}]"
    redacted = redactor(redactions)(text)
    for i in range(len(key) - 11):
        assert key[i : i + 12] not in redacted, redacted


_WORDS = ["commit", "id", "digest", "credential", "secret", "token", "password", "key", "sha"]


def _benign_corpus() -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(200):
        word = rng.choice(_WORDS)
        out.append(f"{word} {rng.getrandbits(160):040x}")
        out.append(f"{word} {uuid.UUID(int=rng.getrandbits(128))}")
        out.append(f"{word} {rng.getrandbits(256):064x}")
        out.append(f"{word} sha256:{rng.getrandbits(256):064x}")
        out.append(f"KEY={rng.getrandbits(256):064x}")
        image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(300)).decode()
        out.append(f'{word} "data:image/png;base64,{image}"')
    return out


def test_no_new_findings_in_digests_uuids_and_images():
    flagged = [text for text in _benign_corpus() if _secrets(text)]
    assert flagged == []
