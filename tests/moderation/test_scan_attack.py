"""Every secret the attack of issue 7 got past the first scanner, found now (the scanner alone;
tests/moderation/test_derived_text.py covers what surfaces show)."""

from __future__ import annotations

import base64
import random
import string
import urllib.parse

import pytest

from apps.moderation.scanning.scanner import Scanner, scan
from tests.moderation import samples as s


def secrets(text: str) -> list[tuple[str, str]]:
    found = Scanner().scan(text)
    for detection in found:
        assert text[detection.start : detection.end] == detection.text
    return [(d.kind, d.shown) for d in found if d.kind not in {"email", "phone", "ip_address"}]


@pytest.mark.parametrize("name", ["ENCRYPTION_KEY", "SIGNING_KEY", "MASTER_KEY"])
@pytest.mark.parametrize(
    "place",
    [
        "{name}={value}",
        "export {name}='{value}'",
        '{{"{name}": "{value}"}}',
        "$ env | grep KEY\n{name}={value}\nHOME=/root",
        "https://deploy.acme.io/hook?{name}={value}&x=1",
        "{name}: {value}",
    ],
)
def test_key_assignments_with_32_random_characters(name, place):
    value = s.random_key()
    assert secrets(place.format(name=name, value=value)) == [("secret", value)]


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("anthropic_api_key", s.anthropic_oauth_token),
        ("openai_api_key", s.openai_none_key),
        ("sendgrid_api_key", s.sendgrid_key),
        ("npm_token", s.npm_token),
        ("digitalocean_token", s.digitalocean_token),
    ],
)
@pytest.mark.parametrize("place", ["{}", "key: {} (rotated)", "token {}...", "see {}."])
def test_bare_vendor_keys(kind, make, place):
    key = make()
    assert secrets(place.format(key)) == [(kind, key)]


def test_command_line_passwords():
    password = "Xy7#kP9!qL2m"
    assert secrets(f"mysql -u root -p'{password}' shop") == [("password", password)]
    assert secrets("mysqldump -pS3cr3tPw9 shop > dump.sql") == [("password", "S3cr3tPw9")]
    assert secrets("pg_dump --password Hq7vT2mK9 -h db") == [("password", "Hq7vT2mK9")]
    assert secrets("tool --db-password='Hq7vT2mK9x'") == [("password", "Hq7vT2mK9x")]
    for harmless in ["mysql -u root -p shop", "docker login --password-stdin", "mysql -P 3306"]:
        assert secrets(harmless) == [], harmless


@pytest.mark.parametrize("value", ["$ecr3tP4ss!x9", "#k9Lm2Qx7!zT"])
def test_passwords_starting_with_dollar_or_hash(value):
    assert secrets(f"DB_PASSWORD={value}") == [("secret", value)]
    assert secrets("DB_PASSWORD=$DB_PASS") == []
    assert secrets("DB_PASSWORD=${DB_PASS}") == []


def test_a_key_followed_by_an_ellipsis_is_still_a_key():
    key = s.github_token()
    assert secrets(f"using {key}... done") == [("github_token", key)]
    assert secrets(f"using {key}… done") == [("github_token", key)]


def test_a_bare_aws_secret_key():
    key = s.aws_secret()
    assert secrets(f"the secret is {key}\n") == [("aws_secret_key", key)]
    # Hex digests and longer Base64 are not AWS keys.
    assert secrets("commit 3f786850e387550fdab836ed7e6dc881de23001b") == []


@pytest.mark.parametrize("width", [40, 80])
def test_secrets_wrapped_by_a_terminal(width):
    key = s.openai_project_key()
    line = f"OPENAI_API_KEY={key}"
    wrapped = "\n".join(line[i : i + width] for i in range(0, len(line), width))
    found = Scanner().scan(f"$ cat .env\n{wrapped}\n$ ")
    assert [(d.kind, d.shown) for d in found] == [("openai_api_key", key)]
    assert "\n" in found[0].text  # the stored span, line break included, is what is redacted


