"""Mending published release cards that printed raw metadata (issue 20).

Cards built before the redacted view's columns existed printed each trajectory's agent and model
as sent, secrets included, in their "By agent" and "By model" tables. A release's files are
immutable, with this one exception: the card of every published release is made again from the
redacted view, its README.md replaced in storage, the replacement recorded in manifest.json
(`card_rebuilt`) and, for each trajectory whose raw value the old card printed, in the audit
log; their owners are told which kinds of secret were printed, and asked to revoke them.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from apps.datasets.models import Release, ReleaseEntry, ReleaseFile
from apps.datasets.parquet import WrittenFile, sha256_of
from apps.datasets.services import card as cards
from apps.datasets.services import storage
from apps.trajectories.shown import SHOWN_FIELDS

logger = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*?)(?:_\d+)?>")
REASON = "the card printed agent or model names before redaction"


@dataclass
class MendResult:
    releases: list[int] = field(default_factory=list)  # versions whose card was replaced
    files_replaced: int = 0
    trajectories: int = 0  # whose raw value an old card printed
    notices: int = 0


def _split(card: str) -> tuple[str, str]:
    """(front matter with its fences, body)."""
    if card.startswith("---\n"):
        end = card.find("\n---\n", 4)
        if end != -1:
            return card[: end + 5], card[end + 5 :]
    return "", card


def _printed_raw(release: Release, old_card: str) -> dict[int, set[str]]:
    """{trajectory id: kinds} of the entries whose raw agent or model the old card printed
    where the redacted view hides something."""
    printed: dict[int, set[str]] = {}
    rows = ReleaseEntry.objects.filter(release=release, trajectory__isnull=False).values(
        "trajectory_id",
        *(f"trajectory__{raw}" for raw in SHOWN_FIELDS.values()),
        *(f"trajectory__{column}" for column in SHOWN_FIELDS),
    )
    for row in rows:
        for column, raw in SHOWN_FIELDS.items():
            value, shown = row[f"trajectory__{raw}"], row[f"trajectory__{column}"]
            if value and shown != value and cards.table_cell(value) in old_card:
                kinds = {match.group(1) for match in _PLACEHOLDER.finditer(shown)}
                printed.setdefault(row["trajectory_id"], set()).update(kinds or {"SECRET"})
    return printed


def _replace_files(release: Release, new_card: str, when: str) -> bool:
    """README.md replaced and manifest.json updated in storage, and their rows; False when the
    release's files are gone (taken down)."""
    if release.files_deleted or not storage.release_storage().exists(
        f"{release.prefix}/manifest.json"
    ):
        return False
    with storage.open_file(release.prefix, "manifest.json") as handle:
        manifest = json.loads(handle.read())
    with tempfile.TemporaryDirectory(prefix=f"card-{release.version}-") as folder:
        readme = Path(folder) / "README.md"
        readme.write_text(new_card, encoding="utf-8")
        size, digest = readme.stat().st_size, sha256_of(readme)
        for item in manifest.get("files", []):
            if item.get("path") == "README.md":
                item.update(size=size, sha256=digest)
        manifest.setdefault("card_rebuilt", []).append({"at": when, "reason": REASON})
        manifest_path = Path(folder) / "manifest.json"
        manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        storage.upload(release.prefix, "README.md", readme)
        storage.upload(release.prefix, "manifest.json", manifest_path)
        ReleaseFile.objects.filter(release=release, path="README.md").update(
            size=size, sha256=digest
        )
        ReleaseFile.objects.filter(release=release, path="manifest.json").update(
            size=manifest_path.stat().st_size, sha256=sha256_of(manifest_path)
        )
    return True


def release_cards_mend(*, progress: Callable[[int, int], None] | None = None) -> MendResult:
    """Make the card of every published release again from the redacted view; replace it where
    it differs (in the database and in storage), record it and tell the affected owners."""
    from apps.accounts.notices import notice_send
    from apps.moderation.audit import audit_record
    from apps.moderation.models import ActorKind, AuditAction
    from apps.trajectories.models import Trajectory

    result = MendResult()
    releases = list(Release.objects.filter(published_at__isnull=False).order_by("version"))
    affected: dict[int, set[str]] = defaultdict(set)
    in_release: dict[int, list[int]] = defaultdict(list)
    for number, release in enumerate(releases, start=1):
        cards.index_entries(release)
        front, _old_body = _split(release.card)
        previous = release.previous if release.previous_id else None
        listed = [
            WrittenFile(
                config=row.config,
                path=row.path,
                local=Path(),
                size=row.size,
                sha256=row.sha256,
                num_rows=row.num_rows,
            )
            for row in release.files.exclude(config="")
        ]
        _new_front, body = _split(cards.card_text(release, listed, previous))
        # The front matter is ours alone (configs, sizes, licence): kept as published.
        new_card = (front or _new_front) + body
        if new_card != release.card:
            when = timezone.now().isoformat()
            printed = _printed_raw(release, release.card)
            replaced = _replace_files(release, new_card, when)
            with transaction.atomic():
                Release.objects.filter(pk=release.pk).update(card=new_card)
                share_ids = dict(
                    Trajectory.objects.filter(pk__in=printed).values_list("pk", "share_id")
                )
                for pk, kinds in printed.items():
                    audit_record(
                        action=AuditAction.RELEASE_CARD_REBUILT,
                        share_id=share_ids[pk],
                        actor_kind=ActorKind.OPERATOR,
                        reason=REASON,
                        details={
                            "release": release.version,
                            "kinds": sorted(kinds),
                            "files_replaced": replaced,
                        },
                    )
            for pk, kinds in printed.items():
                affected[pk].update(kinds)
                in_release[pk].append(release.version)
            result.releases.append(release.version)
            result.files_replaced += replaced
            logger.info("release %s: card rebuilt from the redacted view", release.name)
        if progress is not None:
            progress(number, len(releases))
    for trajectory in Trajectory.objects.filter(pk__in=affected).select_related("owner"):
        versions = ", ".join(f"v{v}" for v in in_release[trajectory.pk])
        named = ", ".join(
            kind.replace("_", " ").lower() for kind in sorted(affected[trajectory.pk])
        )
        notice_send(
            kind="secret_published",
            trajectory=trajectory,
            reason=f"What was printed: {named} (in the card of release {versions}).",
        )
        result.notices += 1
    result.trajectories = len(affected)
    return result
