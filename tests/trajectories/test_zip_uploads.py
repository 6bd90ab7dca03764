"""Zip uploads (issue 22): the share API (multipart and raw body), the upload page and the
preview read zip archives within limits like gzip's, refuse what an archive must not hold with a
4xx naming the entry, and store nothing then. A Claude Code session folder, zipped, is one
trajectory with its subagent nested under the Task call that started it."""

from __future__ import annotations

import gzip
import io
import stat
import warnings
import zipfile

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.trajectories.importers import FormatError, parse
from apps.trajectories.importers.archive import ArchiveLimits, read_zip
from apps.trajectories.models import Trajectory
from tests.samples.make_samples import openai_messages, sharegpt

pytestmark = pytest.mark.django_db

API = "/api/v1/trajectories"
PREVIEW = "/api/v1/trajectories/preview"
ONE = orjson.dumps(openai_messages())


def make_zip(*files, method=zipfile.ZIP_DEFLATED) -> bytes:
    """files: (name, bytes) or (ZipInfo, bytes)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are written on purpose below
        with zipfile.ZipFile(buffer, "w", compression=method) as archive:
            for name, data in files:
                archive.writestr(name, data)
    return buffer.getvalue()


def share(client, data: bytes, name: str = "upload.zip"):
    return client.post(API, {"file": SimpleUploadedFile(name, data)})


def assert_refused(response, status: int, message: str, where: str | None = None):
    assert response.status_code == status, response.content[:400]
    error = response.json()["error"]
    assert message in error["message"], error
    if where is not None:
        assert error["where"] == where, error
    assert Trajectory.objects.count() == 0


# --- limits ------------------------------------------------------------------------------------


def test_too_many_entries_is_a_413(client, settings):
    settings.TRAJHUB_MAX_ZIP_ENTRIES = 3
    data = make_zip(*[(f"t{n}.json", ONE) for n in range(4)])
    assert_refused(share(client, data), 413, "4 entries, over the limit of 3")


def test_an_entry_over_its_size_limit_is_a_413_naming_it(client, settings):
    settings.TRAJHUB_MAX_ZIP_ENTRY_BYTES = 10_000
    big = orjson.dumps({**openai_messages(), "pad": "x" * 20_000})
    assert_refused(
        share(client, make_zip(("big.json", big))), 413, "over the limit of 10,000 bytes for one"
    )
    assert share(client, make_zip(("big.json", big))).json()["error"]["where"] == "entry 'big.json'"


def test_entries_over_the_decompressed_limit_in_total_are_a_413(client, settings):
    settings.TRAJHUB_MAX_DECOMPRESSED_BYTES = 30_000  # the gzip limit, for the whole archive
    part = orjson.dumps({**openai_messages(), "pad": "y" * 12_000})
    data = make_zip(("a.json", part), ("b.json", part), ("c.json", part))
    assert_refused(share(client, data), 413, "inflate to", None)


def test_a_lying_directory_is_held_to_what_decompression_produces(settings):
    """The central directory says 100 bytes; the entry inflates to a megabyte: refused while
    inflating (the size check does not trust the directory)."""
    data = bytearray(make_zip(("a.json", b"[" + b" " * 1_000_000 + b"]")))
    directory = data.rindex(b"PK\x01\x02")
    data[directory + 24 : directory + 28] = (100).to_bytes(4, "little")  # uncompressed size
    with pytest.raises(FormatError) as refused:
        read_zip(bytes(data), ArchiveLimits(max_entry_bytes=500_000))
    assert refused.value.where == "entry 'a.json'"


def test_a_zip_bomb_is_refused_by_its_ratio(client, settings):
    settings.TRAJHUB_MAX_ZIP_RATIO = 100
    bomb = b'{"messages": [], "pad": "' + b"0" * 3_000_000 + b'"}'
    assert_refused(
        share(client, make_zip(("bomb.json", bomb))),
        413,
        "over the limit of 100 to 1",
        "entry 'bomb.json'",
    )


def test_gzip_and_zip_limits_are_the_same_decompressed_limit(client, settings):
    """The CLI gzips what it sends: a zip inside gzip is inflated, then read as a zip."""
    data = make_zip(("one.json", ONE))
    response = client.post(API, {"file": SimpleUploadedFile("one.zip.gz", gzip.compress(data))})
    assert response.status_code == 201, response.content[:300]
    settings.TRAJHUB_MAX_DECOMPRESSED_BYTES = len(ONE) - 1
    Trajectory.objects.all().delete()
    assert_refused(share(client, data), 413, "inflate")


# --- what an archive must not hold ---------------------------------------------------------


def test_a_nested_archive_is_refused_by_name(client):
    inner = make_zip(("one.json", ONE))
    data = make_zip(("inner.zip", inner), ("one.json", ONE))
    assert_refused(share(client, data), 400, "nested archives", "entry 'inner.zip'")


def test_a_nested_archive_is_refused_by_its_bytes(client):
    data = make_zip(("looks.json", gzip.compress(ONE)))
    assert_refused(share(client, data), 400, "nested archives", "entry 'looks.json'")


@pytest.mark.parametrize("name", ["../escape.json", "/etc/passwd.json", "C:\\Users\\x.json"])
def test_names_are_never_paths(client, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    assert_refused(share(client, make_zip((name, ONE))), 400, "outside the archive")
    assert list(tmp_path.iterdir()) == []  # and nothing was written anywhere


def test_a_symbolic_link_is_refused(client):
    link = zipfile.ZipInfo("session.jsonl")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = make_zip((link, b"/home/alice/.ssh/id_rsa"), ("one.json", ONE))
    assert_refused(share(client, data), 400, "symbolic link", "entry 'session.jsonl'")


def test_an_encrypted_entry_is_refused(client):
    data = bytearray(make_zip(("one.json", ONE), method=zipfile.ZIP_STORED))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature)
        data[at + offset] |= 0x1  # the "encrypted" flag bit
    assert_refused(share(client, bytes(data)), 400, "encrypted", "entry 'one.json'")


def test_a_name_twice_is_refused(client):
    data = make_zip(("one.json", ONE), ("one.json", ONE))
    assert_refused(share(client, data), 400, "appears twice", "entry 'one.json'")


def test_a_broken_zip_is_a_400(client):
    assert_refused(share(client, b"PK\x03\x04" + b"\x00" * 40), 400, "not a valid zip archive")


def test_a_zip_of_unrelated_files_says_what_it_can_read(client):
    data = make_zip(("a.json", ONE), ("b.json", orjson.dumps(sharegpt())))
    assert_refused(
        share(client, data), 400, "neither an Inspect .eval log, a Claude Code session folder"
    )


def test_a_bad_file_in_a_zip_is_named_with_its_entry(client):
    data = make_zip(("notes/one.json", b'{"messages": [}'))
    response = share(client, data)
    assert_refused(response, 400, "not valid JSON")
    assert response.json()["error"]["where"].startswith("entry 'notes/one.json'")


# --- what a zip may hold -------------------------------------------------------------------


def test_a_zip_of_one_trajectory_file_is_that_file(client, owner):
    client.force_login(owner)
    data = make_zip(("__MACOSX/._one.json", b"junk"), ("chat/one.json", ONE))
    response = share(client, data)
    assert response.status_code == 201, response.content[:300]
    [shared] = response.json()["trajectories"]
    download = client.get(f"{API}/{shared['id']}/download", {"format": "original"})
    body = b"".join(download.streaming_content) if download.streaming else download.content
    assert orjson.loads(body) == openai_messages()  # the raw copy is the file, unzipped


def test_the_raw_body_may_be_a_zip(client, sample):
    response = client.post(
        API, data=sample("claude_code_session_folder.zip"), content_type="application/zip"
    )
    assert response.status_code == 201, response.content[:300]
    assert response.json()["trajectories"][0]["num_events"] == 8


def test_a_claude_code_session_folder_is_one_trajectory_with_its_subagent(sample):
    [trajectory] = parse(sample("claude_code_session_folder.zip")).trajectories
    steps = [
        (e.kind, e.type, e.data.get("subagent", {}).get("agent_id")) for e in trajectory.events
    ]
    assert steps == [
        ("message", "message", None),
        ("action", "Task", None),
        # The subagent's file, nested under the Task call, before that call's result.
        ("message", "message", "f00d"),
        ("action", "Glob", "f00d"),
        ("observation", "Glob", "f00d"),
        ("message", "message", "f00d"),
        ("observation", "Task", None),
        ("message", "message", None),
    ]
    nested = [e for e in trajectory.events if "subagent" in e.data]
    assert {e.data["subagent"]["parent"] for e in nested} == {"toolu_explore"}
    assert trajectory.title == "Which tests cover greet.py?"
    assert trajectory.metadata["models"] == {"claude-sonnet-4-5": 2, "claude-haiku-4-5": 2}


def test_a_session_folder_streamed_as_progress_too_is_not_repeated(sample):
    """Versions that write both progress lines and the subagent's file: its records once."""
    archive = zipfile.ZipFile(io.BytesIO(sample("claude_code_session_folder.zip")))
    names = archive.namelist()
    main = archive.read(names[0]).decode().splitlines()
    agent = [orjson.loads(line) for line in archive.read(names[1]).decode().splitlines()]
    progress = [
        orjson.dumps(
            {"type": "progress", "sessionId": "s", "uuid": f"p{n}", "parentToolUseID": "toolu_explore",
             "data": {"type": "agent_progress", "agentId": "f00d", "message": record}}
        ).decode()
        for n, record in enumerate(agent)
    ]  # fmt: skip
    lines = [main[0], main[1], *progress, main[2], main[3]]
    data = make_zip((names[0], "\n".join(lines).encode()), (names[1], archive.read(names[1])))
    [trajectory] = parse(data).trajectories
    assert len(trajectory.events) == 8


