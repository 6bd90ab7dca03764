"""The suite keeps lint, formatting and types honest: CI runs `make test`, not `make lint`.

ruff (lint + format) over the whole repository and mypy with django-stubs over the modules
[tool.mypy] lists in pyproject.toml (services, selectors, importers, exporters, tasks). mypy keeps
its incremental cache in .mypy_cache, so a second run takes about a second.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    # The venv's ruff (the one requirements.txt pins), on the repository root like `make lint`.
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ruff_finds_no_lint_errors() -> None:
    result = _ruff("check", "--output-format", "concise", ".")
    assert result.returncode == 0, f"`ruff check .` found problems:\n{result.stdout}{result.stderr}"


def test_ruff_format_would_change_nothing() -> None:
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, (
        f"`ruff format --check .` would reformat (run `ruff format <file>`):\n"
        f"{result.stdout}{result.stderr}"
    )


def _configured_sources() -> list[Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    sources: list[Path] = []
    for entry in config["files"]:
        path = ROOT / entry
        sources.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return sources


def test_mypy_finds_no_type_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    # The config's `files` are relative to the repository root, as `make lint` runs it.
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = mypy_api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, f"mypy found problems:\n{stdout}{stderr}"
    # A clean run of nothing is no check: every configured module was read.
    checked = re.search(r"no issues found in (\d+) source files?", stdout)
    assert checked is not None, stdout
    sources = _configured_sources()
    assert all(path.is_file() for path in sources), [p for p in sources if not p.is_file()]
    assert int(checked.group(1)) == len(sources) >= 30
