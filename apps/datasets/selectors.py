"""Reads of the release app: what is eligible for a release, what the quality gate leaves out,
and the releases and lists that pages and the API show."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Sum, TextField
from django.db.models.functions import Cast, Coalesce, Length

from apps.datasets.models import Release, ReleaseEntry, ReleaseFile, ReleaseStatus
from apps.datasets.optout_links import email_digest
from apps.trajectories.image_rule import image_releasable as releasable
from apps.trajectories.image_rule import releasable_q
from apps.trajectories.models import Event, Image, Trajectory, TrajectoryImage
from apps.trajectories.selectors.chains import stored_chain

if TYPE_CHECKING:
    from apps.accounts.models import User


# --- the rules that other work will sharpen: one function each --------------------------------


def scanner_version() -> str:
    """The version of the scan engine and rules a release was cleaned with (in its manifest);
    each trajectory records the version its last scan ran with."""
    from django.conf import settings

    from apps.moderation.scanning import scanner

    return scanner.version(settings.TRAJHUB_SCAN_RULE_CACHE)


def stale_scan_q() -> Q:
    """Trajectories whose last scan ran under other rules than today's (the rescan sweep is
    catching up with them, newest first)."""
    return ~Q(scan_version=scanner_version())


def image_releasable(image: Image) -> bool:
    """Whether an image's bytes go into a release; otherwise the row holds a placeholder.

    The site's rule (apps/trajectories/image_rule.py), so that a release never carries an
    image the site withholds: not dropped, and cleared by a moderator or read by OCR and found
    clean; an image nobody read goes in only under TRAJHUB_IMAGES_PUBLISH_UNREAD.
    """
    return releasable(image)


def images_withheld(release_trajectory_ids: QuerySet[Any]) -> tuple[int, int]:
    """(images of these trajectories, how many of them a release holds as placeholders)."""
    linked = Image.objects.filter(trajectory_links__trajectory_id__in=release_trajectory_ids)
    total = linked.values("pk").distinct().count()
    kept = linked.filter(releasable_q()).values("pk").distinct().count()
    return total, total - kept


# --- eligibility --------------------------------------------------------------------------------


def trajectory_eligible() -> QuerySet[Trajectory]:
    """In public(), with a licence agreed, not taken out by its contributor. (The gate below
    then leaves out what fails a quality rule.)"""
    return (
        Trajectory.objects.public().exclude(license="").filter(opt_out__isnull=True).order_by("id")
    )


@dataclass
class GateResult:
    """What goes in (ids in order) and what the gate left out, by rule."""

    ids: list[int]
    excluded: dict[str, int] = field(default_factory=dict)
    excluded_ids: dict[int, str] = field(default_factory=dict)


def quality_gate(candidates: QuerySet[Trajectory]) -> GateResult:
    """Apply each rule that is switched on (settings TRAJHUB_RELEASE_GATE_*), counting what it
    takes out. A trajectory is counted under the first rule it fails."""
    min_events = settings.TRAJHUB_RELEASE_MIN_EVENTS
    min_chars = settings.TRAJHUB_RELEASE_MIN_TEXT_CHARS
    rows = candidates.annotate(
        stored_events=Count("events"),
        text_chars=Coalesce(Sum(Length("events__text")), 0),
    ).values_list(
        "id",
        "num_events",
        "stored_events",
        "text_chars",
        "raw_path",
        "head_fingerprint",
        "chain_fingerprint",
    )
    stale = set(candidates.filter(stale_scan_q()).values_list("id", flat=True))
    excluded_ids: dict[int, str] = {}
    kept: list[tuple[int, int, str, str]] = []
    for pk, num_events, stored, chars, raw_path, head, chain in rows.iterator(chunk_size=2000):
        if settings.TRAJHUB_RELEASE_GATE_BROKEN and (stored != num_events or not raw_path):
            # Ingest records num_events and the raw upload with the events: a mismatch means
            # the import did not complete cleanly.
            excluded_ids[pk] = "broken_import"
        elif settings.TRAJHUB_RELEASE_GATE_EMPTY and (num_events < min_events or chars < min_chars):
            excluded_ids[pk] = "too_short"
        elif settings.TRAJHUB_RELEASE_GATE_STALE_SCAN and pk in stale:
            excluded_ids[pk] = "stale_scan"
        else:
            kept.append((pk, num_events, head, chain))
    if settings.TRAJHUB_RELEASE_GATE_DUPLICATES:
        for pk in _duplicates(kept):
            excluded_ids[pk] = "duplicate"
    ids = sorted(pk for pk, *_ in kept if pk not in excluded_ids)
    excluded: dict[str, int] = defaultdict(int)
    for rule in excluded_ids.values():
        excluded[rule] += 1
    return GateResult(ids=ids, excluded=dict(sorted(excluded.items())), excluded_ids=excluded_ids)


def _duplicates(kept: list[tuple[int, int, str, str]]) -> set[int]:
    """Exact and near duplicates: the same conversation shared twice (by one person or by
    several), and of a chain of continuations (each share's events a prefix of the next) all
    but the longest. Shares with the same first event are compared by their event chains; the
    longest (then the first shared) stays."""
    by_head: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for pk, num_events, head, chain in kept:
        if head:
            by_head[head].append((pk, num_events, chain))
    dropped: set[int] = set()
    for group in by_head.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda item: (-item[1], item[0]))
        keepers: list[tuple[int, int, str]] = []
        for pk, num_events, chain in group:
            for keeper_pk, _keeper_events, _keeper_chain in keepers:
                keeper = Trajectory(pk=keeper_pk)
                prefix = stored_chain(keeper, num_events)
                if len(prefix) == num_events and prefix and prefix[-1] == chain:
                    dropped.add(pk)
                    break
            else:
                keepers.append((pk, num_events, chain))
    return dropped


# --- pages and API --------------------------------------------------------------------------


def release_list_published() -> QuerySet[Release]:
    return Release.objects.filter(status=ReleaseStatus.PUBLISHED).order_by("-version")


def release_latest() -> Release | None:
    return release_list_published().first()


def release_get_published(version: int) -> Release | None:
    return release_list_published().filter(version=version).first()


def release_in_progress() -> Release | None:
    """The release being built or announced, if any (its progress is shown on the page)."""
    return Release.objects.filter(
        status__in=[ReleaseStatus.BUILDING, ReleaseStatus.ANNOUNCED]
    ).first()


def release_files(release: Release) -> QuerySet[ReleaseFile]:
    return release.files.order_by("config", "path")


def next_release_list(user: User) -> list[NextReleaseItem]:
    """The user's trajectories that the next release would hold or that they took out: those
    in the announced release (if one is open), then their other eligible public ones."""
    announced = Release.objects.filter(status=ReleaseStatus.ANNOUNCED).first()
    in_announced: set[int] = set()
    if announced is not None:
        in_announced = set(
            ReleaseEntry.objects.filter(release=announced, trajectory__owner=user).values_list(
                "trajectory_id", flat=True
            )
        )
    mine = (
        Trajectory.objects.public()
        .filter(owner=user)
        .exclude(license="")
        .annotate(taken_out=Q(opt_out__isnull=False))
        .order_by("-created_at", "-id")
        .values("id", "share_id", "title", "agent", "num_events", "taken_out")
    )
    return [
        NextReleaseItem(
            share_id=row["share_id"],
            title=row["title"],
            agent=row["agent"],
            num_events=row["num_events"],
            taken_out=row["taken_out"],
            in_announced=row["id"] in in_announced,
        )
        for row in mine
    ]


@dataclass
class NextReleaseItem:
    share_id: str
    title: str
    agent: str
    num_events: int
    taken_out: bool
    in_announced: bool


def announced_items_for_email(release: Release, email_hash: str) -> list[NextReleaseItem]:
    """An anonymous contributor's trajectories in an announced release (the notice's link)."""
    items = []
    rows = (
        Trajectory.objects.filter(release_entries__release=release, owner__isnull=True)
        .exclude(contact_email="")
        .annotate(taken_out=Q(opt_out__isnull=False))
        .order_by("id")
        .values("share_id", "title", "agent", "num_events", "taken_out", "contact_email")
    )
    for row in rows:
        if email_digest(row["contact_email"]) == email_hash:
            items.append(
                NextReleaseItem(
                    share_id=row["share_id"],
                    title=row["title"],
                    agent=row["agent"],
                    num_events=row["num_events"],
                    taken_out=row["taken_out"],
                    in_announced=True,
                )
            )
    return items


# Trajectories per batch of a release build: each batch is three short queries and one COPY.
RELEASE_BATCH = 500


def entry_batches(
    release: Release, first_id: int = 0, last_id: int | None = None, size: int = RELEASE_BATCH
) -> Iterator[list[int]]:
    """The trajectory ids of the release's entries (or of one id range), in order, `size` at a
    time: keyset pages, one short query each, so that no cursor stays open across batches (a
    COPY holds the connection while a batch is read)."""
    after = first_id - 1
    while True:
        qs = ReleaseEntry.objects.filter(release=release, trajectory_id__gt=after)
        if last_id is not None:
            qs = qs.filter(trajectory_id__lte=last_id)
        ids = list(qs.order_by("trajectory_id").values_list("trajectory_id", flat=True)[:size])
        if not ids:
            return
        yield ids
        after = ids[-1]


def events_of_trajectories(ids: list[int]) -> Generator[tuple, None, None]:
    """Every event of these trajectories (one batch), in (trajectory, position) order:
    `(trajectory_id, original_id, timestamp, source, kind, type, cause, text, data)`, `data`
    as JSON text (the caller parses it with orjson; Django's JSONField decodes with the
    standard library).

    Streamed with one `COPY ... TO STDOUT` of the ORM's own query, on Django's connection (so
    it sees what the caller's transaction sees), read in index order as the server sends it.
    (A server-side cursor outside a transaction is WITH HOLD: PostgreSQL materializes its whole
    result before the first row, and then each chunk is a round trip.) The connection is busy
    until the generator ends or is closed: the caller runs no other query meanwhile."""
    qs = (
        Event.objects.filter(trajectory_id__in=ids)
        .order_by("trajectory_id", "position")
        .annotate(data_text=Cast("data", TextField()))
        .values_list(
            "trajectory_id",
            "original_id",
            "timestamp",
            "source",
            "kind",
            "type",
            "cause",
            "text",
            "data_text",
        )
    )
    if connection.vendor != "postgresql":
        yield from qs.iterator(chunk_size=2000)
        return
    sql, params = qs.query.sql_with_params()
    parse = datetime.fromisoformat  # PostgreSQL's ISO output (psycopg requires DateStyle ISO)
    with (
        connection.cursor() as wrapper,
        wrapper.cursor.copy(f"COPY ({sql}) TO STDOUT", params) as copy,
    ):
        records = copy.rows()
        try:
            for pk, original_id, timestamp, source, kind, type_, cause, text, data in records:
                yield (
                    int(pk),
                    original_id,
                    parse(timestamp) if timestamp is not None else None,
                    source,
                    kind,
                    type_,
                    cause,
                    text,
                    data,
                )
        finally:
            # Left early (the build failed): read the rest of the batch rather than let
            # psycopg cancel the COPY, which would abort the transaction it runs in.
            for _ in records:
                pass


def trajectories_by_id(ids: list[int]) -> list[Any]:
    """These trajectories (one batch of a release), in id order, with what a release row needs."""
    return list(
        Trajectory.objects.filter(pk__in=ids)
        .order_by("id")
        .annotate(owner_email=F("owner__email"))
        .values(
            "id",
            "share_id",
            "owner_id",
            "owner_email",
            "contact_email",
            "title",
            "source_format",
            "agent",
            "model_name",
            "agent_version",
            "metadata",
            "polarity",
            "feedback_text",
            "license",
            "redactions",
            "num_events",
            "published_at",
            "created_at",
        )
    )


def images_of_trajectories(ids: list[int]) -> list[TrajectoryImage]:
    """The image links (with their Image) of these trajectories, in (trajectory, sha256) order."""
    return list(
        TrajectoryImage.objects.filter(trajectory_id__in=ids)
        .select_related("image")
        .order_by("trajectory_id", "image__sha256")
    )
