"""/healthz: can this process reach its database, its task broker and its file storage?

Load balancers and `docker compose` poll it. 200 when all three answer, 503 otherwise, with a short
reason per failing check. Reasons never carry credentials (URLs are cut to scheme, host and port).
The broker is the current Celery app's, the one config/celery_app.py sets up from the settings
(an app never imports config).
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from celery import current_app as celery_app
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import connections
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

BROKER_TIMEOUT_SECONDS = 3.0
_CREDENTIALS = re.compile(r"(\w+://)[^@/\s]*@")


def check_database() -> None:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")
        if cursor.fetchone()[0] != 1:
            raise RuntimeError("SELECT 1 did not return 1")


def check_broker() -> None:
    url = celery_app.conf.broker_url or ""
    if url.startswith("filesystem:"):
        # The embedded broker is a folder that web, worker and beat share: it must be writable.
        options = celery_app.conf.broker_transport_options or {}
        folder = Path(options.get("data_folder_out", "data_out"))
        handle, probe = tempfile.mkstemp(prefix=".healthz-", dir=folder)
        os.close(handle)
        os.unlink(probe)
        return
    with celery_app.connection_for_write(
        url,
        connect_timeout=BROKER_TIMEOUT_SECONDS,
        transport_options={
            **(celery_app.conf.broker_transport_options or {}),
            "socket_connect_timeout": BROKER_TIMEOUT_SECONDS,
            "socket_timeout": BROKER_TIMEOUT_SECONDS,
        },
    ) as connection:
        connection.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_SECONDS)
        # ensure_connection only opens a socket for some transports; a channel talks to the broker.
        connection.default_channel  # noqa: B018


def check_storage() -> None:
    storage = storages["default"]
    payload = secrets.token_hex(8).encode()
    name = storage.save(f"healthz/probe-{payload.decode()}.txt", ContentFile(payload))
    try:
        with storage.open(name, "rb") as handle:
            if handle.read() != payload:
                raise RuntimeError("read back different bytes than written")
    finally:
        storage.delete(name)


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "broker": check_broker,
    "storage": check_storage,
}


def _reason(exc: BaseException) -> str:
    text = _CREDENTIALS.sub(r"\1", f"{type(exc).__name__}: {exc}".strip())
    return " ".join(text.split())[:200]


@never_cache
@require_GET
def healthz(request):
    report: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
            report[name] = "ok"
        except Exception as exc:  # any failure is a finding, never a 500
            report[name] = f"error: {_reason(exc)}"
    healthy = all(value == "ok" for value in report.values())
    return JsonResponse(report, status=200 if healthy else 503)
