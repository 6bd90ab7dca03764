"""The canary crawl (issue 20): every public byte comes from the redacted view.

One trajectory per import format (the suite's samples) carries a unique, correctly formed secret
in every string field its file holds (canary_plant.py: tool inputs and results, metadata, each
format's own fields, whatever a format adds later), in each of its own string fields (title,
agent, model, version, feedback), and in an event's text in each form a renderer decodes or a
reader can (plain, ANSI colour codes, Base64 of an assignment, URL-encoded, an HTML entity,
Markdown backslash escapes, wrapped at 40 and at 76 columns); the real scan runs and a careless
moderator approves whatever it held; synthesis runs against the suite's stand-in LLM
(tests/learn/llm_server.py), so that retrieval and the release's examples configs are made of
them too. Then, as anonymous and as another
signed-in user, the crawl visits every URL pattern of the URLconf with the canary trajectories'
ids filled in (a pattern it cannot fill fails the test until a filler or a reason is added
below), follows every same-site link of what it read, reads the sitemaps and the feed, every
mail not addressed to the owner, and every file of a release built from them. It fails on a
secret or on any 12-character fragment of one.

New surfaces, fields and formats join by existing: a new URL pattern must be filled or excused
here, a new sample format is shared here on its own.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import string
import textwrap
from collections import deque
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pyarrow.parquet as pq
import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from apps.datasets import services as release_services
from apps.moderation.services.decisions import trajectory_approve
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.ingest import ShareOptions, trajectory_ingest
from tests.conftest import SAMPLE_FILES, SAMPLES_DIR
from tests.datasets.conftest import release_storage  # noqa: F401 (the release storage fixture)
from tests.learn.conftest import fake_llm  # noqa: F401 (the stand-in LLM endpoint)
from tests.moderation.samples import github_token
from tests.security.canary_plant import plant

pytestmark = pytest.mark.django_db

FRAGMENT = 12
PAGE_LIMIT = 600
OWN_FIELDS = ("title", "agent", "model_name", "agent_version", "feedback_text")

# Patterns the crawl does not fill, each with its reason. Everything else must be filled.
EXCUSED = {
    "admin/": "Django admin: staff only (anonymous and other users are sent to its login)",
    "accounts/": "allauth's sign-in, sign-up and e-mail pages: no trajectory text",
    "api/v1/trajectories/preview": "POST only: previews an upload, stores nothing",
    "share_od_trajectory": "POST only: the OpenHands drop-in share endpoint",
    "api/share": "POST only: the OpenHands drop-in share endpoint",
    "api/v1/retrieve": "POST only: visited below with a query body",
}
# Query strings that make a filled pattern show the canary trajectories.
QUERIES = {
    "compare/": ["?a={a}&b={b}"],
    "compare/rows": ["?a={a}&b={b}"],
    "browse/": ["", "?q=token", "?agent={agent}", "?model={model}"],
    "api/v1/trajectories": ["", "?q=token", "?agent={agent}"],
    "t/{share_id}/find": ["?q=token", "?q=ghp"],
    "t/{share_id}/feedback/notes": ["?steps=" + ",".join(str(n) for n in range(1, 60))],
}


def _walk(patterns, prefix: str = ""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def _route(raw: str) -> str:
    """A pattern as a template with {names}: regex groups and converters alike."""
    route = raw.lstrip("^").rstrip("$")
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", route)
    route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    return route.replace("\\.", ".")


def fragments(secret: str) -> set[str]:
    return {secret[i : i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)}


class Canaries:
    """The secrets planted, and each 12-character fragment of them and of the encoded forms
    planted (a page that showed `%67%68%70...` or the Base64 blob unredacted shows the secret
    to anyone who decodes it)."""

    def __init__(self):
        self.secrets: list[str] = []
        self._pieces: dict[str, str] = {}

    def _add(self, secret: str, shown_as: str = "") -> None:
        for piece in fragments(shown_as or secret):
            self._pieces[piece] = secret

    def new(self) -> str:
        secret = github_token()
        self.secrets.append(secret)
        self._add(secret)
        return secret

    def also_as(self, secret: str, form: str) -> None:
        """`form` is how `secret` was planted (encoded): none of it may show either."""
        self._add(secret, form)

    def new_user_name(self) -> str:
        """A home folder's user name (issue 22: local sessions are full of them)."""
        name = "".join(random.choices(string.ascii_lowercase, k=max(FRAGMENT, 16)))
        self.secrets.append(name)
        self._add(name)
        return name

    def found(self, text: str) -> list[str]:
        """The secrets any window of `text` shows a fragment of: one look-up per position,
        whatever the number of canaries (thousands: one per string field)."""
        pieces = self._pieces
        hits = set()
        for start in range(len(text) - FRAGMENT + 1):
            secret = pieces.get(text[start : start + FRAGMENT])
            if secret is not None:
                hits.add(secret)
        return sorted(hits)


