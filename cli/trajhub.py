"""trajhub: the TrajHub command-line client.

Standard library only (urllib, json, gzip, argparse, getpass), so it runs with a plain Python 3.11
without the server's dependencies: `python -m cli.trajhub share run.json`, or the `trajhub` script.
It speaks the REST API (DESIGN.md "Share API"): every API error is JSON
{"error": {"message", "where"}}, shown here as "error: <message> (at <where>)".

Exit codes: 0 everything done; 1 some records of a share were refused; 2 nothing stored, a usage
error, an HTTP error or a server that could not be reached.
"""

from __future__ import annotations

import argparse
import getpass
import gzip
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from cli import bundle, report, sessions

DEFAULT_URL = "http://127.0.0.1:8000"
API_PREFIX = "/api/v1"
CHUNK = 64 * 1024
# Uploads at least this big (after gzip) show a progress bar on stderr.
PROGRESS_THRESHOLD = 1024 * 1024
USER_AGENT = "trajhub-cli/0.1"
EXPORT_FORMATS = ("original", "openhands", "openai", "sharegpt", "atif")

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_FAILED = 2


def config_path() -> Path:
    """Where `trajhub login` keeps the token: $TRAJHUB_CONFIG, else
    $XDG_CONFIG_HOME/trajhub/config.json (default ~/.config/trajhub/config.json)."""
    explicit = os.environ.get("TRAJHUB_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "trajhub" / "config.json"


def read_config() -> dict[str, str]:
    """The stored {"url", "token"}; {} when there is none or it cannot be read."""
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, str)}


def write_config(data: dict[str, str]) -> Path:
    """Store the config readable by its owner only (mode 0600: it holds a token)."""
    path = config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.chmod(path, 0o600)  # an existing file keeps its old mode through os.open
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def _has_terminal() -> bool:
    try:
        with open("/dev/tty"):
            return True
    except OSError:
        return False


def ask_secret(prompt: str, what: str, option: str) -> str:
    """Ask for a secret on the terminal (not echoed); without one, read a line piped to stdin;
    with neither, say which option to use instead."""
    refused = CliError(f"no terminal to ask for the {what}: pass it with {option}")
    if _has_terminal():
        try:
            return getpass.getpass(prompt)
        except (EOFError, OSError):
            raise refused from None
    try:
        line = sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, ValueError):  # stdin closed, or not readable
        line = ""
    if not line.strip():
        raise refused
    return line.rstrip("\r\n")


