"""Download all my data: one zip archive of an account, built by a Celery task.

The archive holds, per trajectory, the original upload and the OpenHands export (originals, as
the owner sees them), and account.json (the account, its tokens without secrets, its notices,
its trajectories' metadata). It is written entry by entry into a temporary file on disk and
then copied into storage in chunks, so memory holds one trajectory at a time, never the whole
archive.
"""

from __future__ import annotations

import json
import logging
import secrets
import tempfile
import zipfile
from datetime import timedelta
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import ApiToken, DataExport, ExportState, Notice, User
from apps.accounts.notices import notice_send
from apps.core.queueing import enqueue
from apps.owners.export_sections import export_sections
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors import trajectory_export
from apps.trajectories.services import raw_read

logger = logging.getLogger(__name__)

EXPORT_STORAGE = "default"  # private: only the views that check the account serve from it


def _storage() -> Storage:
    return storages[EXPORT_STORAGE]


def export_request(*, user: User) -> DataExport:
    """Ask for a new archive; the task builds it after commit. While one is being built, that
    one is returned (one at a time per account)."""
    current = DataExport.objects.filter(
        user=user, state__in=[ExportState.PENDING, ExportState.BUILDING]
    ).first()
    if current is not None:
        return current
    try:
        with transaction.atomic():
            export = DataExport.objects.create(user=user)
    except IntegrityError:  # asked twice at once: the other request's export stands
        return DataExport.objects.get(
            user=user, state__in=[ExportState.PENDING, ExportState.BUILDING]
        )
    transaction.on_commit(lambda: _queue(export.pk))
    return export


def _queue(export_id: int) -> None:
    try:
        enqueue("apps.accounts.tasks.export_build_task", export_id)
    except Exception:
        logger.exception("could not queue data export %s", export_id)


def _dt(value: Any) -> str | None:
    return value.isoformat() if value else None


def _account_data(user: User, trajectories: list[dict[str, Any]]) -> dict[str, Any]:
    tokens = ApiToken.objects.filter(user=user).order_by("created_at")
    notices = Notice.objects.filter(user=user).order_by("created_at")
    return {
        "account": {
            "username": user.get_username(),
            "email": user.email,
            "first_name": user.first_name,
            "last_name": user.last_name,
            "date_joined": _dt(user.date_joined),
            "last_login": _dt(user.last_login),
        },
        "api_tokens": [
            {
                "name": token.name,
                "prefix": token.prefix,
                "created_at": _dt(token.created_at),
                "last_used_at": _dt(token.last_used_at),
            }
            for token in tokens
        ],
        "notices": [
            {
                "kind": notice.kind,
                "share_id": notice.share_id,
                "subject": notice.subject,
                "reason": notice.reason,
                "created_at": _dt(notice.created_at),
                "read_at": _dt(notice.read_at),
            }
            for notice in notices
        ],
        "trajectories": trajectories,
    }


def _trajectory_meta(trajectory: Trajectory, files: list[str]) -> dict[str, Any]:
    return {
        "id": trajectory.share_id,
        "url": settings.SITE_URL + trajectory.get_absolute_url(),
        "title": trajectory.title,
        "source_format": trajectory.source_format,
        "agent": trajectory.agent,
        "model": trajectory.model_name,
        "agent_version": trajectory.agent_version,
        "polarity": trajectory.polarity,
        "feedback_text": trajectory.feedback_text,
        "visibility": trajectory.visibility,
        "review_state": trajectory.review_state,
        "license": trajectory.license,
        "num_events": trajectory.num_events,
        "num_bytes": trajectory.num_bytes,
        "created_at": _dt(trajectory.created_at),
        "updated_at": _dt(trajectory.updated_at),
        "files": files,
    }


