"""`trajhub sessions` and `trajhub share --latest / SESSION_ID` (issue 22) against a fake home
folder holding sessions of each agent, and a live server.

The fake home is the real layout of each agent (cli/sessions.py names where each comes from);
HOME, CLAUDE_CONFIG_DIR, CODEX_HOME and GEMINI_CLI_HOME point the client at it.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import zipfile
from pathlib import Path

import pytest

from apps.accounts.services import api_token_create
from apps.trajectories.models import Event, Trajectory
from cli import bundle, sessions, trajhub

pytestmark = pytest.mark.usefixtures("transactional_db", "private_storage")

SHARE_URL = re.compile(r"/t/([0-9a-f]{64})/")
CLAUDE_ID = "5f0c2a8e-1d3b-4c6a-9e7f-0a1b2c3d4e5f"
CODEX_ID = "0198c0de-0000-7000-8000-000000000001"
ENV_CONTENT = "STRIPE_WEBHOOK=whsec_k3yFr0mTh3D0tEnvF1leXYZ123"


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _claude_records(cwd: str, prompt: str, extra_turns: int = 0) -> list[dict]:
    base = {"sessionId": CLAUDE_ID, "cwd": cwd, "version": "2.1.41", "gitBranch": "main"}
    records = [
        {"type": "file-history-snapshot", "messageId": "u0", "snapshot": {}},
        {
            **base,
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "isMeta": True,
            "message": {
                "role": "user",
                "content": "<system-reminder>CLAUDE.md: be brief</system-reminder>",
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": "u0",
            "message": {"role": "user", "content": prompt},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_env",
                        "name": "Read",
                        "input": {"file_path": f"{cwd}/.env"},
                    }
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "parentUuid": "u2",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_env", "content": ENV_CONTENT}
                ],
            },
            "toolUseResult": {
                "type": "text",
                "file": {"filePath": f"{cwd}/.env", "content": ENV_CONTENT},
            },
        },
    ]
    for turn in range(extra_turns):
        records.append(
            {
                **base,
                "type": "assistant",
                "uuid": f"x{turn}",
                "parentUuid": "u3" if turn == 0 else f"x{turn - 1}",
                "message": {
                    "id": f"msg_x{turn}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": f"Done with part {turn}."}],
                },
            }
        )
    return records


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder with one session of each agent, oldest first: OpenHands (V0 app and agent
    SDK), Gemini CLI, Codex CLI (old JSON and JSON Lines), Claude Code (newest)."""
    root = tmp_path / "home"
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setenv("USERPROFILE", str(root))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    stamp = 1_700_000_000

    def aged(path: Path) -> Path:
        nonlocal stamp
        stamp += 3600
        os.utime(path, (stamp, stamp))
        return path

    v0 = root / ".openhands/file_store/sessions/c0ffee00aa/events"
    v0.mkdir(parents=True)
    (v0 / "0.json").write_text(
        json.dumps(
            {"id": 0, "source": "user", "action": "message", "args": {"content": "Fix the V0 bug"}}
        )
    )
    (v0 / "1.json").write_text(
        json.dumps({"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}})
    )
    aged(v0 / "0.json")
    aged(v0 / "1.json")
    sdk = root / ".openhands/conversations/5a5a5a5a5a5a/events"
    sdk.mkdir(parents=True)
    (sdk / "event-00000-0a0a0a0a-0000.json").write_text(
        json.dumps(
            {
                "kind": "MessageEvent",
                "id": "0a0a0a0a-0000",
                "source": "user",
                "llm_message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "Write hello.py"}],
                },
            }
        )
    )
    (sdk.parent / "base_state.json").write_text(
        json.dumps({"workspace": {"working_dir": "/work/hello"}})
    )
    aged(sdk / "event-00000-0a0a0a0a-0000.json")
    gemini = root / ".gemini/tmp/greet-app"
    (gemini / "chats").mkdir(parents=True)
    (gemini / ".project_root").write_text("C:\\Users\\alice\\greet-app")
    chat = gemini / "chats/session-2025-03-04T10-00-abcd1234.json"
    chat.write_text(
        json.dumps(
            {
                "sessionId": "abcd1234-0000-4000-8000-000000000000",
                "projectHash": "9f" * 32,
                "startTime": "2025-03-04T10:00:00Z",
                "lastUpdated": "2025-03-04T10:05:00Z",
                "messages": [
                    {
                        "id": "m1",
                        "timestamp": "2025-03-04T10:00:00Z",
                        "type": "user",
                        "content": "Rename greet to hello",
                    },
                    {
                        "id": "m2",
                        "timestamp": "2025-03-04T10:00:05Z",
                        "type": "gemini",
                        "content": "Done.",
                    },
                ],
            }
        )
    )
    aged(chat)
    old = (
        root
        / ".codex/sessions/2025/01/02/rollout-2025-01-02T09-00-00-0197aaaa-0000-7000-8000-000000000009.json"
    )
    old.parent.mkdir(parents=True)
    old.write_text(
        json.dumps(
            {
                "session": {
                    "id": "0197aaaa-0000-7000-8000-000000000009",
                    "timestamp": "2025-01-02T09:00:00Z",
                },
                "items": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "Old rollout task"}],
                    }
                ],
            }
        )
    )
    aged(old)
    from tests.conftest import SAMPLES_DIR

    rollout = root / f".codex/sessions/2025/03/04/rollout-2025-03-04T10-00-00-{CODEX_ID}.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes((SAMPLES_DIR / "codex_rollout.jsonl").read_bytes())
    aged(rollout)
    claude = _jsonl(
        root / ".claude/projects/-Users-alice-work-greet" / f"{CLAUDE_ID}.jsonl",
        _claude_records("/Users/alice/work/greet", "Add a --verbose flag to greet.py"),
    )
    aged(claude)
    return root


