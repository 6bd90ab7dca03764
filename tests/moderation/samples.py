"""Realistic credentials built at run time, so none is committed verbatim for scanners to trip on.

A seeded generator gives random-looking bodies (real keys are random; `"a" * 48` would read as a
placeholder and is deliberately not flagged).
"""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
_rng = random.Random(20250301)


def body(length: int, alphabet: str = ALNUM) -> str:
    while True:
        value = "".join(_rng.choices(alphabet, k=length))
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def openai_key() -> str:
    return "sk-" + body(48)


def openai_project_key() -> str:
    return "sk-proj-" + body(64, URLSAFE)


def anthropic_key() -> str:
    return "sk-ant-api03-" + body(93, URLSAFE)


def huggingface_token() -> str:
    return "hf_" + body(34, string.ascii_letters + "12")


def github_token() -> str:
    return "ghp_" + body(36)


def github_pat() -> str:
    return "github_pat_" + body(22) + "_" + body(59)


def gitlab_token() -> str:
    return "glpat-" + body(20, URLSAFE)


def slack_token() -> str:
    return "xoxb-" + body(12, string.digits) + "-" + body(13, string.digits) + "-" + body(24)


def stripe_key() -> str:
    return "sk_" + "live_" + body(24)


def aws_key_id() -> str:
    return "AKIA" + body(16, string.ascii_uppercase + string.digits)


def aws_secret() -> str:
    return body(40, ALNUM + "/+")


def google_key() -> str:
    return "AIza" + body(35, URLSAFE)


def private_key_block() -> str:
    lines = [body(64, ALNUM + "+/") for _ in range(5)]
    label = "RSA " + "PRIVATE KEY"
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def jwt() -> str:
    return "eyJ" + body(30, URLSAFE) + ".eyJ" + body(60, URLSAFE) + "." + body(43, URLSAFE)