def _write_archive(user: User, handle: Any) -> int:
    """Write the zip into `handle` (a file on disk); returns the number of trajectories."""
    metas: list[dict[str, Any]] = []
    queryset = (
        Trajectory.objects.filter(owner=user)
        .defer("search_text", "search_vector")
        .order_by("created_at", "id")
    )
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for trajectory in queryset.iterator(chunk_size=100):
            folder = f"trajectories/{trajectory.share_id}"
            files = []
            original = raw_read(trajectory)
            if original:
                name = trajectory.raw_filename.replace("/", "_")[:100] or "original.json"
                files.append(f"{folder}/original/{name}")
                archive.writestr(files[-1], original)
            del original
            files.append(f"{folder}/openhands.json")
            archive.writestr(files[-1], trajectory_export(trajectory, user, "openhands"))
            metas.append(_trajectory_meta(trajectory, files))
        archive.writestr(
            "account.json",
            json.dumps(_account_data(user, metas), indent=2, ensure_ascii=False),
        )
        extra = []
        for name, section, description in export_sections():
            archive.writestr(
                f"{name}.json", json.dumps(section(user), indent=2, ensure_ascii=False)
            )
            extra.append(f"{name}.json: {description}\n")
        archive.writestr(
            "README.txt",
            f"Everything your account {user.get_username()} holds on {settings.SITE_NAME}, "
            f"exported {timezone.now():%Y-%m-%d %H:%M} UTC.\n\n"
            "account.json: the account, its API tokens (names only, no secrets), its notices and\n"
            "  the metadata of every trajectory.\n"
            "trajectories/<id>/original/: the file or payload as you shared it.\n"
            "trajectories/<id>/openhands.json: the events as an OpenHands event array.\n"
            + "".join(extra),
        )
    return len(metas)


def export_build(*, export: DataExport) -> DataExport | None:
    """Build one archive (the task calls this). Conditional on the export still waiting, so a
    task delivered twice builds it once. Tells the account by an export_ready notice."""
    started = DataExport.objects.filter(pk=export.pk, state=ExportState.PENDING).update(
        state=ExportState.BUILDING
    )
    if started != 1:
        return None
    user = export.user
    storage = _storage()
    name = f"exports/{user.pk}/{secrets.token_hex(16)}.zip"
    try:
        with tempfile.TemporaryFile() as handle:
            count = _write_archive(user, handle)
            size = handle.tell()
            handle.seek(0)
            saved = storage.save(name, File(handle, name="export.zip"))
    except Exception:
        DataExport.objects.filter(pk=export.pk).update(
            state=ExportState.FAILED, finished_at=timezone.now()
        )
        logger.exception("data export %s failed", export.pk)
        raise
    with transaction.atomic():
        DataExport.objects.filter(pk=export.pk).update(
            state=ExportState.READY,
            path=saved,
            size=size,
            trajectories=count,
            finished_at=timezone.now(),
        )
        _delete_older(user, keep=export.pk)
        notice_send(
            kind="export_ready",
            user=user,
            link=settings.SITE_URL + reverse("me-export-download", args=[export.pk]),
        )
    export.refresh_from_db()
    logger.info("data export %s built: %d trajectories, %d bytes", export.pk, count, size)
    return export


def _delete_older(user: User, *, keep: int) -> None:
    older = (
        DataExport.objects.filter(user=user)
        .exclude(pk=keep)
        .exclude(state__in=[ExportState.PENDING, ExportState.BUILDING])
    )
    paths = [path for path in older.values_list("path", flat=True) if path]
    older.delete()
    transaction.on_commit(lambda: _delete_paths(paths))


def _delete_paths(paths: list[str]) -> None:
    storage = _storage()
    for path in paths:
        try:
            storage.delete(path)
        except OSError:
            logger.warning("could not delete an old export file")


def export_delete_files(*, user: User) -> None:
    """Remove the account's archives (account deletion)."""
    paths = [
        path for path in DataExport.objects.filter(user=user).values_list("path", flat=True) if path
    ]
    transaction.on_commit(lambda: _delete_paths(paths))


def export_expired_sweep() -> int:
    """Delete archives older than TRAJHUB_EXPORT_KEEP_DAYS (a periodic task)."""
    cutoff = timezone.now() - timedelta(days=settings.TRAJHUB_EXPORT_KEEP_DAYS)
    expired = DataExport.objects.filter(state=ExportState.READY, finished_at__lt=cutoff)
    paths = [path for path in expired.values_list("path", flat=True) if path]
    count = expired.delete()[0]
    _delete_paths(paths)
    return count


def export_open(export: DataExport) -> IO[bytes]:
    """The archive's file, opened from storage for streaming."""
    return _storage().open(export.path, "rb")


__all__ = [
    "export_build",
    "export_delete_files",
    "export_expired_sweep",
    "export_open",
    "export_request",
]
