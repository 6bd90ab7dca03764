"""Moderation writes: the scan that moves a trajectory out of `pending`, and moderator actions.

Every state change is a conditional update (`filter(pk=..., review_state=OLD).update(...) == 1`)
and leaves an AuditEntry. The scan reads the trajectory outside any transaction (it may be large),
then writes its redactions, findings and decision in one transaction only if the trajectory did not
change meanwhile; if it did, the change sent its own `trajectory_stored` and a new scan follows.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from apps.moderation import scanners
from apps.moderation.audit import DELETION_ACTORS, audit_record, reviewer_kind
from apps.moderation.errors import ModerationError
from apps.moderation.models import ActorKind, AuditAction, AuditEntry, Finding, FindingCategory
from apps.trajectories.models import Event, Image, ReviewState, Trajectory, Visibility
from apps.trajectories.services import (
    announce_public_change,
    trajectory_redaction_index_refresh,
    trajectory_search_refresh,
)

if TYPE_CHECKING:
    from datetime import datetime

    from apps.accounts.models import User

logger = logging.getLogger(__name__)

# Strings the scan skips: references to stored images and inline image payloads.
_SKIPPED_PREFIXES = ("trajhub-image:", "data:image/")
# Strings per scan_many call: large enough to amortize the call, small enough for memory.
_BATCH_STRINGS = 2000
_BATCH_CHARS = 1 << 20
# Fields compared before writing: if any changed while we scanned, the scan is stale.
_SNAPSHOT_FIELDS = (
    "updated_at",
    "num_events",
    "chain_fingerprint",
    "title",
    "feedback_text",
    "metadata",
)


@dataclass(frozen=True)
class ScanResult:
    """What one scan found and decided."""

    trajectory_id: int
    review_state: str  # the state after the scan
    counts: dict[str, int] = field(default_factory=dict)  # kind -> occurrences
    redactions: int = 0  # distinct originals with a placeholder
    stored_findings: int = 0  # Finding rows written (capped by TRAJHUB_SCAN_MAX_FINDINGS)
    changed: bool = False  # the scan moved the trajectory out of `pending`
    stale: bool = (
        False  # the trajectory changed (or vanished) while it was scanned: nothing written
    )

    @property
    def has_secrets(self) -> bool:
        return any(kind in scanners.SECRET_KINDS for kind in self.counts)


@dataclass(frozen=True)
class _Located:
    position: int | None
    path: str
    detection: scanners.Detection


def scanner_from_settings() -> scanners.Scanner:
    return scanners.Scanner(
        scanners.Allowlist.build(settings.TRAJHUB_SCAN_ALLOWLIST),
        cache_dir=settings.TRAJHUB_SCAN_RULE_CACHE,
    )


def masked_preview(value: str) -> str:
    """Enough to recognise a value in the admin, not enough to use it: `sk-a…Zq (51 chars)`."""
    flat = " ".join(value.split())
    length = len(value)
    if length <= 6:
        shown = f"{flat[:1]}…"
    elif length < 16:
        shown = f"{flat[:2]}…{flat[-1:]}"
    else:
        shown = f"{flat[:4]}…{flat[-2:]}"
    return f"{shown} ({length} chars)"


def placeholder_label(kind: str) -> str:
    return kind.upper()


# --- Walking a trajectory -----------------------------------------------------------------------


def _strings(value: Any, path: str) -> Iterator[tuple[str, str, str | None]]:
    """(path, string, key naming it or None) for every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield path, value, None
    elif isinstance(value, dict):
        for key, item in value.items():
            key = str(key)
            item_path = f"{path}.{key}" if path else key
            yield f"{item_path}/key", key, None
            if isinstance(item, str):
                yield item_path, item, key
            else:
                yield from _strings(item, item_path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def _entries(
    trajectory: Trajectory, read: list[str] | None = None
) -> Iterator[tuple[int | None, str, str, str | None]]:
    """(event position or None, path, string, key) in document order: the trajectory's own
    fields, then the events by position. Events stream from the database in chunks."""
    yield None, "title", trajectory.title, None
    yield None, "feedback_text", trajectory.feedback_text, None
    # Shown beside the title on every public surface (taken from the events' own fields).
    yield None, "agent", trajectory.agent, None
    yield None, "model_name", trajectory.model_name, None
    yield None, "agent_version", trajectory.agent_version, None
    for path, text, key in _strings(trajectory.metadata or {}, "metadata"):
        yield None, path, text, key
    events = (
        Event.objects.filter(trajectory_id=trajectory.pk)
        .order_by("position")
        .values_list("position", "text", "data")
        .iterator(chunk_size=500)
    )
    for position, text, data in events:
        yield position, "text", text, None
        for path, value, key in _strings(data or {}, "data"):
            yield position, path, value, key
    if settings.TRAJHUB_OCR:
        yield from _image_texts(trajectory, read)


IMAGE_PATH = "image:"  # a finding's path in an image: "image:<sha256>"


def _image_texts(
    trajectory: Trajectory, read: list[str] | None = None
) -> Iterator[tuple[int | None, str, str, str | None]]:
    """Text read from the trajectory's images by OCR, scanned like any other text. The sha256
    of every image read is appended to `read` (its OCR state is written with the scan). An
    image a moderator dropped is not read: it is shown to no one else, and its secret must not
    hold the trajectory again."""
    from apps.moderation.scanning import ocr
    from apps.trajectories.services.storage import image_read

    if not ocr.available():
        logger.warning("TRAJHUB_OCR is on but tesseract is not installed: images not scanned")
        return
    images = Image.objects.filter(
        trajectory_links__trajectory_id=trajectory.pk, dropped_at__isnull=True
    ).order_by("id")
    key = ocr_key()
    for image in images.iterator(chunk_size=50):
        if image.ocr_version == key and not image.ocr_findings:
            # Read clean by these rules and this allowlist already (by this or another
            # trajectory: the bytes are the same): tesseract takes seconds per screenshot, and
            # "redact and approve" rescans inside the moderator's request. One with findings
            # is read again, so its findings are stored again.
            continue
        try:
            data = image_read(image)
        except OSError:
            logger.warning(
                "image %s of trajectory %s unreadable: not scanned", image.pk, trajectory.pk
            )
            continue
        began = time.monotonic()
        text = ocr.read_text(data, timeout=settings.TRAJHUB_OCR_TIMEOUT)
        # read_text answers "" for a timeout as for a picture without text: a read that took
        # the whole timeout is not counted as read, so releases do not take it as clean.
        timed_out = time.monotonic() - began >= settings.TRAJHUB_OCR_TIMEOUT * 0.98
        if read is not None and not timed_out:
            read.append(image.sha256)
        if text.strip():
            yield None, f"{IMAGE_PATH}{image.sha256}", text, None


def ocr_key() -> str:
    """What an image's OCR result depends on besides its bytes: the scan version and the
    allowlist (Image.ocr_version)."""
    allowlist = repr(sorted((str(k), repr(v)) for k, v in settings.TRAJHUB_SCAN_ALLOWLIST.items()))
    digest = hashlib.sha256(allowlist.encode()).hexdigest()[:12]
    return f"{scanners.version(settings.TRAJHUB_SCAN_RULE_CACHE)};allow-{digest}"[:100]


def _record_ocr(read: list[str], found: list[_Located], version: str) -> None:
    """Each image read: the scan version and how many findings its text had (releases take
    only the clean ones, apps.datasets.selectors.image_releasable)."""
    if not read:
        return
    per_image = Counter(
        located.path[len(IMAGE_PATH) :] for located in found if located.path.startswith(IMAGE_PATH)
    )
    clean = [sha for sha in read if not per_image.get(sha)]
    Image.objects.filter(sha256__in=clean).update(ocr_version=version, ocr_findings=0)
    for sha, count in per_image.items():
        Image.objects.filter(sha256=sha).update(ocr_version=version, ocr_findings=count)


def _dropped_images(pk: int) -> list[str]:
    """sha256 of the trajectory's images a moderator dropped (Trajectory.dropped_images)."""
    return sorted(
        Image.objects.filter(
            trajectory_links__trajectory_id=pk, dropped_at__isnull=False
        ).values_list("sha256", flat=True)
    )


def _find(
    scanner: scanners.Scanner, trajectory: Trajectory, read: list[str] | None = None
) -> list[_Located]:
    found: list[_Located] = []
    batch: list[tuple[int | None, str, str, str | None]] = []
    cut: list[tuple[int | None, str, str]] = []
    size = 0
    memo = scanners.ScanMemo()  # a string repeated anywhere in the trajectory is read once

    def flush() -> None:
        results = scanner.scan_many([text for _, _, text, _ in batch], memo)
        hit: set[int] = set()
        for index, detection in results:
            position, path, _, _ = batch[index]
            found.append(_Located(position, path, detection))
            hit.add(index)
        for index, (position, path, text, key) in enumerate(batch):
            if key is not None and index not in hit:
                pair = scanner.scan_pair(key, text)
                if pair is not None:
                    found.append(_Located(position, path, pair))
        batch.clear()

    for entry in _entries(trajectory, read):
        text = entry[2]
        if len(text) < 6 or text.startswith(_SKIPPED_PREFIXES):
            continue
        batch.append(entry)
        size += len(text)
        if (
            len(cut) < _MAX_CUT_TEXTS
            and len(text) <= _MAX_CUT_CHARS
            and ("…" in text or "..." in text)
        ):
            cut.append((entry[0], entry[1], text))
        if len(batch) >= _BATCH_STRINGS or size >= _BATCH_CHARS:
            flush()
            size = 0
    if batch:
        flush()
    if cut and found:
        found.extend(_partials(found, cut))
    return found


# A value cut short by an ellipsis: `…sk-proj-4f9aQ…` in a title made from the first message.
_CUT = re.compile(r"([^\s\"'<>()\[\]{}`]{6,}?)(?:…|\.\.\.)")
_MAX_CUT_TEXTS = 5000
_MAX_CUT_CHARS = 200_000
_MIN_PARTIAL = 6


def _partials(found: list[_Located], texts: list[tuple[int | None, str, str]]) -> list[_Located]:
    """Partial secrets: the start of a found value cut off by an ellipsis (the automatic title
    stops at 119 characters and adds "…"; previews cut the same way). A partial secret is a
    secret: it gets the placeholder of the value it is the start of."""
    kind_of: dict[str, str] = {}
    for located in found:
        kind_of.setdefault(located.detection.shown, located.detection.kind)
    values = sorted(kind_of)
    out: list[_Located] = []
    for position, path, text in texts:
        for match in _CUT.finditer(text):
            token, base = match.group(1), match.start(1)
            for i in range(len(token) - _MIN_PARTIAL + 1):
                if i and token[i - 1].isalnum():
                    continue
                part = token[i:]
                index = bisect_left(values, part)
                if index < len(values) and values[index].startswith(part) and values[index] != part:
                    value = values[index]
                    detection = scanners.Detection(
                        kind_of[value], part, base + i, match.end(1), value
                    )
                    out.append(_Located(position, path, detection))
                    break
    return out


def _placeholders(found: list[_Located], previous: dict[str, str]) -> dict[str, str]:
    """original -> placeholder. A value keeps the placeholder an earlier scan gave it (so links
    and quotes stay right after a re-share); new values get the next free number of their kind,
    in order of first appearance."""
    kind_of: dict[str, str] = {}
    # Numbered by the value a reader sees: the same key with and without colour codes (or
    # percent-encoded) gets one placeholder; both stored forms map to it.
    stored_forms: dict[str, str] = {}
    for located in found:
        detection = located.detection
        kind_of.setdefault(detection.shown, detection.kind)
        if detection.text != detection.shown:
            stored_forms.setdefault(detection.text, detection.shown)
    redactions: dict[str, str] = {}
    taken: dict[str, set[str]] = {}
    for original, kind in kind_of.items():
        old = previous.get(original)
        label = placeholder_label(kind)
        if old and old.startswith(f"<{label}_"):
            redactions[original] = old
            taken.setdefault(label, set()).add(old)
    counters: Counter[str] = Counter()
    for original, kind in kind_of.items():
        if original in redactions:
            continue
        label = placeholder_label(kind)
        used = taken.setdefault(label, set())
        while True:
            counters[label] += 1
            candidate = f"<{label}_{counters[label]}>"
            if candidate not in used:
                break
        used.add(candidate)
        redactions[original] = candidate
    for stored, shown in stored_forms.items():
        redactions.setdefault(stored, redactions[shown])
    return redactions


def _decide(counts: dict[str, int], distinct: int, in_images: bool = False) -> str:
    if settings.TRAJHUB_PREMODERATION:
        return ReviewState.HELD
    # A value in an image cannot be replaced by a placeholder: a moderator decides.
    if in_images:
        return ReviewState.HELD
    # Past this many distinct values (20,000 outputs with 15 emails each, say) redaction is no
    # longer a small edit of the text: a moderator looks before anyone else does.
    if distinct > settings.TRAJHUB_SCAN_MAX_DISTINCT:
        return ReviewState.HELD
    auto = set(settings.TRAJHUB_AUTO_REDACT_KINDS)
    if any(kind not in auto for kind in counts):
        return ReviewState.HELD
    return ReviewState.APPROVED


def _published_at(now: datetime) -> Case:
    """Set published_at the first time a trajectory becomes public (approved while public)."""
    return Case(
        When(published_at__isnull=True, visibility=Visibility.PUBLIC, then=Value(now)),
        default=F("published_at"),
    )


# --- The scan -----------------------------------------------------------------------------------


def trajectory_scan(*, trajectory: Trajectory) -> ScanResult:
    """Scan every string of a trajectory, store its redactions and findings, and decide.

    A `pending` trajectory becomes `approved` (no findings, or only auto-redactable kinds such as
    email, phone and IP address: shown redacted) or `held` (any secret, or pre-moderation). A
    trajectory in another state keeps it; its redactions and findings are refreshed.
    The row is read here, fresh: `trajectory` may be a bare `Trajectory(pk=id)` (the task's).
    """
    pk = trajectory.pk
    try:
        trajectory.refresh_from_db()
    except Trajectory.DoesNotExist:
        return ScanResult(trajectory_id=pk, review_state="", stale=True)
    snapshot = {name: getattr(trajectory, name) for name in _SNAPSHOT_FIELDS}
    previous_redactions = dict(trajectory.redactions or {})
    previous_dropped = list(trajectory.dropped_images or [])
    scanner = scanner_from_settings()
    version = scanners.version(settings.TRAJHUB_SCAN_RULE_CACHE)
    read: list[str] = []  # images OCR read
    found = _find(scanner, trajectory, read)
    counts = dict(Counter(located.detection.kind for located in found))
    redactions = _placeholders(found, trajectory.redactions or {})
    redactions.update(_manual_placeholders(pk, redactions, previous_redactions))
    limit = settings.TRAJHUB_SCAN_MAX_FINDINGS
    rows = [
        Finding(
            trajectory_id=pk,
            position=located.position,
            path=located.path[:300],
            start=located.detection.start,
            end=located.detection.end,
            kind=located.detection.kind,
            category=FindingCategory.SECRET
            if located.detection.kind in scanners.SECRET_KINDS
            else FindingCategory.PERSONAL,
            placeholder=redactions[located.detection.shown],
            preview=masked_preview(located.detection.shown),
        )
        for located in found[:limit]
    ]

    with transaction.atomic():
        current = Trajectory.objects.select_for_update().filter(pk=pk).first()
        if current is None or any(
            getattr(current, name) != value for name, value in snapshot.items()
        ):
            # Changed while we read it: the change queued its own scan.
            logger.info("scan of trajectory %s is stale; a newer scan follows", pk)
            return ScanResult(
                trajectory_id=pk,
                review_state=current.review_state if current else "",
                counts=counts,
                stale=True,
            )
        Finding.objects.filter(trajectory_id=pk).delete()
        Finding.objects.bulk_create(rows, batch_size=500)
        _record_ocr(read, found, ocr_key())
        dropped = _dropped_images(pk)
        changed = False
        state = current.review_state
        if state == ReviewState.PENDING:
            distinct = len({located.detection.shown for located in found})
            in_images = any(located.path.startswith(IMAGE_PATH) for located in found)
            decision = _decide(counts, distinct, in_images)
            now = timezone.now()
            update: dict[str, Any] = {
                "redactions": redactions,
                **_index_stale(current, redactions),
                "dropped_images": dropped,
                "review_state": decision,
                "scan_version": version,
                "scanned_at": now,
            }
            if decision == ReviewState.APPROVED:
                update["published_at"] = _published_at(now)
            changed = (
                Trajectory.objects.filter(pk=pk, review_state=ReviewState.PENDING).update(**update)
                == 1
            )
            if changed:
                state = decision
                audit_record(
                    actor_kind=ActorKind.SCAN,
                    action=AuditAction.SCAN_APPROVED
                    if decision == ReviewState.APPROVED
                    else AuditAction.SCAN_HELD,
                    share_id=current.share_id,
                    details={
                        "from": ReviewState.PENDING,
                        "to": decision,
                        "findings": counts,
                        "distinct_values": distinct,
                        "premoderation": bool(settings.TRAJHUB_PREMODERATION),
                    },
                )
                if decision == ReviewState.HELD and current.visibility == Visibility.PUBLIC:
                    _notify_held(current, counts)
        if not changed:
            Trajectory.objects.filter(pk=pk).update(
                redactions=redactions,
                **_index_stale(current, redactions),
                dropped_images=dropped,
                scan_version=version,
                scanned_at=timezone.now(),
            )
            if state == ReviewState.APPROVED and _new_secrets(found, previous_redactions):
                # A rescan (newer rules) found a secret the scan that approved it had not: it
                # stays redacted, and a moderator looks again.
                if _hold_after_rescan(current, counts):
                    changed, state = True, ReviewState.HELD
        if changed or redactions != previous_redactions or dropped != previous_dropped:
            # Approved (enters public() if public), held, or shown with other placeholders.
            announce_public_change([pk])
    trajectory.refresh_from_db(
        fields=["review_state", "redactions", "dropped_images", "published_at"]
    )
    if (
        trajectory.redactions != previous_redactions
        or trajectory.dropped_images != previous_dropped
    ):
        # Search must never find a trajectory by what its redactions hide.
        trajectory_search_refresh(trajectory=trajectory)
    # After the search text: what pages, lists and find read instead of the whole map.
    trajectory_redaction_index_refresh(trajectory_id=pk)
    return ScanResult(
        trajectory_id=pk,
        review_state=state,
        counts=counts,
        redactions=len(redactions),
        stored_findings=len(rows),
        changed=changed,
    )


def _index_stale(current: Trajectory, redactions: dict[str, str]) -> dict[str, Any]:
    """Clear the redaction index in the statement that changes the map (against the map read
    under the row lock), so that no request reads entries older than the map. The database
    trigger of migration trajectories 0008 does the same for any writer; this keeps it so
    where the trigger is not installed (a database restored without it)."""
    return {"indexed_at": None} if redactions != (current.redactions or {}) else {}


def _notify_held(trajectory: Trajectory, counts: dict[str, int]) -> None:
    """Tell the owner why the scan held it: the kinds found and how often, never a value."""
    from apps.accounts.notices import notice_send

    if counts:
        found = ", ".join(f"{count} × {kind}" for kind, count in sorted(counts.items()))
        why = f"The automatic check found: {found}."
    else:
        why = "Every public trajectory is looked at by a moderator before it is published."
    notice_send(kind="held", trajectory=trajectory, reason=why)


def _manual_placeholders(
    pk: int, found: dict[str, str], previous: dict[str, str]
) -> dict[str, str]:
    """original -> `<REDACTED_n>` for the values moderators redacted by hand that the scan did
    not find itself; a value keeps the number an earlier scan gave it."""
    from apps.moderation.models import ManualRedaction

    values = [
        value
        for value in ManualRedaction.objects.filter(trajectory_id=pk).values_list(
            "value", flat=True
        )
        if value not in found
    ]
    result: dict[str, str] = {}
    taken = {p for p in previous.values() if p.startswith("<REDACTED_")}
    for value in values:
        old = previous.get(value, "")
        if old.startswith("<REDACTED_"):
            result[value] = old
    number = 0
    for value in values:
        if value in result:
            continue
        while True:
            number += 1
            candidate = f"<REDACTED_{number}>"
            if candidate not in taken:
                break
        taken.add(candidate)
        result[value] = candidate
    return result


# --- Moderator actions --------------------------------------------------------------------------

_ALLOWED_FROM = {
    ReviewState.APPROVED: (ReviewState.HELD, ReviewState.HIDDEN, ReviewState.REJECTED),
    ReviewState.REJECTED: (
        ReviewState.PENDING,
        ReviewState.HELD,
        ReviewState.APPROVED,
        ReviewState.HIDDEN,
    ),
    ReviewState.HIDDEN: (ReviewState.APPROVED,),
}
_AUDIT_ACTION = {
    ReviewState.APPROVED: AuditAction.APPROVED,
    ReviewState.REJECTED: AuditAction.REJECTED,
    ReviewState.HIDDEN: AuditAction.HIDDEN,
}


def _moderate(
    *,
    trajectory: Trajectory,
    moderator: User,
    note: str,
    to: ReviewState,
    action: AuditAction | None = None,
    details: dict[str, Any] | None = None,
    notify: bool = True,
) -> Trajectory:
    """Move a trajectory from the state the moderator saw (the instance's) to `to`.

    Conditional on that state: of two moderators deciding at once, exactly one moves it; the
    other is told what happened meanwhile instead of overwriting it. An item another moderator
    has claimed (and whose claim has not expired) is theirs to decide.
    """
    from apps.moderation.claims import claim_blocking, claim_release

    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied("only moderators can review trajectories")
    allowed = _ALLOWED_FROM[to]
    seen = trajectory.review_state
    if seen not in allowed:
        if seen == ReviewState.PENDING and to == ReviewState.APPROVED:
            raise ModerationError("not scanned yet: it can be approved after the scan")
        raise ModerationError(
            f"a {seen} trajectory cannot be {to}; allowed from: {', '.join(allowed)}"
        )
    blocking = claim_blocking(trajectory=trajectory, moderator=moderator)
    if blocking is not None:
        raise ModerationError(blocking.describe())
    with transaction.atomic():
        update: dict[str, Any] = {"review_state": to}
        if to == ReviewState.APPROVED:
            update["published_at"] = _published_at(timezone.now())
        moved = Trajectory.objects.filter(pk=trajectory.pk, review_state=seen).update(**update)
        if moved != 1:
            raise ModerationError(_changed_meanwhile(trajectory, seen))
        announce_public_change([trajectory.pk])
        audit_record(
            action=action or _AUDIT_ACTION[to],
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={"from": seen, "to": to, **(details or {})},
        )
        claim_release(trajectory=trajectory, moderator=moderator)
        _answer_requests(trajectory, to)
        if notify:
            _notify_decision(trajectory, to, note, seen)
    trajectory.refresh_from_db(fields=["review_state", "published_at"])
    return trajectory


def _answer_requests(trajectory: Trajectory, to: str) -> None:
    """A decision answers the open reports, and an approval the open appeal."""
    from apps.moderation.reports import appeals_resolve, reports_resolve

    reports_resolve(trajectory=trajectory, resolution=to)
    if to == ReviewState.APPROVED:
        appeals_resolve(trajectory=trajectory, resolution="granted")


def _notify_decision(trajectory: Trajectory, to: str, note: str, seen: str) -> None:
    """The owner (or the anonymous sharer's contact email) learns why; a rejection's notice
    carries the signed link of the appeal form. An approval of what the scan held answers the
    "waiting for a moderator" notice: that one is marked read, and this one says it is public."""
    from apps.accounts.notices import notice_send, notices_answered
    from apps.moderation.reports import appeal_url

    if to == ReviewState.APPROVED and seen == ReviewState.HELD:
        notices_answered(trajectory=trajectory, kind="held")
        notice_send(kind="approved", trajectory=trajectory, reason=note)
        return

    if to == ReviewState.REJECTED:
        notice_send(
            kind="rejected", trajectory=trajectory, reason=note, link=appeal_url(trajectory)
        )
    elif to == ReviewState.HIDDEN:
        notice_send(kind="hidden", trajectory=trajectory, reason=note)


def _changed_meanwhile(trajectory: Trajectory, seen: str) -> str:
    """What the losing moderator of a race is told: the state now and who set it."""
    now = Trajectory.objects.filter(pk=trajectory.pk).values_list("review_state", flat=True)
    state = now.first()
    if state is None:
        return "the trajectory no longer exists"
    last = AuditEntry.objects.filter(share_id=trajectory.share_id).first()
    by = f" by {last.actor_label}" if last is not None else ""
    return (
        f"changed by someone else meanwhile: it was {seen} when you looked, "
        f"it is now {state}{by}; nothing was done"
    )


def trajectory_approve(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Approve a held (or hidden, or rejected) trajectory: public if its owner made it public.

    A pending one must be scanned first, so that it is never shown without its redactions.
    """
    return _moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.APPROVED)


def trajectory_reject(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Reject a trajectory: it is never public; a re-share of it stays rejected."""
    return _moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.REJECTED)


def trajectory_hide(*, trajectory: Trajectory, moderator: User, note: str = "") -> Trajectory:
    """Hide an approved trajectory from every public surface (e.g. after a report)."""
    return _moderate(trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.HIDDEN)


# Shorter values would blank out ordinary words wherever they appear.
MIN_REDACTION_CHARS = 6


def trajectory_redact_approve(
    *,
    trajectory: Trajectory,
    moderator: User,
    values: Sequence[str] = (),
    note: str = "",
    drop_images: Sequence[str] = (),
) -> Trajectory:
    """Redact values the scan missed (each gets a `<REDACTED_n>` placeholder on every public
    surface, kept across rescans) and drop the images given (sha256: `image_drop`), rescan so
    every derived text follows, then approve."""
    from apps.moderation.models import ManualRedaction

    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied("only moderators can review trajectories")
    wanted = list(dict.fromkeys(value.strip() for value in values if value.strip()))
    drops = list(dict.fromkeys(sha.strip() for sha in drop_images if sha.strip()))
    if not wanted and not drops:
        raise ModerationError("give the values to redact or the images to drop")
    short = [value for value in wanted if len(value) < MIN_REDACTION_CHARS]
    if short:
        raise ModerationError(
            f"a value to redact must have at least {MIN_REDACTION_CHARS} characters "
            f"({len(short)} shorter)"
        )
    seen = trajectory.review_state
    if seen not in _ALLOWED_FROM[ReviewState.APPROVED]:
        # Checked before anything is written, so a refused action leaves no redaction behind.
        return _moderate(
            trajectory=trajectory, moderator=moderator, note=note, to=ReviewState.APPROVED
        )
    known = set(
        Image.objects.filter(
            trajectory_links__trajectory_id=trajectory.pk, sha256__in=drops
        ).values_list("sha256", flat=True)
    )
    if len(known) != len(drops):
        raise ModerationError("this trajectory has no such image")
    for sha in drops:
        try:
            image_drop(trajectory=trajectory, moderator=moderator, sha256=sha, note=note)
        except ModerationError:
            # Dropped meanwhile (by another moderator, in another trajectory): what was wanted.
            if not Image.objects.filter(sha256=sha, dropped_at__isnull=False).exists():
                raise
    existing = set(
        ManualRedaction.objects.filter(trajectory=trajectory).values_list("value", flat=True)
    )
    ManualRedaction.objects.bulk_create(
        ManualRedaction(trajectory=trajectory, value=value, moderator=moderator)
        for value in wanted
        if value not in existing
    )
    trajectory_scan(trajectory=trajectory)
    stored = Trajectory.objects.filter(pk=trajectory.pk).values_list("redactions", flat=True)
    redactions = stored.first() or {}
    if any(value not in redactions for value in wanted):
        # The rescan was stale (the trajectory changed meanwhile): never approve without them.
        raise ModerationError(
            "the trajectory changed while it was being redacted; nothing was approved, try again"
        )
    trajectory.review_state = seen  # decide from what the moderator saw, not from the rescan
    return _moderate(
        trajectory=trajectory,
        moderator=moderator,
        note=note,
        to=ReviewState.APPROVED,
        action=AuditAction.REDACTED_APPROVED,
        details={"redacted_values": len(wanted), "dropped_images": len(drops)},
    )


def image_drop(*, trajectory: Trajectory, moderator: User, sha256: str, note: str = "") -> Image:
    """Drop an image of `trajectory` (it shows a secret): from now on everyone but the owner and
    moderators gets a placeholder for it, on the page, the image endpoints, the API, every
    export and in releases, and its OCR findings no longer hold the trajectory.

    The drop is on the image, not on the link: images are content-addressed, so the same bytes
    (and the same secret) are dropped in every trajectory that refers to them. Each of those
    lists it in `dropped_images` (what the surfaces read), written here under the row lock so a
    scan finishing at the same moment cannot write an older list over it. Dropping twice is
    refused (nothing to do), so the audit log has one entry per image.
    """
    from apps.moderation.claims import claim_blocking

    if not getattr(moderator, "is_moderator", False):
        raise PermissionDenied("only moderators can drop images")
    blocking = claim_blocking(trajectory=trajectory, moderator=moderator)
    if blocking is not None:
        raise ModerationError(blocking.describe())
    image = Image.objects.filter(
        sha256=sha256, trajectory_links__trajectory_id=trajectory.pk
    ).first()
    if image is None:
        raise ModerationError("this trajectory has no such image")
    with transaction.atomic():
        now = timezone.now()
        if Image.objects.filter(pk=image.pk, dropped_at__isnull=True).update(dropped_at=now) != 1:
            raise ModerationError("that image was dropped already")
        linked = list(
            Trajectory.objects.select_for_update()
            .filter(image_links__image_id=image.pk)
            .order_by("pk")
            .values_list("pk", "dropped_images")
        )
        for pk, dropped in linked:
            listed = sorted({*(dropped or []), image.sha256})
            Trajectory.objects.filter(pk=pk).update(dropped_images=listed)
        # Its findings pointed at something no one else can see any more; a rescan skips it.
        Finding.objects.filter(
            trajectory_id__in=[pk for pk, _ in linked], path=f"{IMAGE_PATH}{image.sha256}"
        ).delete()
        audit_record(
            action=AuditAction.IMAGE_DROPPED,
            share_id=trajectory.share_id,
            actor=moderator,
            actor_kind=reviewer_kind(moderator),
            reason=note,
            details={
                "image": image.sha256,
                "also_in_trajectories": len(linked) - 1,
                "state": trajectory.review_state,
            },
        )
        announce_public_change([pk for pk, _ in linked])
        _notify_image_dropped([pk for pk, _ in linked], note)
    for pk, _ in linked:
        # Search snippets show the search text: the reference goes from there too.
        trajectory_search_refresh(trajectory=Trajectory.objects.get(pk=pk))
    image.dropped_at = now
    trajectory.dropped_images = sorted({*(trajectory.dropped_images or []), image.sha256})
    return image


def _notify_image_dropped(trajectory_ids: list[int], note: str) -> None:
    """Each trajectory that shows the dropped bytes is told, to its owner (or the anonymous
    sharer's contact email): the image is gone for everyone else, and a key in it should be
    revoked. Each notice names only its own trajectory."""
    from apps.accounts.notices import notice_send

    for trajectory in (
        Trajectory.objects.filter(pk__in=trajectory_ids).select_related("owner").order_by("pk")
    ):
        notice_send(kind="image_dropped", trajectory=trajectory, reason=note)


def trajectory_deleted_record(
    *,
    share_id: str,
    was_public: bool,
    reason: str = "",
    actor_id: int | None = None,
    actor_username: str = "",
) -> AuditEntry:
    """Note a deletion in the audit log (the trajectory and its findings are already gone).

    Who did it comes from the deletion's reason (owner, staff, the holder's password, an email
    link, an account deletion); the account may be gone by now, its username snapshot is kept.
    """
    from apps.accounts.models import User

    actor = User.objects.filter(pk=actor_id).first() if actor_id is not None else None
    kind = DELETION_ACTORS.get(reason, ActorKind.UNKNOWN)
    return audit_record(
        action=AuditAction.DELETED,
        share_id=share_id,
        actor_kind=kind,
        actor=actor,
        actor_username=actor_username,
        reason="" if reason in DELETION_ACTORS else reason,
        details={"was_public": was_public},
    )


# --- The sweep ----------------------------------------------------------------------------------


def _new_secrets(found: list[_Located], previous: dict[str, str]) -> bool:
    return any(
        located.detection.kind in scanners.SECRET_KINDS and located.detection.shown not in previous
        for located in found
    )


def _hold_after_rescan(current: Trajectory, counts: dict[str, int]) -> bool:
    moved = (
        Trajectory.objects.filter(pk=current.pk, review_state=ReviewState.APPROVED).update(
            review_state=ReviewState.HELD
        )
        == 1
    )
    if moved:
        audit_record(
            actor_kind=ActorKind.SCAN,
            action=AuditAction.SCAN_HELD,
            share_id=current.share_id,
            details={
                "from": ReviewState.APPROVED,
                "to": ReviewState.HELD,
                "findings": counts,
                "rescan": True,
            },
        )
        if current.visibility == Visibility.PUBLIC:
            _notify_held(current, counts)
    return moved


def rescan_due_sweep(*, limit: int) -> list[ScanResult]:
    """Rescan up to `limit` public trajectories scanned by other rules than today's (an upgrade
    of the library or a change of the hand rules), newest first. Bounded and safe to run twice:
    each scan's write is conditional, and a rescanned trajectory is no longer due."""
    from apps.moderation.selectors import trajectories_rescan_due

    version = scanners.version(settings.TRAJHUB_SCAN_RULE_CACHE)
    return [
        trajectory_scan(trajectory=trajectory)
        for trajectory in trajectories_rescan_due(version=version, limit=limit)
    ]


def pending_scan_sweep(*, limit: int, older_than_seconds: float = 60) -> list[ScanResult]:
    """Scan up to `limit` trajectories still pending `older_than_seconds` after their last change
    (their on-commit scan was lost, e.g. a worker died). Safe to run concurrently: each scan's
    write is conditional."""
    from apps.moderation.selectors import trajectories_pending_scan

    results = []
    for trajectory in trajectories_pending_scan(older_than_seconds=older_than_seconds, limit=limit):
        results.append(trajectory_scan(trajectory=trajectory))
    return results