def run(live_server, *argv: str, token: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["--url", live_server.url, *(["--token", token] if token else []), *argv]
    code = trajhub.main(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _no_terminal(monkeypatch):
    monkeypatch.setattr(trajhub, "_has_terminal", lambda: False)


def test_sessions_lists_every_agents_sessions_newest_first(home, live_server):
    code, out, err = run(live_server, "sessions")

    assert code == 0, err
    rows = [line for line in out.splitlines()[1:] if not line.startswith(" ")]
    agents = [row.split()[1] for row in rows]
    assert agents == ["claude-code", "codex", "codex", "gemini", "openhands", "openhands"]
    assert rows[0].startswith(CLAUDE_ID[:8]) and "/Users/alice/work/greet" in rows[0]
    assert "Add a --verbose flag to greet.py" in out  # the prompt, not the CLAUDE.md reminder
    assert "CLAUDE.md" not in out
    assert "Add a --verbose flag to greet.py and test it" in out  # Codex: not its env context
    assert "<environment_context>" not in out
    assert "C:\\Users\\alice\\greet-app" in out and "Rename greet to hello" in out
    assert "Old rollout task" in out and "Write hello.py" in out and "Fix the V0 bug" in out
    assert "/work/hello" in out

    code, out, _ = run(live_server, "sessions", "--agent", "codex", "--json")
    listed = json.loads(out)
    assert [row["id"] for row in listed] == [CODEX_ID, "0197aaaa-0000-7000-8000-000000000009"]
    assert listed[0]["size"] == (Path(listed[0]["path"])).stat().st_size


def test_sessions_follow_the_agents_own_home_variables(home, live_server, tmp_path, monkeypatch):
    elsewhere = tmp_path / "claude-elsewhere"
    _jsonl(
        elsewhere / "projects/C--Users-bob-app" / "9e9e9e9e-0000-4000-8000-000000000000.jsonl",
        [
            {
                "type": "user",
                "uuid": "u1",
                "sessionId": "9e9e9e9e-0000-4000-8000-000000000000",
                "cwd": "C:\\Users\\bob\\app",
                "message": {"role": "user", "content": "Windows task"},
            }
        ],
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))

    code, out, _ = run(live_server, "sessions")

    assert code == 0
    assert "C:\\Users\\bob\\app" in out and "Windows task" in out
    assert "/Users/alice/work/greet" not in out  # ~/.claude is no longer read
    assert " codex " not in out


def test_share_latest_shows_the_preview_and_needs_a_confirmation(home, live_server, owner):
    token = api_token_create(user=owner, name="cli")[1]

    code, out, err = run(live_server, "share", "--claude-code", "--latest", token=token)

    assert code == 2
    assert "add --yes" in err
    assert Trajectory.objects.count() == 0  # nothing stored before the sharer agrees
    # What the scan would redact, with its placeholder, and the .env the agent read.
    assert "<USER_NAME_1>" in err and "user_name" in err
    assert "! /Users/alice/work/greet/.env" in err and "--exclude PATH" in err
    assert "whsec_k3yFr0mTh3D0tEnvF1leXYZ123" not in err  # never echoed whole


def test_share_latest_then_a_grown_session_updates_it_signed_in(home, live_server, owner):
    token = api_token_create(user=owner, name="cli")[1]

    code, out, err = run(live_server, "share", "--claude-code", "--latest", "--yes", token=token)

    assert code == 0, err
    share_id = SHARE_URL.search(out).group(1)
    first = Trajectory.objects.get(share_id=share_id)
    assert first.owner == owner and first.source_format == "claude_code"
    session_file = home / ".claude/projects/-Users-alice-work-greet" / f"{CLAUDE_ID}.jsonl"
    _jsonl(
        session_file,
        _claude_records("/Users/alice/work/greet", "Add a --verbose flag to greet.py", 3),
    )

    code, out, err = run(live_server, "share", CLAUDE_ID[:8], "--yes", token=token)

    assert code == 0, err
    assert SHARE_URL.search(out).group(1) == share_id and "(updated" in out
    assert Trajectory.objects.count() == 1
    first.refresh_from_db()
    assert first.num_events > 3


def test_share_a_grown_session_again_anonymously_keeps_its_id(home, live_server):
    code, out, err = run(
        live_server, "share", "--codex", "--latest", "--yes", "--email", "me@example.org"
    )

    assert code == 0, err
    share_id = SHARE_URL.search(out).group(1)
    rollout = next((home / ".codex/sessions/2025/03/04").glob("rollout-*.jsonl"))
    with rollout.open("a") as handle:
        handle.write(
            json.dumps(
                {
                    "timestamp": "2025-03-04T11:00:00Z",
                    "type": "event_msg",
                    "payload": {
                        "type": "user_message",
                        "message": "Now add a --quiet flag",
                        "images": [],
                    },
                }
            )
            + "\n"
        )

    # The email is remembered from the last share: the proof is email + the session's HMAC.
    code, out, err = run(live_server, "share", str(rollout), "--yes")

    assert code == 0, err
    assert "using the email of your last share" in err
    assert SHARE_URL.search(out).group(1) == share_id and "(updated" in out
    assert Trajectory.objects.count() == 1


def test_the_session_id_sent_is_an_hmac_under_a_key_only_the_config_holds(home, tmp_path):
    session = sessions.find("claude-code")[0]

    key = trajhub.session_key()

    config = Path(os.environ["TRAJHUB_CONFIG"])
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text())["session_key"] == key and len(key) == 64
    assert trajhub.session_key() == key  # made once
    token = bundle.session_token(key, session)
    assert CLAUDE_ID not in token and len(token) == 64
    assert bundle.session_token("another machine's key", session) != token


