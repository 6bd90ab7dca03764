"""The data export and its notice email through a real Celery worker on the real broker (Redis):
the request queues the build after commit, the worker builds the archive into storage, then
queues the export_ready email, which the worker sends."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from apps.accounts.models import DataExport, Notice
from apps.owners.services.export import export_request
from tests.conftest import skip_or_fail
from tests.ingest_helpers import make_trajectory


@pytest.fixture
def worker(transactional_db, settings):
    if not settings.REDIS_URL:
        skip_or_fail("a real worker needs Redis as the broker (REDIS_URL)")
    from celery.contrib.testing.worker import start_worker

    from config.celery_app import app

    app.conf.task_always_eager = False
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=20):
            yield app
    finally:
        app.conf.task_always_eager = True


def _wait(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("the worker did not get there in time")


def test_export_is_built_and_announced_by_the_worker(worker, owner, private_storage, mailoutbox):
    owner.email = "owner@example.org"
    owner.save()
    make_trajectory(owner=owner, visibility="private")
    export = export_request(user=owner)

    ready = _wait(lambda: DataExport.objects.filter(pk=export.pk, state="ready").first())
    assert ready.size > 0 and (private_storage / ready.path).exists()
    notice = _wait(lambda: Notice.objects.filter(user=owner, kind="export_ready").first())
    _wait(lambda: Notice.objects.filter(pk=notice.pk, emailed_at__isnull=False).exists())
    [mail] = mailoutbox
    assert mail.to == ["owner@example.org"] and "/me/export/" in mail.body
    assert settings.CELERY_BROKER_URL.startswith("redis://")
