"""docker/gunicorn.conf.py: loopback by default (a forged X-Forwarded-For needs direct access),
no shared control socket; compose binds its private network explicitly."""

from __future__ import annotations

import runpy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_gunicorn_binds_loopback_by_default_and_has_no_control_socket(monkeypatch):
    monkeypatch.delenv("GUNICORN_BIND", raising=False)
    monkeypatch.delenv("GUNICORN_CONTROL_SOCKET", raising=False)
    conf = runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))
    assert conf["bind"] == "127.0.0.1:8000"
    assert conf["control_socket_disable"] is True


def test_compose_binds_gunicorn_on_its_private_network():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    assert compose["services"]["web"]["environment"]["GUNICORN_BIND"] == "0.0.0.0:8000"