class CliError(Exception):
    """A failure to report on stderr as "error: ..." with exit code 2."""

    def __init__(
        self, message: str, where: str = "", status: int | None = None, unreachable: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.status = status
        # The server could not be reached at all: no point trying the next file.
        self.unreachable = unreachable

    def __str__(self) -> str:
        return f"{self.message} (at {self.where})" if self.where else self.message


class Response:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            raise CliError(
                f"the server answered HTTP {self.status} with something that is not JSON: "
                f"{_snippet(self.body)}"
            ) from None


def _snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return (text[:200] + "…") if len(text) > 200 else (text or "(empty)")


def _api_error(status: int, body: bytes) -> CliError:
    """The API's {"error": {"message", "where"}} as a CliError; anything else, said plainly."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = data["error"]
        return CliError(
            str(error.get("message") or f"HTTP {status}"), str(error.get("where") or ""), status
        )
    return CliError(f"HTTP {status}: {_snippet(body)}", status=status)


class Progress:
    """A plain text bar on a stream: `label [#####-----]  45%  1.2/2.6 MB`."""

    WIDTH = 30

    def __init__(self, label: str, total: int, stream: TextIO) -> None:
        self.label = label
        self.total = max(total, 1)
        self.stream = stream
        self.sent = 0
        self.shown = -1

    def advance(self, count: int) -> None:
        self.sent = min(self.sent + count, self.total)
        percent = self.sent * 100 // self.total
        if percent == self.shown:
            return
        self.shown = percent
        filled = self.WIDTH * self.sent // self.total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        mb = 1024 * 1024
        self.stream.write(
            f"\r{self.label} [{bar}] {percent:3d}%  {self.sent / mb:.1f}/{self.total / mb:.1f} MB"
        )
        if self.sent >= self.total:
            self.stream.write("\n")
        self.stream.flush()


class Client:
    """The HTTP side: base URL, token, JSON errors turned into CliError."""

    def __init__(self, url: str, token: str = "", timeout: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def api_url(self, path: str, query: dict[str, str] | None = None) -> str:
        url = f"{self.url}{API_PREFIX}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        return url

    def request(
        self,
        method: str,
        url: str,
        *,
        body: bytes | Iterator[bytes] | None = None,
        headers: dict[str, str] | None = None,
        accept_errors: Sequence[int] = (),
    ) -> Response:
        all_headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.token:
            all_headers["Authorization"] = f"Token {self.token}"
        all_headers.update(headers or {})
        request = urllib.request.Request(url, data=body, headers=all_headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return Response(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            if exc.code in accept_errors:
                return Response(exc.code, dict(exc.headers.items()), payload)
            raise _api_error(exc.code, payload) from None
        except urllib.error.URLError as exc:
            raise CliError(f"could not reach {self.url} ({exc.reason})", unreachable=True) from None
        except (ConnectionError, TimeoutError) as exc:
            raise CliError(f"could not reach {self.url} ({exc})", unreachable=True) from None

    def json(self, method: str, path: str, payload: Any = None, **query: str) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        return self.request(
            method, self.api_url(path, query or None), body=body, headers=headers
        ).json()


# --- share ---------------------------------------------------------------------------------


def _form_fields(args: argparse.Namespace) -> dict[str, str]:
    fields = {"visibility": "public" if args.public else "private"}
    if args.agree_license:
        fields["license_agreed"] = "true"
    optional = {
        "polarity": args.polarity,
        "feedback_text": args.feedback,
        "title": args.title,
        "session_id": args.session_id,
        "format": args.format,
        "email": args.email,
    }
    fields.update({name: value for name, value in optional.items() if value})
    return fields


def multipart(
    fields: dict[str, str], filename: str, content: bytes, progress: Progress | None
) -> tuple[str, int, Iterator[bytes]]:
    """A multipart/form-data body streamed in chunks: (content type, length, chunks)."""
    boundary = f"trajhub-{uuid.uuid4().hex}"
    head = b"".join(
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
        for name, value in fields.items()
    )
    quoted = filename.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{quoted}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + len(content) + len(tail)

    def chunks() -> Iterator[bytes]:
        for part in (head, content, tail):
            view = memoryview(part)
            for start in range(0, len(view), CHUNK):
                chunk = bytes(view[start : start + CHUNK])
                yield chunk
                if progress is not None:
                    progress.advance(len(chunk))

    return f"multipart/form-data; boundary={boundary}", length, chunks()


def _read_input(name: str) -> tuple[str, bytes]:
    if name == "-":
        return "stdin.json", sys.stdin.buffer.read()
    path = Path(name)
    try:
        return path.name, path.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {name}: {exc.strerror or exc}") from None


def share_one(
    client: Client,
    name: str,
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    upload: tuple[str, bytes, str] | None = None,
) -> tuple[int, int, Any]:
    """Share one file (or a session's upload: file name, bytes, session token): (stored count,
    refused count, the API answer)."""
    filename, raw = _read_input(name) if upload is None else upload[:2]
    if upload is None and args.check:
        check_upload(client, name, filename, raw, args, err)
    # Already gzip (a .gz file) or a zip (a session folder) is sent as is: the server reads both.
    compressed = raw[:2] == b"\x1f\x8b" or raw[:4] == b"PK\x03\x04"
    content = raw if compressed else gzip.compress(raw, compresslevel=6)
    progress = None
    if not args.no_progress and len(content) >= PROGRESS_THRESHOLD:
        progress = Progress(f"uploading {filename}", 0, err)
    fields = _form_fields(args)
    if upload is not None and not args.session_id:
        fields["session_id"] = upload[2]
    content_type, length, chunks = multipart(fields, filename, content, progress)
    if progress is not None:
        progress.total = length
    response = client.request(
        "POST",
        client.api_url("/trajectories"),
        body=chunks,
        headers={"Content-Type": content_type, "Content-Length": str(length)},
        accept_errors=(400,),
    )
    answer = response.json()
    if not isinstance(answer, dict):
        raise CliError(f"unexpected answer from the server: {_snippet(response.body)}")
    stored = answer.get("trajectories") or []
    errors = answer.get("errors") or []
    if response.status == 400 and not errors:
        # A whole-body problem (not JSON, unknown format, a bad option): one error, no records.
        raise _api_error(400, response.body)
    # Refused records go to stderr as "FILE line N: message" (with --json too: stdout is the JSON).
    for error in errors:
        err.write(f"{name} {error.get('where') or 'body'}: {error.get('message')}\n")
    if args.json:
        return len(stored), len(errors), answer
    for item in stored:
        state = "new" if item.get("created") else "updated"
        out.write(
            f"{item['url']}  ({state}, {item.get('visibility')}, {item.get('num_events')} events)\n"
        )
        if item.get("password"):
            out.write(f"  deletion password: {item['password']}\n")
            out.write(
                "  shown once, save it: it is the only way to delete this anonymous share "
                f"(trajhub delete {item['id']} --password ...)\n"
            )
    return len(stored), len(errors), answer


def cmd_share(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.public and not args.agree_license:
        raise CliError(
            "a public share must agree to the site's licence: add --agree-license", "--public"
        )
    stored = refused = failed = 0
    answers: list[Any] = []
    for name, session in _share_targets(args):
        try:
            upload = None if session is None else session_upload(client, name, session, args, err)
            count, bad, answer = share_one(client, name, args, out, err, upload)
        except CliError as exc:
            if exc.unreachable:
                raise
            failed += 1
            err.write(f"error: {name}: {exc}\n")
            answers.append({"file": name, "error": {"message": exc.message, "where": exc.where}})
            continue
        stored += count
        refused += bad
        answers.append({"file": name, **answer})
    if args.json:
        # One file: the API's answer as it came; several: a list of them, each naming its file.
        if len(answers) == 1:
            answers[0].pop("file")
        out.write(json.dumps(answers if len(answers) != 1 else answers[0], indent=2) + "\n")
    if stored == 0:
        return EXIT_FAILED
    return EXIT_PARTIAL if (refused or failed) else EXIT_OK


# --- sessions found on this machine ----------------------------------------------------------


def session_key() -> str:
    """The key the agent's session ids are hashed under before they are sent (bundle.
    session_token), made on first use and kept in the config file (mode 0600)."""
    config = read_config()
    if not config.get("session_key"):
        config["session_key"] = secrets.token_hex(32)
        write_config(config)
    return config["session_key"]


def _share_targets(args: argparse.Namespace) -> list[tuple[str, sessions.Session | None]]:
    """What `share` was asked to send: files, session ids, or the newest session (--latest,
    of one agent with --claude-code, --codex, --gemini or --openhands)."""
    agent = args.agent
    if args.latest:
        if args.files:
            raise CliError("--latest shares the newest session: give no FILE with it")
        found = sessions.find(agent)
        if not found:
            where = f"{agent} " if agent else ""
            raise CliError(f"no {where}sessions found on this machine (see `trajhub sessions`)")
        return [(str(found[0].path), found[0])]
    if not args.files:
        raise CliError("give a FILE, a session id (see `trajhub sessions`) or --latest")
    targets: list[tuple[str, sessions.Session | None]] = []
    for name in args.files:
        path = Path(name).expanduser()
        if name == "-" or path.is_file() and not name.endswith((".jsonl", ".json")):
            targets.append((name, None))
        elif path.exists():
            targets.append((name, sessions.from_path(path)))
        else:
            session = sessions.by_id(name)
            if session is None:
                raise CliError(f"{name}: no such file, nor a session id of this machine", name)
            targets.append((str(session.path), session))
    return targets


def session_upload(
    client: Client,
    name: str,
    session: sessions.Session,
    args: argparse.Namespace,
    err: TextIO,
) -> tuple[str, bytes, str]:
    """A session's upload (bundle.upload), checked by the site's preview and confirmed by the
    sharer before it is sent: (file name, bytes, session token)."""
    try:
        filename, data = bundle.upload(
            session, without_context=args.without_context, exclude=args.exclude or []
        )
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read the session {name}: {exc}") from None
    check_upload(client, name, filename, data, args, err)
    if not client.token and not args.email:
        remembered = read_config().get("email", "")
        if remembered:
            args.email = remembered
            err.write(f"anonymous share: using the email of your last share ({remembered})\n")
        else:
            err.write(
                "anonymous share: without --email, sharing this session again later makes a "
                "new share instead of updating this one\n"
            )
    elif not client.token and args.email:
        config = read_config()
        if config.get("email") != args.email:
            write_config({**config, "email": args.email})
    return filename, data, bundle.session_token(session_key(), session)


def check_upload(
    client: Client, name: str, filename: str, data: bytes, args: argparse.Namespace, err: TextIO
) -> None:
    """Send the upload to the preview (which stores nothing), show what it found, and ask to go
    on (--yes: don't ask)."""
    compressed = data[:2] == b"\x1f\x8b" or data[:4] == b"PK\x03\x04"
    content = data if compressed else gzip.compress(data, compresslevel=6)
    content_type, length, chunks = multipart({}, filename, content, None)
    query = {"format": args.format} if args.format else None
    response = client.request(
        "POST",
        client.api_url("/trajectories/preview", query),
        body=b"".join(chunks),
        headers={"Content-Type": content_type, "Content-Length": str(length)},
    )
    answer = response.json()
    if not isinstance(answer, dict):
        raise CliError(f"unexpected answer from the server: {_snippet(response.body)}")
    err.write(report.preview_text(answer, name))
    if args.yes:
        return
    if not _has_terminal():
        raise CliError("no terminal to confirm the share: add --yes to share without asking")
    with open("/dev/tty", encoding="utf-8") as terminal:
        err.write("Share it? [y/N] ")
        err.flush()
        reply = terminal.readline().strip().lower()
    if reply not in ("y", "yes"):
        raise CliError("not shared")


def cmd_sessions(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    found = sessions.find(args.agent)[: max(args.limit, 0)]
    if args.json:
        rows = [
            {
                "id": session.id,
                "agent": session.agent,
                "path": str(session.path),
                "project": session.project,
                "first_prompt": session.first_prompt,
                "modified": session.time,
                "size": session.size,
            }
            for session in found
        ]
        out.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    if not found:
        err.write(
            "no sessions found: looked in "
            + ", ".join(
                str(folder)
                for folder in (
                    sessions.claude_dir() / "projects",
                    sessions.codex_dir() / "sessions",
                    sessions.gemini_dir() / "tmp",
                    sessions.openhands_dir(),
                )
            )
            + "\n"
        )
        return EXIT_OK
    out.write(report.sessions_table(found))
    return EXIT_OK


# --- list, show, download, delete, visibility ----------------------------------------------


def _row(item: dict[str, Any]) -> str:
    title = (item.get("title") or "").replace("\n", " ")[:60]
    return (
        f"{item['id']}  {item.get('visibility', ''):7} {item.get('review_state', ''):8} "
        f"{item.get('num_events', 0):>6} ev  {item.get('agent') or '-'}  "
        f"{item.get('model') or '-'}  {title}"
    )


def cmd_list(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.limit < 1:
        raise CliError("--limit must be at least 1", "--limit")
    query: dict[str, str] = {"limit": str(min(args.limit, 200))}
    if args.mine:
        query["owner"] = "me"
    for name in ("q", "agent", "model"):
        value = getattr(args, name)
        if value:
            query[name] = value
    items: list[dict[str, Any]] = []
    url: str | None = client.api_url("/trajectories", query)
    while url and len(items) < args.limit:
        page = client.request("GET", url).json()
        items.extend(page.get("results") or [])
        following = page.get("next")
        # Follow the cursor on our own base URL (the server may know itself by another name).
        url = (
            client.api_url("/trajectories") + "?" + urllib.parse.urlsplit(following).query
            if following
            else None
        )
    items = items[: args.limit]
    if args.json:
        out.write(json.dumps(items, indent=2) + "\n")
    else:
        for item in items:
            out.write(_row(item) + "\n")
        if not items:
            err.write("no trajectories\n")
    return EXIT_OK


def _check_id(share_id: str) -> str:
    share_id = share_id.strip().lower()
    if share_id.startswith(("http://", "https://")):
        # A pasted page link works too: .../t/<id>/
        parts = [part for part in urllib.parse.urlsplit(share_id).path.split("/") if part]
        share_id = parts[-1] if parts else ""
    if len(share_id) != 64 or any(c not in "0123456789abcdef" for c in share_id):
        raise CliError("a trajectory id is 64 hexadecimal characters", "ID")
    return share_id


def cmd_show(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    item = client.json("GET", f"/trajectories/{_check_id(args.id)}")
    if args.json:
        out.write(json.dumps(item, indent=2) + "\n")
        return EXIT_OK
    for key, value in item.items():
        if value not in (None, ""):
            out.write(f"{key + ':':16} {value}\n")
    return EXIT_OK


def cmd_download(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    share_id = _check_id(args.id)
    url = client.api_url(f"/trajectories/{share_id}/download", {"format": args.format})
    headers = {"Accept": "*/*"}
    password = args.password
    if password is None and args.format == "original" and not client.token:
        # Anonymous: the original opens to the share's password holder.
        password = ask_secret("deletion password: ", "deletion password", "--password")
    if password:
        headers["X-Deletion-Password"] = password
    response = client.request("GET", url, headers=headers)
    if args.output and args.output != "-":
        try:
            Path(args.output).write_bytes(response.body)
        except OSError as exc:
            raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        err.write(f"wrote {len(response.body):,} bytes to {args.output}\n")
    else:
        buffer = getattr(out, "buffer", None)
        if buffer is not None:
            buffer.write(response.body)
            buffer.flush()
        else:
            out.write(response.body.decode("utf-8", "replace"))
    return EXIT_OK


def cmd_delete(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    share_id = _check_id(args.id)
    password = args.password
    if password is None and not client.token:
        # Anonymous: the deletion password the share printed is the only way in.
        password = ask_secret("deletion password: ", "deletion password", "--password")
    headers = {"X-Deletion-Password": password} if password else {}
    client.request("DELETE", client.api_url(f"/trajectories/{share_id}"), headers=headers)
    out.write(f"deleted {share_id}\n")
    return EXIT_OK


def cmd_login(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Store a token pasted from the site's API tokens page (checked against the site first)."""
    token = (args.token_value or args.token or "").strip()
    if not token:
        token = ask_secret("API token (from your account's API tokens page): ", "token", "--token")
        token = token.strip()
    if not token:
        raise CliError("no token given")
    checked = Client(client.url, token, timeout=client.timeout)
    try:
        checked.json("GET", "/trajectories", owner="me", limit="1")
    except CliError as exc:
        if exc.status == 401:
            raise CliError(
                f"{client.url} refused this token (revoked, or from another site)"
            ) from None
        raise
    path = write_config({"url": client.url, "token": token})
    out.write(f"token stored in {path} for {client.url}\n")
    return EXIT_OK


def cmd_logout(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path = config_path()
    try:
        path.unlink()
    except FileNotFoundError:
        out.write("no stored token\n")
        return EXIT_OK
    except OSError as exc:
        raise CliError(f"cannot remove {path}: {exc.strerror or exc}") from None
    out.write(f"removed {path}\n")
    return EXIT_OK


def cmd_visibility(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    payload: dict[str, Any] = {"visibility": args.visibility}
    if args.agree_license:
        payload["license_agreed"] = True
    item = client.json("PATCH", f"/trajectories/{_check_id(args.id)}", payload)
    if args.json:
        out.write(json.dumps(item, indent=2) + "\n")
    else:
        out.write(f"{item['id']} is now {item['visibility']} ({item['review_state']})\n")
    return EXIT_OK


# --- command line ----------------------------------------------------------------------------


# --- retrieve --------------------------------------------------------------------------------


def retrieve(
    instruction: str,
    *,
    observation: str = "",
    history: Sequence[str] = (),
    k: int = 5,
    format: str = "text",
    model_based: bool = False,
    url: str = "",
    token: str = "",
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Demonstrations for an agent's next step from a TrajHub site (POST /api/v1/retrieve).

    Returns {"examples": [...], "prompt": str}; put `prompt` into the agent's prompt. `url` and
    `token` default to $TRAJHUB_URL and $TRAJHUB_TOKEN (a token is needed for `model_based`).
    Raises CliError with the server's message on any error.
    """
    client = Client(
        url or os.environ.get("TRAJHUB_URL", DEFAULT_URL),
        token or os.environ.get("TRAJHUB_TOKEN", ""),
        timeout=timeout,
    )
    body: dict[str, Any] = {"instruction": instruction, "k": k, "format": format}
    if observation:
        body["observation"] = observation
    if history:
        body["history"] = list(history)
    if model_based:
        body["model_based"] = True
    answer: dict[str, Any] = client.json("POST", "/retrieve", body)
    return answer


def cmd_retrieve(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    observation = args.observation or ""
    if observation == "-":
        observation = sys.stdin.read()
    answer = retrieve(
        args.instruction,
        observation=observation,
        history=args.history or [],
        k=args.k,
        format=args.format,
        model_based=args.model_based,
        url=client.url,
        token=client.token,
        timeout=client.timeout,
    )
    if args.json:
        out.write(json.dumps(answer, indent=2) + "\n")
    elif args.prompt:
        out.write(answer["prompt"] + "\n")
    else:
        for example in answer["examples"]:
            start, end = example["window"]
            out.write(
                f"{example['score']:8.3f}  {example['retriever']:<16} {example['instruction']}\n"
                f"          {example['url']} (events {start}-{end})\n"
            )
        if not answer["examples"]:
            err.write("no demonstrations found\n")
    return EXIT_OK


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    # None: not given; main() then falls back to the environment, then the config file.
    parser.add_argument(
        "--url",
        default=default(None),
        help=f"the site (env TRAJHUB_URL, then `trajhub login`'s; default {DEFAULT_URL})",
    )
    parser.add_argument(
        "--token",
        default=default(None),
        help="an API token from your account page (env TRAJHUB_TOKEN, then the one "
        "`trajhub login` stored); none: anonymous",
    )
    parser.add_argument(
        "--timeout", type=float, default=default(300.0), help="seconds (default 300)"
    )
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="print the API's JSON answer"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trajhub",
        description="Share, list, download and delete agent trajectories on a TrajHub site.",
    )
    _add_global_options(parser, suppress=False)
    # The same options after the command name too (`trajhub share x.json --json`); there they
    # default to "not given", so they do not undo what came before the command.
    common = argparse.ArgumentParser(add_help=False)
    _add_global_options(common, suppress=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    share = commands.add_parser(
        "share", parents=[common], help="share trajectory files (any supported format)"
    )
    share.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="a file (.gz too; - for stdin), or a session id from `trajhub sessions`",
    )
    share.add_argument("--latest", action="store_true", help="the newest session on this machine")
    for flag, agent in (
        ("--claude-code", "claude-code"),
        ("--codex", "codex"),
        ("--gemini", "gemini"),
        ("--openhands", "openhands"),
    ):
        share.add_argument(
            flag, dest="agent", action="store_const", const=agent, help=f"with --latest: {agent}'s"
        )
    share.add_argument(
        "--without-context",
        action="store_true",
        help="sessions: leave out what the agent added as context (CLAUDE.md, AGENTS.md, ...)",
    )
    share.add_argument(
        "--exclude",
        action="append",
        metavar="PATH",
        help="sessions: leave out what a file's contents left in the session (repeatable)",
    )
    share.add_argument("--check", action="store_true", help="files: show the preview first")
    share.add_argument("-y", "--yes", action="store_true", help="share without asking to confirm")
    share.add_argument("--public", action="store_true", help="public (default private)")
    share.add_argument("--agree-license", action="store_true", help="agree to the site's licence")
    share.add_argument("--polarity", choices=("positive", "negative", "none"))
    share.add_argument("--feedback", help="what went well or badly")
    share.add_argument("--title")
    share.add_argument("--session-id", help="a later share with the same id updates it")
    share.add_argument("--format", help="force a format instead of detecting it")
    share.add_argument("--email", help="anonymous shares: a contact address, never shown")
    share.add_argument("--no-progress", action="store_true", help="no progress bar")
    share.set_defaults(handler=cmd_share)

    found = commands.add_parser(
        "sessions", parents=[common], help="the agent sessions on this machine, newest first"
    )
    found.add_argument("--agent", choices=sessions.AGENTS, help="only this agent's")
    found.add_argument("--limit", type=int, default=30, help="at most this many (default 30)")
    found.set_defaults(handler=cmd_sessions)

    listing = commands.add_parser(
        "list", parents=[common], help="list public trajectories, or your own"
    )
    listing.add_argument("--mine", action="store_true", help="your own, of every state")
    listing.add_argument("--q", help="full-text search")
    listing.add_argument("--agent")
    listing.add_argument("--model")
    listing.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    listing.set_defaults(handler=cmd_list)

    show = commands.add_parser("show", parents=[common], help="a trajectory's details")
    show.add_argument("id", metavar="ID")
    show.set_defaults(handler=cmd_show)

    download = commands.add_parser("download", parents=[common], help="download a trajectory")
    download.add_argument("id", metavar="ID")
    download.add_argument("--format", choices=EXPORT_FORMATS, default="openhands")
    download.add_argument("-o", "--output", metavar="FILE", help="write here (default stdout)")
    download.add_argument(
        "--password", help="an anonymous share's deletion password (asked for the original)"
    )
    download.set_defaults(handler=cmd_download)

    delete = commands.add_parser("delete", parents=[common], help="delete a trajectory")
    delete.add_argument("id", metavar="ID")
    delete.add_argument("--password", help="the deletion password of an anonymous share")
    delete.set_defaults(handler=cmd_delete)

    visibility = commands.add_parser(
        "visibility", parents=[common], help="make a trajectory public or private"
    )
    visibility.add_argument("id", metavar="ID")
    visibility.add_argument("visibility", choices=("public", "private"))
    visibility.add_argument("--agree-license", action="store_true")
    visibility.set_defaults(handler=cmd_visibility)

    login = commands.add_parser(
        "login", parents=[common], help="store an API token (pasted from the tokens page)"
    )
    login.add_argument(
        "token_value", nargs="?", metavar="TOKEN", help="the token (default: asked for)"
    )
    login.set_defaults(handler=cmd_login)

    logout = commands.add_parser("logout", parents=[common], help="forget the stored token")
    logout.set_defaults(handler=cmd_logout)

    retrieving = commands.add_parser(
        "retrieve",
        parents=[common],
        help="demonstrations for an agent's task (in-context learning)",
    )
    retrieving.add_argument("instruction", help="the agent's task")
    retrieving.add_argument("--observation", help="what the agent sees now (- reads stdin)")
    retrieving.add_argument("--history", action="append", help="an earlier step (repeatable)")
    retrieving.add_argument("-k", type=int, default=5, help="how many (default 5)")
    retrieving.add_argument("--format", choices=("text", "openai", "sharegpt"), default="text")
    retrieving.add_argument(
        "--model-based", action="store_true", help="let the site's LLM write the query (token)"
    )
    retrieving.add_argument("--prompt", action="store_true", help="print only the prompt block")
    retrieving.set_defaults(handler=cmd_retrieve)
    return parser


# Options whose value is a secret the site issued: it may begin with "-" (a deletion password
# issued before passwords avoided it; token_urlsafe's alphabet has "-").
SECRET_OPTIONS = ("--password", "--token")


def _secret_values_joined(argv: Sequence[str], known: set[str]) -> list[str]:
    """`--password -abc` as `--password=-abc`, which argparse reads as the option's value
    (given apart, argparse takes `-abc` for an option and says the value is missing)."""
    joined: list[str] = []
    items = list(argv)
    index = 0
    while index < len(items):
        item = items[index]
        following = items[index + 1] if index + 1 < len(items) else None
        if (
            item in SECRET_OPTIONS
            and following is not None
            and following.startswith("-")
            and following.split("=", 1)[0] not in known
        ):
            joined.append(f"{item}={following}")
            index += 2
            continue
        joined.append(item)
        index += 1
    return joined


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    # argparse has no public list of a parser's options; its subcommands' are in their parsers.
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    if argv is None:
        argv = sys.argv[1:]
    argv = _secret_values_joined(argv, _option_strings(parser))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help exits 0
        return int(exc.code) if isinstance(exc.code, int) else EXIT_FAILED
    url, token = _site_and_token(args)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        err.write(f"error: --url must start with http:// or https:// (got {url!r})\n")
        return EXIT_FAILED
    client = Client(url, token, timeout=args.timeout)
    try:
        code: int = args.handler(client, args, out, err)
    except CliError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return EXIT_FAILED
    except Exception as exc:  # never a traceback: one sentence, and the exit code
        err.write(f"error: something unexpected went wrong ({type(exc).__name__}: {exc})\n")
        return EXIT_FAILED
    return code


def _site_and_token(args: argparse.Namespace) -> tuple[str, str]:
    """--url / --token, else $TRAJHUB_URL / $TRAJHUB_TOKEN, else what `trajhub login` stored
    (its token only for the site it was stored for)."""
    config = read_config()
    url = args.url or os.environ.get("TRAJHUB_URL") or config.get("url") or DEFAULT_URL
    token = args.token or os.environ.get("TRAJHUB_TOKEN") or ""
    if not token and config.get("token") and config.get("url", "").rstrip("/") == url.rstrip("/"):
        token = config["token"]
    if args.command == "logout":
        token = ""
    return url, token


if __name__ == "__main__":
    sys.exit(main())
