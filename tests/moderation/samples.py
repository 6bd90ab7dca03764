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
    return "hf_" + body(34, string.ascii_letters)


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
    return "AKIA" + body(16, string.ascii_uppercase + "234567")


def aws_secret() -> str:
    return body(40, ALNUM + "/+")


def google_key() -> str:
    return "AIza" + body(35, URLSAFE)


def private_key_block() -> str:
    lines = [body(64, ALNUM + "+/") for _ in range(5)]
    label = "RSA " + "PRIVATE KEY"
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _b64url(data: str) -> str:
    import base64

    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def jwt() -> str:
    """A well-formed token: Base64url JSON header and claims, a random signature."""
    header = _b64url('{"alg":"HS256","typ":"JWT"}')
    claims = _b64url('{"sub":"' + body(12, string.digits) + '","name":"' + body(10) + '"}')
    return f"{header}.{claims}.{body(43, URLSAFE)}"


# --- the formats an attack on a production-like instance got past the first scanner (issue 7) --


def anthropic_oauth_token() -> str:
    return "sk-ant-oat01-" + body(93, URLSAFE) + "AA"


def openai_none_key() -> str:
    return "sk-None-" + body(48)


def sendgrid_key() -> str:
    return "SG." + body(22, URLSAFE) + "." + body(43, URLSAFE)


def npm_token() -> str:
    return "npm_" + body(36)


def digitalocean_token() -> str:
    return "dop_v1_" + body(64, "0123456789abcdef")


def random_key(length: int = 32) -> str:
    """What `openssl rand -base64 24` or a password manager hands out."""
    return body(length, ALNUM)
