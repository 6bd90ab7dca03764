"""The command-line client's account side: `trajhub login` (a token pasted from the tokens page,
stored with mode 0600), where the token comes from, the anonymous holder's download of the
original, and failures that are one plain sentence and an exit code, never a traceback."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apps.accounts.services import api_token_create
from apps.trajectories.services import ShareOptions, hash_deletion_password, trajectory_ingest
from apps.trajectories.services.passwords import new_deletion_password
from cli import trajhub
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.usefixtures("transactional_db", "private_storage")

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = trajhub.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_process(*argv: str, stdin=subprocess.DEVNULL, env: dict | None = None):
    """The client as a user's shell runs it: its own process, no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "cli.trajhub", *argv],
        cwd=ROOT,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_login_stores_the_token_for_that_site_with_mode_0600(live_server, owner):
    _, secret = api_token_create(user=owner, name="cli")
    mine = make_trajectory(owner=owner, visibility="private")

    code, out, err = run("--url", live_server.url, "login", secret)
    assert code == 0, err
    path = Path(os.environ["TRAJHUB_CONFIG"])
    assert str(path) in out and secret not in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # From now on the stored token (and site) are used.
    code, out, err = run("list", "--mine")
    assert code == 0, err
    assert mine.share_id in out

    code, out, _ = run("logout")
    assert code == 0 and not path.exists()
    code, out, err = run("--url", live_server.url, "list", "--mine")
    assert code == 2 and "error:" in err  # anonymous again


def test_token_precedence_option_then_environment_then_config(live_server, owner, monkeypatch):
    _, good = api_token_create(user=owner, name="good")
    make_trajectory(owner=owner, visibility="private")
    run("--url", live_server.url, "login", good)

    monkeypatch.setenv("TRAJHUB_TOKEN", "th_not-a-real-token")
    code, _, err = run("list", "--mine")
    assert code == 2 and "Invalid API token" in err  # the environment beats the config file
    code, out, err = run("--token", good, "list", "--mine")
    assert code == 0, err  # the option beats the environment


def test_login_refuses_a_token_the_site_refuses(live_server):
    code, out, err = run("--url", live_server.url, "login", "th_revoked-or-made-up")
    assert code == 2 and "refused this token" in err
    assert not Path(os.environ["TRAJHUB_CONFIG"]).exists()


def test_the_holder_downloads_the_original_with_the_password(live_server, sample, tmp_path):
    data = sample("openhands_v0_events.json")
    stored = trajectory_ingest(
        data=data, user=None, options=ShareOptions(visibility="private", filename="run.json")
    ).stored[0]
    share_id, password = stored.trajectory.share_id, stored.password
    target = tmp_path / "run.json"

    code, _, err = run(
        "--url", live_server.url, "download", share_id, "--format", "original",
        "--password", password, "-o", str(target),
    )  # fmt: skip
    assert code == 0, err
    assert target.read_bytes() == data

    code, _, err = run(
        "--url", live_server.url, "download", share_id, "--format", "original",
        "--password", "wrong",
    )  # fmt: skip
    assert code == 2 and "no trajectory with this id and deletion password" in err


def test_a_password_that_begins_with_a_dash_is_taken_as_the_password(live_server, sample, tmp_path):
    """Passwords issued before they avoided a leading "-" (one in 64 did) still work as typed:
    `--password -…` is the password, not an unknown option."""
    data = sample("openhands_v0_events.json")
    trajectory = (
        trajectory_ingest(
            data=data, user=None, options=ShareOptions(visibility="private", filename="run.json")
        )
        .stored[0]
        .trajectory
    )
    password = "-Leading-dash_Passw0rd-x"
    trajectory.deletion_password_hashes = [hash_deletion_password(password)]
    trajectory.save(update_fields=["deletion_password_hashes"])
    target = tmp_path / "run.json"

    code, _, err = run(
        "--url", live_server.url, "download", trajectory.share_id, "--format", "original",
        "--password", password, "-o", str(target),
    )  # fmt: skip
    assert code == 0, err
    assert target.read_bytes() == data


def test_issued_deletion_passwords_never_begin_with_a_dash():
    # One draw of token_urlsafe in 64 begins with "-": 3,000 draws would show one.
    assert not [p for p in (new_deletion_password() for _ in range(3000)) if p.startswith("-")]


@pytest.mark.parametrize(
    "argv",
    [
        ["login"],
        ["delete", "0" * 64],
        ["download", "0" * 64, "--format", "original"],
    ],
    ids=["login", "delete", "download original"],
)
def test_no_terminal_for_a_secret_is_one_sentence(live_server, argv, tmp_path):
    result = run_process(
        "--url", live_server.url, *argv, env={"TRAJHUB_CONFIG": str(tmp_path / "c.json")}
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: no terminal to ask for the ")
    assert result.stderr.count("\n") == 1


def test_a_refused_connection_and_a_server_error_are_one_sentence(tmp_path):
    class Broken(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = b"<html><h1>Server Error (500)</h1></html>"
            self.send_response(500)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {"TRAJHUB_CONFIG": str(tmp_path / "c.json")}
    try:
        broken = run_process(
            "--url", f"http://127.0.0.1:{server.server_address[1]}", "list", env=env
        )
    finally:
        server.shutdown()
        server.server_close()
    refused = run_process("--url", f"http://127.0.0.1:{server.server_address[1]}", "list", env=env)
    for result in (broken, refused):
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "500" in broken.stderr
    assert "could not reach" in refused.stderr


def test_an_unexpected_failure_is_one_sentence_too(monkeypatch):
    def explode(*args, **kwargs):
        raise ValueError("something odd")

    monkeypatch.setattr(trajhub, "cmd_list", explode)
    monkeypatch.setattr(trajhub, "build_parser", _parser_with(explode))
    code, _, err = run("--url", "http://127.0.0.1:9", "list")
    assert (
        code == 2 and err == "error: something unexpected went wrong (ValueError: something odd)\n"
    )


def _parser_with(handler):
    original = trajhub.build_parser

    def build():
        parser = original()
        parser.set_defaults(handler=handler)
        for action in parser._subparsers._group_actions:  # the commands
            for sub in action.choices.values():
                sub.set_defaults(handler=handler)
        return parser

    return build


def test_pip_install_puts_the_trajhub_command_in_place(tmp_path):
    # What `pip install .` (and the Makefile's editable install) gives: a `trajhub` script.
    target = tmp_path / "site"
    result = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-deps", "--no-cache-dir", "--target", str(target),
            str(ROOT),
        ],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    script = target / "bin" / "trajhub"
    assert script.exists()
    help_text = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(target)},
    )  # fmt: skip
    assert help_text.returncode == 0 and "login" in help_text.stdout


def test_a_secret_piped_to_stdin_is_read_without_a_terminal(live_server, owner, tmp_path):
    _, secret = api_token_create(user=owner, name="piped")
    config = tmp_path / "c.json"
    result = subprocess.run(
        [sys.executable, "-m", "cli.trajhub", "--url", live_server.url, "login"],
        cwd=ROOT, input=secret + "\n", capture_output=True, text=True, timeout=60,
        env={**os.environ, "TRAJHUB_CONFIG": str(config)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert secret in config.read_text()
