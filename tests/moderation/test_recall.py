"""Recall of the scan (DESIGN.md: >= 98 %), on two corpora:

- samples generated from the public gitleaks default rules, one or more per rule whose secret has
  a format of its own (tests/moderation/data/gitleaks_samples.json, made by
  bench/make_gitleaks_corpus.py), alone in free text, in a URL, in JSON tool-call arguments, in
  an assignment, and wrapped by a 40-column terminal;
- correctly formed secrets of every kind the scan names, in the places agents put them: command
  output, file contents in edit arguments, browser URLs, tool-call JSON, titles and feedback.

A secret counts as found only when every one of its characters is inside a finding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from apps.moderation.scanning.scanner import Scanner
from tests.moderation import samples as s

CORPUS = json.loads((Path(__file__).parent / "data" / "gitleaks_samples.json").read_text())
SAMPLES = [(item["rule"], item["secret"][::-1]) for item in CORPUS["samples"]]
WIDTH = 40


def covered(scanner: Scanner, text: str, positions: list[int]) -> bool:
    inside: set[int] = set()
    for detection in scanner.scan(text):
        inside.update(range(detection.start, detection.end))
    return bool(positions) and all(p in inside for p in positions)


def located(text: str, stored: str) -> list[int]:
    at = text.find(stored)
    return list(range(at, at + len(stored))) if at >= 0 else []


def wrapped(secret: str) -> tuple[str, list[int]]:
    line = f"$ echo {secret}"
    text = "\n".join(line[i : i + WIDTH] for i in range(0, len(line), WIDTH))
    start = len("$ echo ")
    return text, [i + i // WIDTH for i in range(start, start + len(secret))]


def json_args(secret: str) -> str:
    arguments = json.dumps({"command": f"deploy --token {secret}"})
    return json.dumps({"name": "execute_bash", "arguments": arguments})


PLACES: dict[str, Callable[[str], str]] = {
    "free text": lambda v: f"The deploy log printed {v} and then exited.",
    "url": lambda v: f"GET https://api.service.io/v1/items?key={v}&page=2 HTTP/1.1",
    "json tool-call arguments": json_args,
    "assignment": lambda v: f"SERVICE_API_KEY={v}",
    # On a line of its own in a command's output, nothing beside it naming the vendor (issue
    # 22's corpus missed five kinds there).
    "alone in command output": lambda v: f"$ ./print-config.sh\n{v}\nDone.\n",
}


def recall(place: str) -> tuple[float, list[str]]:
    scanner = Scanner()
    missed = []
    for rule, secret in SAMPLES:
        if place == "wrapped":
            text, positions = wrapped(secret)
        else:
            text = PLACES[place](secret)
            stored = json.dumps(json.dumps(secret))[2:-2] if place.startswith("json") else secret
            positions = located(text, stored.replace('\\\\"', '"')) or located(text, secret)
        if not covered(scanner, text, positions):
            missed.append(rule)
    return 1 - len(missed) / len(SAMPLES), missed


def test_corpus_covers_every_distinctive_rule():
    rules = {rule for rule, _ in SAMPLES}
    assert len(rules) >= 95 and len(SAMPLES) >= 2 * 95


@pytest.mark.parametrize("place", [*PLACES, "wrapped"])
def test_recall_on_the_gitleaks_rules(place):
    found, missed = recall(place)
    assert found >= 0.98, (place, found, missed)


def encoded(secret: str, form: str) -> tuple[str, list[int]]:
    """The secret Base64-encoded as agents meet it, and the positions of the encoded block: a
    blob alone, URL-safe without padding in a query string, or a credentials file as `base64`
    prints it (wrapped at 76 columns)."""
    import base64
    import textwrap

    if form == "base64":
        block = base64.b64encode(secret.encode()).decode()
        text = f"echo {block} | base64 -d"
    elif form == "base64url unpadded":
        block = base64.urlsafe_b64encode(secret.encode()).decode().rstrip("=")
        text = f"GET /callback?state={block}&code=1"
    else:
        payload = f"[default]\nregion = eu-west-1\nkey = {secret}\n"
        block = "\n".join(textwrap.wrap(base64.b64encode(payload.encode()).decode(), 76))
        text = f"$ base64 ~/.config/tool/credentials\n{block}\n$ "
    return text, located(text, block)


@pytest.mark.parametrize("form", ["base64", "base64url unpadded", "base64 wrapped at 76"])
def test_recall_on_the_gitleaks_rules_base64_encoded(form):
    scanner = Scanner()
    missed = [rule for rule, secret in SAMPLES if not covered(scanner, *encoded(secret, form))]
    assert 1 - len(missed) / len(SAMPLES) >= 0.98, (form, missed)


# --- the hand-made corpus -----------------------------------------------------------------------

SECRETS: dict[str, Callable[[], str]] = {
    "openai": s.openai_key,
    "openai project": s.openai_project_key,
    "openai sk-None": s.openai_none_key,
    "anthropic": s.anthropic_key,
    "anthropic oauth": s.anthropic_oauth_token,
    "huggingface": s.huggingface_token,
    "github": s.github_token,
    "github fine-grained": s.github_pat,
    "gitlab": s.gitlab_token,
    "slack": s.slack_token,
    "stripe": s.stripe_key,
    "aws key id": s.aws_key_id,
    "aws secret": s.aws_secret,
    "google": s.google_key,
    "private key": s.private_key_block,
    "jwt": s.jwt,
    "sendgrid": s.sendgrid_key,
    "npm": s.npm_token,
    "digitalocean": s.digitalocean_token,
}

REALISTIC: dict[str, Callable[[str], str]] = {
    "command output": lambda v: f"$ cat ~/.config/tool/credentials\n{v}\n$ ",
    "env output": lambda v: f"PATH=/usr/bin\nSERVICE_TOKEN={v}\nHOME=/root\n",
    "edit arguments": lambda v: json.dumps(
        {"path": "/workspace/app/settings.py", "new_str": f'API_KEY = "{v}"\n'}
    ),
    "browser url": lambda v: f"Navigated to https://dashboard.service.io/connect?token={v}#done",
    "tool-call json": lambda v: json.dumps(
        {"tool_calls": [{"function": {"arguments": json.dumps({"key": v})}}]}
    ),
    "title": lambda v: f"Fix deploy: use {v} for the staging bucket",
    "feedback": lambda v: f"It worked after I pasted {v}. Thanks!",
}


def _positions(text: str, secret: str) -> list[int]:
    for stored in (secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret))[3:-3]):
        positions = located(text, stored)
        if positions:
            return positions
    return []


def test_recall_on_correctly_formed_secrets_in_realistic_places():
    scanner = Scanner()
    total, missed = 0, []
    for name, make in SECRETS.items():
        for place, build in REALISTIC.items():
            secret = make()
            text = build(secret)
            total += 1
            if not covered(scanner, text, _positions(text, secret)):
                missed.append((name, place))
    assert 1 - len(missed) / total >= 0.98, missed