def test_a_bad_line_in_a_subagent_file_is_named_with_its_file(client, sample):
    archive = zipfile.ZipFile(io.BytesIO(sample("claude_code_session_folder.zip")))
    names = archive.namelist()
    agent = archive.read(names[1]).decode().splitlines()
    agent[1] = "{not json"
    data = make_zip((names[0], archive.read(names[0])), (names[1], "\n".join(agent).encode()))
    response = share(client, data)
    assert_refused(response, 400, "not valid JSON", f"{names[1]} line 2")


def test_the_upload_page_takes_a_zip(client, sample):
    response = client.post(
        "/upload/",
        {
            "file": SimpleUploadedFile("session.zip", sample("claude_code_session_folder.zip")),
            "visibility": "private",
        },
    )
    assert response.status_code == 303, response.content[:500]
    assert Trajectory.objects.get().num_events == 8


def test_the_upload_page_says_why_a_zip_is_refused(client, settings):
    settings.TRAJHUB_MAX_ZIP_ENTRIES = 1
    response = client.post(
        "/upload/",
        {"file": SimpleUploadedFile("two.zip", make_zip(("a.json", ONE), ("b.json", ONE)))},
    )
    assert response.status_code == 413
    assert "2 entries, over the limit of 1" in response.content.decode()
    assert Trajectory.objects.count() == 0


def test_the_preview_reads_zips_like_the_share_api(client, sample, settings):
    body = client.post(
        PREVIEW, {"file": SimpleUploadedFile("log.eval", sample("inspect_eval_log.eval"))}
    ).json()
    assert (body["format"], body["trajectories"], body["events"]) == ("inspect_log", 2, 16)
    settings.TRAJHUB_MAX_ZIP_ENTRIES = 2
    refused = client.post(
        PREVIEW, {"file": SimpleUploadedFile("log.eval", sample("inspect_eval_log.eval"))}
    )
    assert refused.status_code == 413
