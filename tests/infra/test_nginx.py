"""docker/nginx.conf, proven as the other processes are: Debian's nginx runs that file (rendered
for loopback ports, as a non-daemon child with its own prefix and temporary folders) in front of
the real gunicorn (docker/gunicorn.conf.py, two sync workers, TRAJHUB_TRUSTED_PROXIES=1 as in
docker/compose.yaml) on PostgreSQL and Redis.

What the attack of issue 8 found: four sockets that sent `POST /api/v1/trajectories` headers
with `Content-Length: 100000` and stalled made /healthz time out, each holding a sync worker.
Through nginx, N stalled uploads do not delay /healthz or a page, and nginx drops them after its
client_body_timeout; its own errors answer in the site's shapes.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import orjson
import pytest
import yaml

from tests.conftest import skip_or_fail
from tests.infra.test_processes import COMPOSE, ROOT, _free_port, running_stack

pytestmark = pytest.mark.services

NGINX_CONF = ROOT / "docker" / "nginx.conf"
STALLED = 8  # four took the site down; twice as many through nginx
BOUND_SECONDS = 2.0  # /healthz and a page answer within this while they stall


def nginx_binary() -> str:
    found = shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(path).exists()),
        None,
    )
    if not found:
        skip_or_fail("nginx is not installed (apt-get install nginx-light)")
    return found


def render(root: Path, *, upstream: str, port: int, replace: dict[str, str] | None = None) -> Path:
    """docker/nginx.conf for loopback: the upstream and the listening port on 127.0.0.1, the pid
    file and every temporary folder under `root`. `replace` swaps further lines (a test's
    shorter timeout); each line replaced must exist, so the file cannot drift from the test."""
    text = NGINX_CONF.read_text()
    built = subprocess.run([nginx_binary(), "-V"], capture_output=True, text=True).stderr
    temp = [f"client_body_temp_path {root}/body;", f"proxy_temp_path {root}/proxy;"]
    for module in ("fastcgi", "uwsgi", "scgi"):  # compiled in: nginx creates their folders too
        if f"--without-http_{module}_module" not in built:
            temp.append(f"{module}_temp_path {root}/{module};")
    swaps = {
        "server web:8000;": f"server {upstream};",
        "listen 8080;": f"listen 127.0.0.1:{port};",
        "pid /tmp/nginx.pid;": f"pid {root}/nginx.pid;",
        "http {\n": "http {\n    " + "\n    ".join(temp) + "\n",
        **(replace or {}),
    }
    for old, new in swaps.items():
        assert text.count(old) == 1, f"docker/nginx.conf no longer has exactly one {old!r}"
        text = text.replace(old, new)
    path = root / "nginx.conf"
    path.write_text(text)
    return path


class Nginx:
    def __init__(self, root: Path, port: int, process: subprocess.Popen, log: Path):
        self.root, self.port, self.process, self.log_path = root, port, process, log

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


def start_nginx(root: Path, *, upstream: str, replace: dict[str, str] | None = None) -> Nginx:
    root.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    conf = render(root, upstream=upstream, port=port, replace=replace)
    binary = nginx_binary()
    check = subprocess.run([binary, "-t", "-p", str(root), "-c", str(conf)], capture_output=True)
    assert check.returncode == 0, check.stderr.decode()
    log = root / "nginx.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [binary, "-p", str(root), "-c", str(conf), "-g", "daemon off;"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    nginx = Nginx(root, port, process, log)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return nginx
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                nginx.stop()
                pytest.fail(f"nginx did not start:\n{nginx.log()}")
            time.sleep(0.05)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """gunicorn (two sync workers) behind nginx, as in docker/compose.yaml."""
    root = tmp_path_factory.mktemp("nginx")
    with running_stack(
        root,
        names=("web",),
        database_suffix="nginx",
        env={"TRAJHUB_TRUSTED_PROXIES": "1", "TRAJHUB_ANON_SHARES_PER_HOUR": "2"},
    ) as stack:
        nginx = start_nginx(root / "proxy", upstream=f"127.0.0.1:{stack.port}")
        try:
            yield stack, nginx
        finally:
            nginx.stop()


def call(port: int, method: str, path: str, *, body=None, headers=None, source="127.0.0.1"):
    """(status, headers, body, seconds) of one request from `source` (any 127/8 address)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    started = time.monotonic()
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data, time.monotonic() - started
    finally:
        conn.close()


