"""Schemathesis against the project's own OpenAPI schema (/api/schema), in process through the
WSGI application: for every operation, a bounded number of generated requests, anonymous and
with an API token. No answer is a 5xx, and every answer matches what the schema documents
(status code, content type, headers, body), so the schema tells clients the truth.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from apps.accounts.services import api_token_create
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

EXAMPLES = 12  # per operation and caller: the suite stays fast; CI runs them on every push
# Every check Schemathesis has for answers. Left out: the checks that generate requests the
# schema calls invalid and expect a refusal (the API takes unknown query parameters and
# ignores them, as most APIs do), and the ones that need stateful links between operations.
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_headers_conformance,
    schemathesis.checks.response_schema_conformance,
]


@pytest.fixture(autouse=True)
def world(db, settings):
    # Called as a WSGI application, Django closes its database connection after each request
    # (the test client turns that off the same way): the test's transaction must stay open.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield from _world(settings)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def _world(settings):
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 10_000  # generated shares are not a flood
    # Something to list, fetch, page through and download.
    make_trajectory(steps=3)
    yield


def _load():
    from config.wsgi import application

    # The schema view reads no rows: loading it at collection time needs no database.
    return schemathesis.openapi.from_wsgi("/api/schema", application)


schema = _load()
HYPOTHESIS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


@schema.parametrize()
@HYPOTHESIS
def test_anonymous_callers_get_what_the_schema_says(case):
    case.call_and_validate(checks=CHECKS)


@pytest.fixture
def token(owner):
    return api_token_create(user=owner, name="schemathesis")[1]


@schema.parametrize()
@HYPOTHESIS
def test_token_callers_get_what_the_schema_says(case, token):
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)


def test_the_schema_documents_the_openhands_drop_in(client):
    document = client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    for path in ("/share_od_trajectory", "/api/share"):
        operation = document["paths"][path]["post"]
        assert "application/json" in operation["requestBody"]["content"]
        for status in ("200", "400", "413", "429"):
            assert status in operation["responses"], (path, status)


def test_paginated_answers_are_documented_as_pages(client):
    document = client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    for path in ("/api/v1/trajectories", "/api/v1/trajectories/{share_id}/events"):
        ok = document["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
        ref = ok["schema"]["$ref"].rsplit("/", 1)[-1]
        page = document["components"]["schemas"][ref]
        assert page["type"] == "object"
        assert {"next", "previous", "results"} <= set(page["properties"])
        assert page["properties"]["results"]["type"] == "array"
