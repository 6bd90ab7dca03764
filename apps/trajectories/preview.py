"""What the upload preview tells a sharer about an imported, unstored trajectory, beyond its
format and counts: which files' contents the session carries (a `.env` the agent read, private
code), and what the scan would redact.

The scan lives in moderation, above this app: moderation registers its report here from its
`ready()` (`register_report`), as core's error handler takes trajectories' errors, so that this
app never imports it. Pure functions over the importers' output: nothing is stored or logged.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from apps.trajectories.importers.base import CanonicalEvent, CanonicalTrajectory

# A report answers with fields for the preview's item (added, or replacing the plain ones:
# moderation's gives "redactions" and the "title" as the pages would show it).
Report = Callable[[CanonicalTrajectory], dict[str, Any]]
_REPORTS: dict[str, Report] = {}

# Tool arguments that name a file whose contents the tool reads or writes.
_PATH_KEYS = ("file_path", "notebook_path", "absolute_path", "target_file", "path", "filename")
# Shell commands that print a file.
_READERS = {"cat", "head", "tail", "less", "more", "bat", "nl", "tac", "type", "strings", "xxd"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# Names of files that usually hold secrets or private keys: flagged in the preview.
_SENSITIVE = re.compile(
    r"(^|[/\\])(\.env(\.[\w.-]+)?|\.netrc|\.npmrc|\.pypirc|\.pgpass|\.git-credentials|"
    r"id_(rsa|dsa|ecdsa|ed25519)|credentials(\.\w+)?|secrets?(\.\w+)?|kubeconfig|"
    r"[\w.-]+\.(pem|key|p12|pfx|jks|keystore|kdbx))$",
    re.IGNORECASE,
)
MAX_FILES = 200


def register_report(name: str, report: Report) -> None:
    """Add fields to every preview item: report(trajectory) -> {field: value}."""
    _REPORTS[name] = report


def reports(trajectory: CanonicalTrajectory) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for report in _REPORTS.values():
        fields.update(report(trajectory))
    return fields


def sensitive(path: str) -> bool:
    return bool(_SENSITIVE.search(path.strip()))


def files_included(trajectory: CanonicalTrajectory) -> list[dict[str, Any]]:
    """Each file whose contents the agent read or wrote in the session, with the events that
    did it (positions, as the page numbers events from 0) and whether its name says it
    usually holds secrets. Sensitive ones first, then in order of first appearance."""
    seen: dict[str, list[int]] = {}
    for position, event in enumerate(trajectory.events):
        if event.kind != "action":
            continue
        for path in _paths_of(event):
            places = seen.setdefault(path, [])
            if position not in places:
                places.append(position)
    files = [
        {"path": path, "events": places[:20], "sensitive": sensitive(path)}
        for path, places in seen.items()
    ]
    files.sort(key=lambda item: not item["sensitive"])  # stable: first appearance otherwise
    return files[:MAX_FILES]


def _paths_of(event: CanonicalEvent) -> Iterator[str]:
    data = event.data if isinstance(event.data, dict) else {}
    arguments = data.get("input") or data.get("arguments") or data.get("args") or {}
    if isinstance(arguments, dict):
        for key in _PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and _is_file(value):
                yield value
        command = arguments.get("command") or arguments.get("cmd")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if isinstance(command, str):
            yield from _shell_reads(command)
    patch = arguments if isinstance(arguments, str) else event.text
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        yield from (match.strip() for match in _PATCH_FILE.findall(patch))
    elif event.type in ("run", "Bash", "shell", "local_shell_call") and isinstance(event.text, str):
        yield from _shell_reads(event.text)


def _is_file(value: str) -> bool:
    value = value.strip()
    if not value or value in (".", "..", "./", "/") or value.endswith(("/", "\\")):
        return False
    name = PureWindowsPath(value).name if "\\" in value else PurePosixPath(value).name
    return bool(name) and "\n" not in value


def _shell_reads(command: str) -> Iterator[str]:
    """Files a shell command prints: `cat .env`, `head -n 5 a.py && tail b.log`."""
    for part in re.split(r"&&|\|\||[;|\n]", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        if not words or PurePosixPath(words[0]).name not in _READERS:
            continue
        skip = False
        for word in words[1:]:
            if skip:
                skip = False
                continue
            if word in ("-n", "-c", "--lines", "--bytes"):
                skip = True  # the option's value, not a file
                continue
            if word.startswith("-") or word.startswith(("<", ">")):
                continue
            if _is_file(word):
                yield word