def test_exclude_and_without_context_leave_things_out_before_upload(home, live_server, owner):
    token = api_token_create(user=owner, name="cli")[1]

    code, out, err = run(
        live_server,
        "share",
        "--latest",
        "--claude-code",
        "--exclude",
        ".env",
        "--without-context",
        "--yes",
        token=token,
    )

    assert code == 0, err
    trajectory = Trajectory.objects.get(share_id=SHARE_URL.search(out).group(1))
    stored = json.dumps(list(Event.objects.filter(trajectory=trajectory).values("text", "data")))
    assert "whsec_k3yFr0mTh3D0tEnvF1leXYZ123" not in stored
    assert "[left out by the sharer: .env]" in stored
    assert "CLAUDE.md: be brief" not in stored
    assert "Add a --verbose flag" in stored


def test_a_claude_session_with_subagents_is_uploaded_as_its_folder(home):
    session_file = home / ".claude/projects/-Users-alice-work-greet" / f"{CLAUDE_ID}.jsonl"
    _jsonl(
        session_file.parent / CLAUDE_ID / "subagents/agent-a1b2c3.jsonl",
        [
            {
                "type": "user",
                "uuid": "s1",
                "isSidechain": True,
                "agentId": "a1b2c3",
                "sessionId": CLAUDE_ID,
                "message": {"role": "user", "content": "Find it"},
            }
        ],
    )
    session = sessions.from_path(session_file)

    name, data = bundle.upload(session, without_context=False, exclude=[])

    assert name == f"{CLAUDE_ID}.zip"
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert names == [f"{CLAUDE_ID}.jsonl", f"{CLAUDE_ID}/subagents/agent-a1b2c3.jsonl"]
    assert session.size == session_file.stat().st_size + session.extra[0].stat().st_size


def test_an_openhands_conversation_folder_is_sent_as_its_events(home, live_server, owner):
    token = api_token_create(user=owner, name="cli")[1]

    code, out, err = run(live_server, "share", "--openhands", "--latest", "--yes", token=token)

    assert code == 0, err
    trajectory = Trajectory.objects.get(share_id=SHARE_URL.search(out).group(1))
    assert trajectory.source_format == "openhands_v1"
    assert "Write hello.py" in trajectory.title


def test_unknown_session_id_and_no_sessions_say_so(home, live_server, tmp_path, monkeypatch):
    code, _, err = run(live_server, "share", "deadbeef99", "--yes")
    assert code == 2 and "no such file, nor a session id" in err

    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    code, out, err = run(live_server, "sessions")
    assert code == 0 and "no sessions found: looked in" in err
    code, _, err = run(live_server, "share", "--latest", "--yes")
    assert code == 2 and "no sessions found on this machine" in err