def test_ansi_colour_codes_inside_a_secret():
    key = s.openai_project_key()
    split = key[:3] + "\x1b[m\x1b[K" + key[3:]
    text = f"OPENAI_API_KEY=\x1b[01;31m\x1b[K{split}\x1b[m\x1b[K\n"
    (detection,) = Scanner().scan(text)
    assert detection.kind == "openai_api_key" and detection.shown == key
    assert detection.text == split  # the stored span: what public surfaces must replace


@pytest.mark.parametrize(
    "make", [s.github_token, s.anthropic_key, s.openai_project_key, s.slack_token]
)
def test_base64_and_url_encoded_secrets(make):
    key = make()
    encoded = base64.b64encode(f"TOKEN={key}".encode()).decode()
    found = scan(f"echo {encoded} | base64 -d")
    assert [d.shown for d in found if key in d.shown] == [key] or [d.text for d in found] == [
        encoded
    ]
    quoted = urllib.parse.quote(f'{{"token": "{key}"}}')
    found = scan(f"GET https://api.acme.io/cb?state={quoted}&x=1")
    assert [d.shown for d in found] == [key]


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("github_token", s.github_token),
        ("gitlab_token", s.gitlab_token),
        ("slack_token", s.slack_token),
        ("stripe_key", s.stripe_key),
    ],
)
def test_a_vendor_key_base64_encoded_without_its_padding(kind, make):
    """URL-safe Base64 drops the `=` padding (an OAuth `state`, a JWT's parts): the library's
    own decoding found a key only with its padding, and the hand rules, which read the scan's
    Base64 view, know no vendor format. The library reads that view now."""
    key = make()
    encoded = base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
    found = scan(f"GET https://app.acme.io/oauth/callback?state={encoded}&code=1")
    assert [(d.kind, d.shown) for d in found] == [(kind, key)]


@pytest.mark.parametrize(("width", "command"), [(76, "base64"), (64, "openssl base64")])
def test_a_key_in_base64_wrapped_as_base64_prints_it(width, command):
    """`base64` wraps its output at 76 columns, `openssl base64` at 64: each line alone decodes
    to a piece of the file, and the key is split across them. Unwrapped, then decoded, it is
    found; the finding covers the whole block, lines and line breaks."""
    import textwrap

    key = s.github_token()
    payload = f"[default]\nregion = eu-west-1\noutput = json\ntoken = {key}\n"
    block = "\n".join(textwrap.wrap(base64.b64encode(payload.encode()).decode(), width))
    text = f"$ {command} ~/.config/tool/credentials\n{block}\n$ "
    found = Scanner().scan(text)
    assert [(d.kind, d.shown) for d in found] == [("github_token", key)]
    (detection,) = found
    assert detection.text == block and text[detection.start : detection.end] == block


def test_engine_keeps_to_one_compiled_database_per_process():
    from apps.moderation.scanning import library

    assert library.engine() is library.engine()


def test_a_base64_secret_is_found_whatever_its_neighbours_hold():
    """The scan batches an event's strings into one text. A string full of Base64 that decodes
    to text (5,000 runs) must not use up the decoding of a later string's encoded key: each
    string's findings are its own, as if it were scanned alone."""
    # A shape only the hand rules know (the library decodes Base64 on its own).
    key = "".join(random.Random(3).choices(string.ascii_letters + string.digits, k=32))
    filler = " ".join(
        base64.b64encode(f"harmless line number {n:05d}".encode()).decode() for n in range(5000)
    )
    encoded = base64.b64encode(f"ENCRYPTION_KEY={key}".encode()).decode()
    alone = Scanner().scan_many([f"echo {encoded} | base64 -d"])
    batched = Scanner().scan_many([filler, f"echo {encoded} | base64 -d"])
    assert alone, "the encoded key alone is found"
    assert [(1, d.text) for _, d in alone] == [(i, d.text) for i, d in batched if i == 1]
