"""/healthz: database, broker and storage, each checked for real."""

import pytest
from django.core.files.storage import storages

from config.celery_app import app as celery_app

pytestmark = pytest.mark.django_db


def test_all_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok", "storage": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_storage_probe_leaves_nothing_behind(client):
    storage = storages["default"]
    assert client.get("/healthz").status_code == 200
    if storage.exists("healthz"):
        assert storage.listdir("healthz")[1] == []


def test_unreachable_broker_answers_503_with_reason(client, monkeypatch):
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    monkeypatch.setitem(celery_app.conf, "broker_url", "redis://:secret-pw@127.0.0.1:9/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok" and body["storage"] == "ok"
    assert body["broker"].startswith("error: ")
    assert "secret-pw" not in body["broker"]


def test_unwritable_filesystem_broker_answers_503(client, monkeypatch, tmp_path):
    monkeypatch.setitem(celery_app.conf, "broker_url", "filesystem://")
    monkeypatch.setitem(
        celery_app.conf,
        "broker_transport_options",
        {"data_folder_in": str(tmp_path / "missing"), "data_folder_out": str(tmp_path / "missing")},
    )
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"].startswith("error: FileNotFoundError")


def test_broken_storage_answers_503(client, settings, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the storage folder should be")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(blocker)},
        },
    }
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["storage"].startswith("error: ")
    assert body["database"] == "ok"


def test_database_failure_answers_503(client, monkeypatch):
    from django.db import OperationalError

    from apps.core.views import health

    def refuse():
        raise OperationalError("connection to server at 127.0.0.1 refused")

    monkeypatch.setitem(health.CHECKS, "database", refuse)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert (
        response.json()["database"]
        == "error: OperationalError: connection to server at 127.0.0.1 refused"
    )


def test_only_get(client):
    assert client.post("/healthz").status_code == 405
