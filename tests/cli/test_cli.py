"""The command-line client (cli/trajhub.py) against a live server, with real trajectory files.

`main([...])` runs in-process (so the test sees its output and exit code) and speaks HTTP to
pytest-django's live_server like any user's shell would.
"""

from __future__ import annotations

import io
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from apps.accounts.services import api_token_create
from apps.trajectories.models import Tombstone, Trajectory
from cli import trajhub

pytestmark = pytest.mark.usefixtures("transactional_db", "private_storage")

ROOT = Path(__file__).resolve().parents[2]
SHARE_URL = re.compile(r"/t/([0-9a-f]{64})/")
PASSWORD = re.compile(r"deletion password: (\S+)")


def run(live_server, *argv: str, token: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["--url", live_server.url, *(["--token", token] if token else []), *argv]
    code = trajhub.main(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.fixture
def token(owner) -> str:
    return api_token_create(user=owner, name="cli test")[1]


def test_anonymous_share_prints_url_and_password_then_a_longer_session_updates_it(
    live_server, sample, tmp_path, monkeypatch
):
    events = json.loads(sample("openhands_v0_events.json"))
    short = write(tmp_path, "short.json", json.dumps(events[:6]).encode())
    monkeypatch.setattr(trajhub, "PROGRESS_THRESHOLD", 0)  # show the bar for this small file

    code, out, err = run(live_server, "share", short, "--email", "dev@example.org")

    assert code == 0, err
    share_id = SHARE_URL.search(out).group(1)
    password = PASSWORD.search(out).group(1)
    assert "shown once, save it" in out
    assert "100%" in err and "uploading short.json" in err  # the progress bar reached the end
    trajectory = Trajectory.objects.get(share_id=share_id)
    assert trajectory.num_events == 6 and trajectory.owner is None
    assert trajectory.visibility == "private"

    full = write(tmp_path, "full.json", sample("openhands_v0_events.json"))
    code, out, err = run(
        live_server, "share", full, "--email", "dev@example.org", "--polarity", "positive"
    )

    assert code == 0, err
    assert SHARE_URL.search(out).group(1) == share_id and "(updated" in out
    assert PASSWORD.search(out).group(1) != password  # a new password, the old one still valid
    trajectory.refresh_from_db()
    assert trajectory.num_events == 11 and trajectory.polarity == "positive"
    assert Trajectory.objects.count() == 1


def test_owner_shares_lists_shows_downloads_publishes_and_deletes(
    live_server, sample, tmp_path, token
):
    path = write(tmp_path, "basic.json", sample("openhands_v0_events.json"))

    code, out, err = run(live_server, "share", path, "--title", "CLI demo", token=token)
    assert code == 0, err
    share_id = SHARE_URL.search(out).group(1)
    assert "deletion password" not in out  # an account's share needs none
    assert Trajectory.objects.get(share_id=share_id).owner.username == "owner"

    code, out, err = run(live_server, "list", "--mine", token=token)
    assert code == 0 and share_id in out and "CLI demo" in out and "private" in out
    code, out, err = run(live_server, "list")  # private: not in the public list
    assert code == 0 and share_id not in out

    code, out, err = run(live_server, "show", share_id, token=token)
    assert code == 0 and "CLI demo" in out and "num_events:" in out

    target = tmp_path / "out.openai.json"
    code, out, err = run(
        live_server, "download", share_id, "--format", "openai", "-o", str(target), token=token
    )
    assert code == 0, err
    exported = json.loads(target.read_bytes())
    assert exported["messages"] and exported["messages"][0]["role"] in ("system", "user")
    target = tmp_path / "out.atif.json"
    code, out, err = run(
        live_server, "download", share_id, "--format", "atif", "-o", str(target), token=token
    )
    assert code == 0, err
    exported = json.loads(target.read_bytes())
    assert exported["schema_version"].startswith("ATIF-v1.") and exported["steps"]

    code, out, err = run(live_server, "visibility", share_id, "public", token=token)
    assert code == 2 and "error: a public trajectory must agree to the site's licence" in err
    assert "(at license_agreed)" in err
    code, out, err = run(
        live_server, "visibility", share_id, "public", "--agree-license", token=token
    )
    assert code == 0 and f"{share_id} is now public" in out
    assert Trajectory.objects.get(share_id=share_id).license

    code, out, err = run(live_server, "delete", share_id, token=token)
    assert code == 0 and f"deleted {share_id}" in out
    assert not Trajectory.objects.filter(share_id=share_id).exists()
    assert Tombstone.objects.filter(share_id=share_id).exists()
    code, out, err = run(live_server, "show", share_id, token=token)
    assert code == 2 and err.startswith("error: ")


def test_anonymous_delete_needs_the_password(live_server, sample, tmp_path, monkeypatch):
    path = write(tmp_path, "wrong.json", sample("sweagent_run.traj"))
    code, out, err = run(live_server, "share", path)
    share_id = SHARE_URL.search(out).group(1)
    password = PASSWORD.search(out).group(1)

    code, out, err = run(live_server, "delete", share_id, "--password", "not-it")
    assert code == 2
    assert "error: no trajectory with this id and deletion password" in err
    assert Trajectory.objects.filter(share_id=share_id).exists()

    # Without --password an anonymous caller is asked for it (getpass: not echoed).
    monkeypatch.setattr(trajhub, "ask_secret", lambda prompt, what, option: password)
    code, out, err = run(live_server, "delete", share_id)
    assert code == 0 and f"deleted {share_id}" in out
    assert not Trajectory.objects.filter(share_id=share_id).exists()


def test_a_file_that_is_no_trajectory_exits_2_with_the_apis_message(live_server, tmp_path):
    path = write(tmp_path, "notes.txt", b"just some notes, not a trajectory\n")

    code, out, err = run(live_server, "share", path)

    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}: ") and "(at " in err
    assert "json" in err.lower()  # the API says what it expected
    assert Trajectory.objects.count() == 0


def test_multi_record_jsonl_with_one_bad_line_exits_1_and_names_the_line(
    live_server, sample, tmp_path
):
    data = sample("openhands_v1_sdk_output.jsonl").rstrip(b"\n")
    path = write(tmp_path, "output.jsonl", data + b'\n{"instance_id": "broken", "history": \n')

    code, out, err = run(live_server, "share", path, "--json")

    assert code == 1
    answer = json.loads(out)
    assert len(answer["trajectories"]) == 2 and len(answer["errors"]) == 1
    assert f"{path} line 3: " in err
    assert Trajectory.objects.count() == 2


def test_an_unreachable_server_is_named_and_exits_2(tmp_path, sample):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    path = write(tmp_path, "basic.json", sample("openhands_v0_events.json"))
    out, err = io.StringIO(), io.StringIO()

    code = trajhub.main(["--url", url, "share", path], stdout=out, stderr=err)

    assert code == 2
    assert err.getvalue().startswith(f"error: could not reach {url} (")


def test_runs_as_a_module_without_any_third_party_package(live_server, sample, tmp_path):
    # -S: no site-packages at all, so the client must live on the standard library alone.
    path = write(tmp_path, "basic.json", sample("openhands_v0_events.json"))
    result = subprocess.run(
        [sys.executable, "-S", "-m", "cli.trajhub", "--url", live_server.url, "share", path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    share_id = SHARE_URL.search(result.stdout).group(1)
    assert Trajectory.objects.filter(share_id=share_id, owner=None).exists()