def _event_text(canaries: Canaries) -> str:
    plain, ansi, encoded = canaries.new(), canaries.new(), canaries.new()
    entity, escaped, wrapped = canaries.new(), canaries.new(), canaries.new()
    percent, wide = canaries.new(), canaries.new()
    blob = base64.b64encode(f"export GH_TOKEN={encoded}\n".encode()).decode()
    canaries.also_as(encoded, blob)
    # URL-encoded whole, as a query string carries it once a client quoted every byte.
    quoted = "".join(f"%{byte:02X}" for byte in percent.encode())
    canaries.also_as(percent, quoted)
    # A terminal 76 columns wide (base64's width) wraps this line inside the token.
    curl = f"curl -fsS https://api.github.com/user/repos -H Authorization:token:{wide} -o r.json"
    assert curl.index(wide) < 76 < curl.index(wide) + len(wide)
    # What Markdown decodes on the page: an entity reference and backslash escapes.
    as_entity = "&#103;" + entity[1:]
    as_escaped = escaped.replace("_", "\\_")
    user, host = canaries.new_user_name(), canaries.new_user_name()
    return (
        f"cd /Users/{user}/work/greet && whoami\n{user}\n"
        # The sharer's computer in a prompt, and `hostname` printing it.
        f"{user}@{host}-mbp greet % hostname\n{host}-mbp\n"
        f"The token is {plain} (do not share).\n"
        f"\x1b[32mexport GH_TOKEN=\x1b[1m{ansi}\x1b[0m\n"
        f"echo {blob} | base64 -d > .env\n"
        f"Rendered: {as_entity} and {as_escaped}\n"
        # No `token=` before it: only decoding the escapes finds it.
        f"GET /search?q={quoted} HTTP/1.1\n"
        + "\n".join(curl[i : i + 76] for i in range(0, len(curl), 76))
        + "\n"
        # A terminal 40 columns wide wraps the assignment inside the token.
        + "\n".join(textwrap.wrap(f"export GH_TOKEN={wrapped}", 40, break_long_words=True))
        + "\n"
    )


@pytest.fixture
def canary_world(release_storage, fake_llm, settings, owner, moderator):  # noqa: F811
    root = release_storage
    canaries = Canaries()
    shared: list[Trajectory] = []
    planted: dict[str, set[str]] = {}
    for name in SAMPLE_FILES:
        data, planted[name], _left_alone = plant((SAMPLES_DIR / name).read_bytes(), canaries.new)
        result = trajectory_ingest(
            data=data,
            user=owner,
            options=ShareOptions(visibility="public", license_agreed=True, filename=name),
        )
        assert result.stored, (name, result.errors)
        trajectory = result.stored[0].trajectory
        fields = {field: f"{field} {canaries.new()}" for field in OWN_FIELDS}
        Trajectory.objects.filter(pk=trajectory.pk).update(**fields)
        last = trajectory.events.order_by("-position").first()
        Event.objects.create(
            trajectory=trajectory,
            position=(last.position + 1) if last else 0,
            source="agent",
            kind="message",
            type="message",
            text=_event_text(canaries),
        )
        Trajectory.objects.filter(pk=trajectory.pk).update(num_events=trajectory.events.count())
        trajectory.refresh_from_db()
        trajectory_scan(trajectory=trajectory)
        trajectory.refresh_from_db()
        if trajectory.review_state != "approved":  # a careless moderator approves it all
            trajectory_approve(trajectory=trajectory, moderator=moderator)
            trajectory.refresh_from_db()
        assert trajectory.is_public, name
        shared.append(trajectory)
    _synthesize(settings)
    # Feedback after the synthesis: its bad rating and first-wrong mark on the canary step
    # would make the flagged_by_readers filter drop every window holding the canaries, which
    # retrieval is here to serve; given now, its correction is served next to that step.
    for trajectory in shared:
        _feedback_with_canaries(trajectory, canaries, moderator)
    mail.outbox.clear()
    release = release_services.release_run(force=True).release
    assert release is not None and release.status == "published"
    return {
        "canaries": canaries,
        "trajectories": shared,
        "release": release,
        "root": root,
        "planted": planted,
    }