def stall(port: int, count: int) -> list[socket.socket]:
    """`count` uploads that send their headers and 10 bytes of an announced 100,000, then stall."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(
            b"POST /api/v1/trajectories HTTP/1.1\r\nHost: localhost\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{"id": 1,'
        )
        sockets.append(sock)
    return sockets


def share(port: int, task: str, *, headers: dict | None = None, source: str = "127.0.0.1"):
    events = [{"id": 0, "source": "user", "action": "message", "args": {"content": task}}]
    return call(
        port,
        "POST",
        "/api/v1/trajectories",
        body=orjson.dumps(events),
        headers={"Content-Type": "application/json", **(headers or {})},
        source=source,
    )


def test_compose_puts_nginx_in_front_of_gunicorn():
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in proxy["volumes"]
    assert proxy["depends_on"]["web"] == {"condition": "service_healthy"}
    assert any(str(port).endswith(":8080") for port in proxy["ports"])
    # Only the proxy is published; gunicorn trusts it as one proxy for client addresses.
    assert "ports" not in services["web"]
    assert services["web"]["environment"]["TRAJHUB_TRUSTED_PROXIES"] == "1"
    conf = NGINX_CONF.read_text()
    limit = int(re.search(r"client_max_body_size (\d+)m;", conf).group(1))
    assert limit * 1024 * 1024 > 50 * 1024 * 1024  # above the site's own request limit
    for directive in ("client_body_timeout", "client_header_timeout", "proxy_read_timeout"):
        assert re.search(rf"^\s*{directive} \d+s;", conf, re.M), directive
    assert "nginx-light" in (ROOT / ".ci" / "run").read_text()


def test_stalled_uploads_do_not_delay_healthz_or_a_page(site):
    stack, nginx = site
    sockets = stall(nginx.port, STALLED)
    try:
        time.sleep(0.5)  # let nginx accept them all
        for path in ("/healthz", "/browse/", "/api/v1/trajectories"):
            status, _, _, seconds = call(nginx.port, "GET", path)
            assert status == 200, path
            assert seconds < BOUND_SECONDS, (path, seconds)
        # And a share goes through while they stall.
        status, _, _, seconds = share(nginx.port, "while others stall", source="127.0.0.9")
        assert status == 201 and seconds < BOUND_SECONDS * 2
    finally:
        for sock in sockets:
            sock.close()


def test_the_same_stalled_uploads_straight_at_gunicorn_stall_it(site):
    """The floor the proxy is measured against: without it, two sync workers are held."""
    stack, _ = site
    sockets = stall(stack.port, 4)
    try:
        time.sleep(0.5)
        with pytest.raises((TimeoutError, socket.timeout)):
            conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=BOUND_SECONDS)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
    finally:
        for sock in sockets:
            sock.close()
    # Closed, they free the workers again.
    deadline = time.monotonic() + 15
    while call(stack.port, "GET", "/healthz")[0] != 200:
        assert time.monotonic() < deadline
        time.sleep(0.2)


def _closed_after(sock: socket.socket) -> tuple[bytes, float]:
    """What the server sent before it closed the connection, and after how long."""
    sock.settimeout(20)
    started = time.monotonic()
    try:
        answer = sock.recv(4096)
    finally:
        sock.close()
    return answer, time.monotonic() - started


def test_nginx_closes_a_stalled_upload_after_its_body_timeout(site):
    # README and docker/nginx.conf said stalled clients were "dropped with 408": they are closed
    # with no answer at all (408 is only what the access log says), as they now say.
    _, nginx = site
    (sock,) = stall(nginx.port, 1)
    answer, waited = _closed_after(sock)
    assert 8 < waited < 15, waited  # client_body_timeout 10s
    assert answer == b""


def test_nginx_closes_a_client_that_stalls_its_headers(site):
    _, nginx = site
    sock = socket.create_connection(("127.0.0.1", nginx.port), timeout=5)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")  # no blank line: never done
    answer, waited = _closed_after(sock)
    assert 8 < waited < 15, waited  # client_header_timeout 10s
    assert answer == b""
    readme = (ROOT / "README.md").read_text()
    assert "closes the connection of a client that stalls, with no answer" in readme


def test_rate_limits_count_clients_not_the_proxy(site):
    _, nginx = site
    # TRAJHUB_ANON_SHARES_PER_HOUR=2 per client address, counted from X-Forwarded-For.
    for task in ("a", "b"):
        assert share(nginx.port, f"from .2 {task}", source="127.0.0.2")[0] == 201
    status, headers, body, _ = share(nginx.port, "from .2 c", source="127.0.0.2")
    assert status == 429 and int(headers["Retry-After"]) > 0
    assert "too many anonymous shares" in json.loads(body)["error"]["message"]
    # A forged X-Forwarded-For does not make it another client ...
    forged = share(
        nginx.port, "from .2 forged", source="127.0.0.2", headers={"X-Forwarded-For": "1.2.3.4"}
    )
    assert forged[0] == 429
    # ... while another address is a client of its own.
    assert share(nginx.port, "from .3", source="127.0.0.3")[0] == 201


def raw(port: int, data: bytes) -> tuple[int, dict, bytes]:
    """Send raw bytes; parse the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    answer = b"".join(chunks)
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(
    "path, shape",
    [
        ("/api/v1/trajectories", "json"),
        ("/share_od_trajectory", "envelope"),
        ("/api/share", "envelope"),
        ("/upload/", "page"),
    ],
)
def test_a_body_over_the_proxy_limit_is_refused_unread_in_the_callers_shape(site, path, shape):
    _, nginx = site
    status, headers, body = raw(
        nginx.port,
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {60 * 1024 * 1024}\r\nConnection: close\r\n\r\n".encode(),
    )
    assert status == 413
    check_shape(headers, body, 413, shape)


