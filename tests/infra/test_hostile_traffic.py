"""Hostile traffic against the real gunicorn (docker/gunicorn.conf.py, two sync workers) on
PostgreSQL and Redis, as the attack of issue 8 sent it: chunked bodies, over-long query strings,
and both workers killed in the middle of a 45 MB upload.

The stack is the one tests/infra/test_processes.py starts (its helpers), with a database of its
own; it shares that module's Redis database, which is safe because pytest runs the two modules
one after the other.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import orjson
import pytest

from tests.infra.test_processes import ROOT, _executable, _get, running_stack

pytestmark = pytest.mark.services


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    with running_stack(
        tmp_path_factory.mktemp("hostile"), names=("web",), database_suffix="hostile"
    ) as stack:
        yield stack


def events(count: int, *, text: str = "README.md\n", task: str = "list the files") -> list[dict]:
    out: list[dict] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": task}},
    ]
    for step in range(count):
        out.append(
            {
                "id": 2 * step + 1,
                "source": "agent",
                "action": "run",
                "message": f"Running ls {step}",
                "args": {"command": f"ls {step}"},
            }
        )
        out.append(
            {
                "id": 2 * step + 2,
                "source": "agent",
                "cause": 2 * step + 1,
                "observation": "run",
                "content": text,
                "extras": {"command": f"ls {step}"},
            }
        )
    return out


def request(stack, method: str, path: str, body=None, headers=None, timeout: float = 60):
    """(status, headers, body) of one request on its own connection; `body` may be an iterable
    of chunks, which http.client sends with Transfer-Encoding: chunked."""
    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=timeout)
    try:
        headers = headers or {}
        chunked = headers.get("Transfer-Encoding") == "chunked"
        conn.request(method, path, body=body, headers=headers, encode_chunked=chunked)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def chunks(data: bytes, size: int = 1000):
    for start in range(0, len(data), size):
        yield data[start : start + size]


def count(stack, share_id: str) -> int | None:
    rows = stack.query(
        "SELECT num_events FROM trajectories_trajectory WHERE share_id = %s", share_id
    )
    return rows[0][0] if rows else None


# --- Chunked bodies ---------------------------------------------------------------------------


def test_a_chunked_json_share_is_read_and_stored(web):
    body = orjson.dumps(events(3, task="chunked json"))
    status, headers, answer = request(
        web,
        "POST",
        "/api/v1/trajectories",
        body=chunks(body),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    assert status == 201, answer[:300]
    share_id = json.loads(answer)["trajectories"][0]["id"]
    assert count(web, share_id) == 7


def test_a_chunked_drop_in_share_is_read_and_stored(web):
    payload = {
        "version": "1.0",
        "email": "",
        "polarity": "positive",
        "feedback": "positive",
        "permissions": "private",
        "trajectory": events(2, task="chunked drop-in"),
    }
    status, _, answer = request(
        web,
        "POST",
        "/share_od_trajectory",
        body=chunks(orjson.dumps(payload), 300),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    assert status == 200, answer[:300]
    assert count(web, json.loads(answer)["body"]["feedback_id"]) == 5


def test_a_chunked_multipart_upload_is_read_and_stored(web):
    boundary = "trajhub-boundary"
    file = orjson.dumps(events(4, task="chunked multipart"))
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nchunked\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="t.json"\r\n'
            "Content-Type: application/json\r\n\r\n"
        ).encode()
        + file
        + f"\r\n--{boundary}--\r\n".encode()
    )
    status, _, answer = request(
        web,
        "POST",
        "/api/v1/trajectories",
        body=chunks(body, 700),
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Transfer-Encoding": "chunked",
        },
    )
    assert status == 201, answer[:300]
    assert count(web, json.loads(answer)["trajectories"][0]["id"]) == 9


def test_a_chunked_body_over_the_limit_is_a_json_413_and_stores_nothing(web):
    before = web.query("SELECT count(*) FROM trajectories_trajectory")[0][0]
    block = b" " * (1024 * 1024)
    status, _, answer = request(
        web,
        "POST",
        "/api/v1/trajectories",
        body=(block for _ in range(52)),  # 52 MB, over the 50 MB limit, never announced
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )
    assert status == 413
    assert "over the limit" in json.loads(answer)["error"]["message"]
    assert web.query("SELECT count(*) FROM trajectories_trajectory")[0][0] == before
    assert _get(web.url("/healthz"))[0] == 200


# --- Long query strings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, shape",
    [("/api/v1/trajectories?title=", "json"), ("/api/share?x=", "envelope")],
)
def test_a_long_query_string_is_a_json_414_from_gunicorn(web, path, shape):
    status, headers, answer = request(
        web,
        "POST",
        path + "x" * 100_000,
        body=b"[]",
        headers={"Content-Type": "application/json"},
    )
    assert status == 414
    assert headers["Content-Type"] == "application/json"
    body = json.loads(answer)
    if shape == "json":
        assert "query string" in body["error"]["message"]
    else:
        assert body["statusCode"] == 414
    assert _get(web.url("/healthz"))[0] == 200


def raw_request(stack, data: bytes) -> tuple[int, dict, bytes]:
    """Send raw bytes straight to gunicorn; the status, headers and body of its answer."""
    import socket

    with socket.create_connection(("127.0.0.1", stack.port), timeout=10) as sock:
        sock.sendall(data)
        received = []
        while chunk := sock.recv(65536):
            received.append(chunk)
    head, _, body = b"".join(received).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(
    "data, status, where",
    [
        # Over gunicorn's header limit (64 KB, as nginx's in front).
        (
            b"GET /api/v1/trajectories HTTP/1.1\r\nHost: x\r\nCookie: a=" + b"b" * 70_000,
            431,
            "headers",
        ),
        (b"GET /api/v1/trajectories HTTP/1.1\r\nHost: x\r\nBad Header: 1", 400, "headers"),
        (b"GET /api/v1/trajectories HTTP/9.9", 400, "request line"),
        (b"BREW\x01 /api/share HTTP/1.1\r\nHost: x", 400, "request line"),
    ],
    ids=["header-too-large", "bad-header", "bad-version", "bad-method"],
)
def test_what_gunicorn_refuses_itself_is_json_for_both_readers(web, data, status, where):
    """Refused before Django sees it, straight from gunicorn (no nginx in front): still a body
    that API clients and OpenHands both read, never gunicorn's HTML page."""
    got, headers, body = raw_request(web, data + b"\r\n\r\n")
    assert got == status, body[:300]
    assert headers["Content-Type"] == "application/json"
    answer = json.loads(body)
    assert answer["error"]["where"] == where and answer["error"]["message"]
    assert answer["statusCode"] == status and answer["body"]["message"]
    assert b"<html" not in body
    assert _get(web.url("/healthz"))[0] == 200


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/v1/trajectories", b"zz\r\n"),  # not a chunk size
        ("/api/share", b"zz\r\n"),
        ("/api/v1/trajectories", b"ffff\r\n[{}"),  # the connection closes mid-chunk
    ],
    ids=["api-bad-size", "drop-in-bad-size", "api-cut-short"],
)
def test_a_malformed_chunked_body_is_a_400_in_the_callers_shape(web, path, body):
    """Found writing the gunicorn refusals: gunicorn de-chunks lazily, so a bad chunk raised in
    the middle of Django and answered 500."""
    import socket

    with socket.create_connection(("127.0.0.1", web.port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
            + body
        )
        sock.shutdown(socket.SHUT_WR)
        received = []
        while chunk := sock.recv(65536):
            received.append(chunk)
    head, _, answer = b"".join(received).partition(b"\r\n\r\n")
    assert head.split()[1] == b"400", head + answer[:300]
    assert b"application/json" in head
    if b"Transfer-Encoding: chunked" in head:  # Django's answer, chunked by gunicorn
        answer = answer.split(b"\r\n", 1)[1].rsplit(b"\r\n0\r\n", 1)[0]
    decoded = json.loads(answer)
    if path == "/api/share":
        assert decoded["statusCode"] == 400 and "chunked" in decoded["body"]["message"]
    else:
        assert decoded["error"]["where"] == "body" and "chunked" in decoded["error"]["message"]
    assert _get(web.url("/healthz"))[0] == 200


def test_a_20_kb_header_reaches_the_site(web):
    status, headers, _ = request(
        web, "GET", "/api/v1/trajectories", headers={"Cookie": "x=" + "a" * 20_000}
    )
    assert status == 200 and headers["Content-Type"] == "application/json"


# --- A crash in the middle of an upload -------------------------------------------------------


def worker_pids(stack) -> list[int]:
    master = stack.processes["web"].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def raw_files(stack) -> list[Path]:
    return sorted((stack.root / "var" / "media" / "private" / "raw").rglob("*.zst"))


def manage(stack, *args: str) -> str:
    done = subprocess.run(
        [_executable("python"), "manage.py", *args],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_killing_both_workers_mid_upload_leaves_nothing_the_sweep_does_not_remove(web):
    # A committed share: its raw copy must survive every sweep.
    status, _, answer = request(
        web,
        "POST",
        "/api/v1/trajectories",
        body=orjson.dumps(events(2, task="kept")),
        headers={"Content-Type": "application/json"},
    )
    assert status == 201
    kept = raw_files(web)
    assert kept

    # 45 MB: parsing, the raw copy, then a long COPY of the events and the search vector.
    rows = web.query("SELECT count(*) FROM trajectories_trajectory")
    big = orjson.dumps(events(15_000, text="x" * 2850, task="killed"))
    assert 44e6 < len(big) < 50e6
    outcome: dict = {}

    def upload():
        try:
            outcome["answer"] = request(
                web,
                "POST",
                "/api/v1/trajectories",
                body=big,
                headers={"Content-Type": "application/json"},
                timeout=120,
            )
        except (OSError, http.client.HTTPException) as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=upload)
    thread.start()
    deadline = time.monotonic() + 90
    while len(raw_files(web)) == len(kept):
        assert time.monotonic() < deadline, "the upload never wrote its raw copy"
        assert thread.is_alive(), f"the upload finished before it could be killed: {outcome}"
        time.sleep(0.01)
    for pid in worker_pids(web):
        os.kill(pid, signal.SIGKILL)
    thread.join(timeout=30)
    assert "answer" not in outcome or outcome["answer"][0] != 201, outcome

    # No row, but the raw copy is in storage: what the attack found.
    assert web.query("SELECT count(*) FROM trajectories_trajectory") == rows
    orphans = sorted(set(raw_files(web)) - set(kept))
    assert len(orphans) == 1
    web.wait_for("gunicorn to start new workers", lambda: _get(web.url("/healthz"))[0] == 200)

    # Within the grace period (a transaction might still commit), the sweep keeps it ...
    assert "deleted 0 " in manage(web, "sweep_orphan_files")
    assert orphans[0].exists()
    # ... after it, the sweep removes it, and only it.
    assert "deleted 1 " in manage(web, "sweep_orphan_files", "--older-than", "0")
    assert raw_files(web) == kept