def _synthesize(settings) -> None:
    """Learn-by-interact over them against the stand-in LLM, which writes each instruction
    from the window it is sent (so whatever of a canary a window held, its example holds):
    the kept examples go into the retrieval index and the release's examples configs."""
    from apps.learn.models import Example, ExampleState
    from apps.learn.retrieval import index

    settings.TRAJHUB_RETRIEVE_DENSE = "off"  # the embedding model takes seconds to load
    index._current = None
    call_command("synthesize", stdout=io.StringIO(), stderr=io.StringIO())
    kept = Example.objects.filter(state=ExampleState.KEPT)
    assert kept.count() >= len(SAMPLE_FILES), kept.count()
    # The windows were cut from the redacted text: placeholders of canaries are in them.
    assert any(
        "<GITHUB_TOKEN_" in json.dumps(row) for row in kept.values("instruction", "window__steps")
    )


FEEDBACK_CANARIES = 2


def _feedback_with_canaries(trajectory, canaries, moderator) -> None:
    """A reader's action correction and comment on the canary step, each with a secret of its
    own; the scan holds them and the careless moderator shows them too (issue 23)."""
    from django.contrib.auth import get_user_model

    from apps.feedback.models import StepNote
    from apps.feedback.moderating import note_decide
    from apps.feedback.services import Author, step_feedback_give

    reader, _ = get_user_model().objects.get_or_create(username="canary-reader")
    step = trajectory.events.order_by("-position").first().position + 1
    step_feedback_give(
        trajectory=trajectory,
        step=step,
        author=Author(user=reader),
        rating="bad",
        first_wrong=True,
        correction=f"export GH_TOKEN={canaries.new()} && make test",
        mode="action",
        comment=f"The token {canaries.new()} works here.",
    )
    for note in StepNote.objects.filter(trajectory=trajectory):
        note_decide(note=note, moderator=moderator, approve=True)


def _fillings(world) -> dict[str, list[str]]:
    trajectories = world["trajectories"]
    first = trajectories[0]
    # Positions (0-based) and the page's step numbers (from 1: the feedback pages).
    positions = [e.position for e in first.events.order_by("position")]
    steps = [str(n) for n in sorted(set(positions) | {p + 1 for p in positions})]
    release = world["release"]
    return {
        "share_id": [t.share_id for t in trajectories],
        "step": steps,
        "index": ["0", "1"],
        "version": [str(release.version)],
        "path": list(release.files.values_list("path", flat=True)),
        "section": ["trajectories", "static", "releases"],
        "username": [first.owner.username],
        "sha256": ["0" * 64],
        "token": ["not-a-token"],
        "token_id": ["1"],
        "export_id": ["1"],
        "note_id": _note_ids(first),
    }


def _note_ids(trajectory) -> list[str]:
    from apps.feedback.models import StepNote

    return list(StepNote.objects.filter(trajectory=trajectory).values_list("public_id", flat=True))


def _urls(world) -> list[str]:
    fill = _fillings(world)
    shown = world["trajectories"][0]
    urls: list[str] = []
    unfilled: list[str] = []
    for raw in _walk(get_resolver().url_patterns):
        route = _route(raw)
        if any(route.startswith(prefix) for prefix in EXCUSED):
            continue
        names = re.findall(r"\{(\w+)\}", route)
        missing = [name for name in names if name not in fill]
        if missing:
            unfilled.append(f"{raw} (no filler for {', '.join(missing)})")
            continue
        combos = [{}]
        for name in names:
            values = fill[name] if name in ("share_id", "step", "path") else fill[name][:1]
            combos = [{**combo, name: value} for combo in combos for value in values]
        for combo in combos:
            path = "/" + route.format(**combo)
            for query in QUERIES.get(route, [""]):
                urls.append(
                    path
                    + query.format(
                        a=fill["share_id"][0],
                        b=fill["share_id"][-1],
                        agent=shown.shown_agent,
                        model=shown.shown_model,
                    )
                )
    assert not unfilled, "URL patterns the canary crawl cannot fill: " + "; ".join(unfilled)
    return urls


_LINK = re.compile(r"""(?:href|src|action|hx-get|data-url)=["']([^"'#]+)""")