def check_shape(headers: dict, body: bytes, status: int, shape: str) -> None:
    if shape == "page":
        assert headers["Content-Type"].startswith("text/html")
        assert b"TrajHub" in body and b"nginx" not in body
        return
    assert headers["Content-Type"] == "application/json"
    answer = json.loads(body)
    if shape == "json":
        assert answer["error"]["message"]
    else:
        assert answer["statusCode"] == status and answer["body"]["message"]


@pytest.mark.parametrize(
    ("request_bytes", "status", "where"),
    [
        (
            b"GET /api/v1/trajectories?title="
            + b"x" * 100_000
            + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
            414,
            None,
        ),
        (
            b"GET /api/v1/trajectories HTTP/1.1\r\nHost: localhost\r\nCookie: x="
            + b"a" * 100_000
            + b"\r\n\r\n",
            431,
            "headers",
        ),
    ],
    ids=["request line", "header"],
)
def test_a_request_over_the_proxy_limits_is_json_for_both_readers(
    site, request_bytes, status, where
):
    _, nginx = site
    answered, headers, body = raw(nginx.port, request_bytes)
    assert answered == status
    check_shape(headers, body, status, "json")
    check_shape(headers, body, status, "envelope")
    if where:
        assert json.loads(body)["error"]["where"] == where


def test_a_query_between_the_site_and_proxy_limits_is_the_sites_own_414(site):
    _, nginx = site
    status, headers, body, _ = call(
        nginx.port,
        "POST",
        "/api/v1/trajectories?title=" + "x" * 40_000,
        body=b"[]",
        headers={"Content-Type": "application/json"},
    )
    assert status == 414 and "query string" in json.loads(body)["error"]["message"]


def test_a_header_the_proxy_lets_through_is_not_refused_behind_it(site):
    """A 20 KB cookie is over gunicorn's default limit (8 KB) but within nginx's (64 KB): the
    site behind nginx must take it, not answer gunicorn's HTML 400."""
    _, nginx = site
    status, headers, body, _ = call(
        nginx.port, "GET", "/api/v1/trajectories", headers={"Cookie": "x=" + "a" * 20_000}
    )
    assert status == 200, body[:300]
    assert headers["Content-Type"] == "application/json"


def test_a_request_nginx_cannot_parse_is_json(site):
    _, nginx = site
    status, headers, body = raw(nginx.port, b"GET /healthz HTTP/1.1\r\nHost localhost\r\n\r\n")
    assert status == 400
    check_shape(headers, body, 400, "json")
    check_shape(headers, body, 400, "envelope")


@pytest.fixture(scope="module")
def dead_upstream(tmp_path_factory):
    """nginx in front of a port nobody listens on (502) and of one that accepts and never
    answers (504, with the read timeout shortened for the test)."""
    root = tmp_path_factory.mktemp("upstreams")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except (TimeoutError, OSError):
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    refused = start_nginx(root / "refused", upstream=f"127.0.0.1:{_free_port()}")
    slow = start_nginx(
        root / "slow",
        upstream=f"127.0.0.1:{silent.getsockname()[1]}",
        replace={"proxy_read_timeout 130s;": "proxy_read_timeout 1s;"},
    )
    try:
        yield refused, slow
    finally:
        refused.stop()
        slow.stop()
        stop.set()
        thread.join(timeout=2)
        for sock in held:
            sock.close()
        silent.close()


@pytest.mark.parametrize(
    "method, path, shape",
    [
        ("GET", "/api/v1/trajectories", "json"),
        ("POST", "/share_od_trajectory", "envelope"),
        ("POST", "/api/share", "envelope"),
        ("GET", "/browse/", "page"),
    ],
)
def test_upstream_down_or_too_slow_is_answered_in_the_callers_shape(
    dead_upstream, method, path, shape
):
    refused, slow = dead_upstream
    for nginx, status in ((refused, 502), (slow, 504)):
        answer = call(nginx.port, method, path, body=b"{}" if method == "POST" else None)
        assert answer[0] == status, (path, answer[:3])
        check_shape(answer[1], answer[2], status, shape)


def test_the_host_header_keeps_its_port_through_nginx(tmp_path):
    """proxy_set_header Host $http_host: Django's host check (and any link) sees host:port."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self):
            body = (self.headers.get("Host") or "").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    nginx = start_nginx(tmp_path / "proxy", upstream=f"127.0.0.1:{upstream.server_port}")
    try:
        status, _, body, _ = call(
            nginx.port, "GET", "/browse/", headers={"Host": "trajhub.test:8443"}
        )
        assert status == 200 and body == b"trajhub.test:8443"
    finally:
        nginx.stop()
        upstream.shutdown()
