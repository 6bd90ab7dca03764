"""The OpenAPI schema and its docs page."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_schema_generates_and_validates_without_warnings(capsys):
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schema = out.getvalue()
    for path in (
        "/api/v1/trajectories:",
        "/api/v1/trajectories/{share_id}:",
        "/api/v1/trajectories/{share_id}/events:",
        "/api/v1/trajectories/{share_id}/download:",
    ):
        assert path in schema
    assert "apiToken" in schema
    assert "Warning" not in capsys.readouterr().err


def test_schema_and_docs_are_served(client):
    response = client.get("/api/schema")
    assert response.status_code == 200 and b"TrajHub API" in response.content
    assert client.get("/api/docs").status_code == 200