def _crawl(client: Client, start: list[str], canaries: Canaries) -> tuple[int, list[str]]:
    seen: set[str] = set()
    queue = deque(start)
    leaks: list[str] = []
    while queue and len(seen) < PAGE_LIMIT:
        url = queue.popleft()
        if url in seen or url.startswith(("/admin", "/accounts/logout", "/static/")):
            continue
        seen.add(url)
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode("utf-8", errors="replace")
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        for secret in canaries.found(unescape(text) + headers):
            leaks.append(f"{url} ({response.status_code}) shows part of {secret[:8]}…")
        if url.endswith(".parquet"):
            continue
        for link in _LINK.findall(text):
            link = unescape(link)
            absolute = urljoin("http://testserver" + url, link)
            parts = urlsplit(absolute)
            if parts.netloc not in ("testserver", "127.0.0.1:8000") or parts.scheme not in (
                "http",
                "https",
            ):
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if target not in seen:
                queue.append(target)
    return len(seen), leaks


def test_no_canary_reaches_any_public_surface(canary_world, other_user):
    canaries: Canaries = canary_world["canaries"]
    planted: dict[str, set[str]] = canary_world["planted"]
    # Every string field of each file but the few that make it another file (see plant()):
    # tool inputs and results, metadata, and each format's own fields.
    assert all(len(paths) >= 3 for paths in planted.values()), planted
    claude = planted["claude_code_session.jsonl"]
    for field in ("toolUseResult", ".cwd", ".gitBranch", ".message.content.input."):
        assert any(field in path for path in claude), (field, sorted(claude))
    codex = planted["codex_rollout.jsonl"]
    for field in ("[turn_context].payload.", "[session_meta].payload.cwd", "arguments<json>"):
        assert any(field in path for path in codex), (field, sorted(codex))
    assert len(canaries.secrets) > len(SAMPLE_FILES) * (len(OWN_FIELDS) + 10)
    urls = _urls(canary_world)
    leaks: list[str] = []
    visited = 0
    signed_in = Client()
    signed_in.force_login(other_user)
    for client in (Client(), signed_in):
        count, found = _crawl(client, urls, canaries)
        visited += count
        leaks += found
        answered = corrected = 0
        for trajectory in canary_world["trajectories"]:
            for answer_format in ("openai", "sharegpt"):
                answer = client.post(
                    "/api/v1/retrieve",
                    data=json.dumps(
                        {
                            "instruction": f"{trajectory.title} token",
                            "k": 5,
                            "format": answer_format,
                        }
                    ),
                    content_type="application/json",
                )
                assert answer.status_code == 200, answer.content[:300]
                answered += len(answer.json()["examples"])
                corrected += sum(len(e["corrections"]) for e in answer.json()["examples"])
                for secret in canaries.found(answer.content.decode()):
                    leaks.append(f"POST /api/v1/retrieve shows part of {secret[:8]}…")
        assert answered, "retrieval gave no example to read"
        assert corrected, "retrieval served no correction to read"
    assert visited > 100, visited
    # The detector works: the owner, who sees the originals, is shown canaries.
    mine = Client()
    mine.force_login(canary_world["trajectories"][0].owner)
    page = mine.get(canary_world["trajectories"][0].get_absolute_url()).content.decode()
    assert canaries.found(unescape(page))
    # And the author of the feedback reads their own words, canaries included.
    from apps.feedback.models import StepNote

    note = StepNote.objects.filter(trajectory=canary_world["trajectories"][0]).first()
    author = Client()
    author.force_login(note.author)
    own = author.get(f"/api/v1/trajectories/{note.trajectory.share_id}/steps/{note.step}/feedback")
    assert canaries.found(own.content.decode())
    seen = signed_in.get(f"/t/{note.trajectory.share_id}/steps/{note.step}/feedback")
    assert seen.status_code == 200 and b"fb-note" in seen.content
    owner_email = canary_world["trajectories"][0].owner.email
    for message in mail.outbox:
        if owner_email and owner_email in message.to:
            continue
        for secret in canaries.found(message.subject + message.body):
            leaks.append(f"a mail to {message.to} shows part of {secret[:8]}…")
    release = canary_world["release"]
    folder: Path = canary_world["root"] / release.prefix
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert any(path.name == "README.md" for path in files)
    for path in files:
        if path.suffix == ".parquet":
            text = json.dumps(pq.read_table(path).to_pylist(), default=str)
        else:
            text = path.read_text(errors="replace")
        for secret in canaries.found(text):
            leaks.append(f"release file {path.relative_to(folder)} holds part of {secret[:8]}…")
    assert not leaks, "\n".join(sorted(set(leaks)))
