"""What the scan finds in a trajectory: every string walked in document order (its own fields,
then the events, then the text OCR reads in its images), scanned in batches, each finding
located (event position and path); values cut short by an ellipsis are found as partials.

Reads only: the scan service (scan.py) writes what this finds.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.moderation.models import IMAGE_PATH
from apps.moderation.scanning import scanner as engine
from apps.moderation.scanning.memo import ScanMemo
from apps.trajectories.importers.base import CanonicalTrajectory
from apps.trajectories.models import Event, Image, Trajectory

logger = logging.getLogger(__name__)

# Strings the scan skips: references to stored images and inline image payloads.
_SKIPPED_PREFIXES = ("trajhub-image:", "data:image/")
# Strings per scan_many call: large enough to amortize the call, small enough for memory.
_BATCH_STRINGS = 2000
_BATCH_CHARS = 1 << 20


@dataclass(frozen=True)
class Located:
    """One finding and where it is: an event's position (None: the trajectory's own fields)
    and the path of the string in it."""

    position: int | None
    path: str
    detection: engine.Detection


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
        .values_list("position", "text", "original_id", "cause", "data")
        .iterator(chunk_size=500)
    )
    for position, text, original_id, cause, data in events:
        yield position, "text", text, None
        # The format's own ids (a Claude Code uuid, a call id) are shown too: the events API's
        # `id` and `cause`, the page's links between a call and its result.
        if original_id:
            yield position, "original_id", original_id, None
        if cause:
            yield position, "cause", cause, None
        for path, value, key in _strings(data or {}, "data"):
            yield position, path, value, key
    if settings.TRAJHUB_OCR:
        yield from _image_texts(trajectory, read)


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
    return f"{engine.version(settings.TRAJHUB_SCAN_RULE_CACHE)};allow-{digest}"[:100]


def record_ocr(read: list[str], found: list[Located], version: str) -> None:
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


def dropped_images(pk: int) -> list[str]:
    """sha256 of the trajectory's images a moderator dropped (Trajectory.dropped_images)."""
    return sorted(
        Image.objects.filter(
            trajectory_links__trajectory_id=pk, dropped_at__isnull=False
        ).values_list("sha256", flat=True)
    )


def unchecked_images(pk: int) -> list[str]:
    """sha256 of the trajectory's images that neither OCR nor a moderator has read
    (Trajectory.unchecked_images; public only under TRAJHUB_IMAGES_PUBLISH_UNREAD)."""
    from apps.trajectories.image_rule import unchecked_q

    return sorted(
        Image.objects.filter(unchecked_q(), trajectory_links__trajectory_id=pk).values_list(
            "sha256", flat=True
        )
    )


def ocr_flagged_images(pk: int) -> list[str]:
    """sha256 of the trajectory's images in which OCR found something and that no moderator has
    cleared or dropped (Trajectory.flagged_images: withheld on the site as in releases)."""
    from apps.trajectories.image_rule import flagged_q

    return sorted(
        Image.objects.filter(flagged_q(), trajectory_links__trajectory_id=pk).values_list(
            "sha256", flat=True
        )
    )


def find_in_trajectory(
    scanner: engine.Scanner, trajectory: Trajectory, read: list[str] | None = None
) -> list[Located]:
    return find_in_entries(scanner, _entries(trajectory, read))


def canonical_entries(
    trajectory: CanonicalTrajectory,
) -> Iterator[tuple[int | None, str, str, str | None]]:
    """The strings of an imported, unstored trajectory, walked as `_entries` walks a stored one
    (the upload preview: what the scan would find, before anything is stored)."""
    yield None, "title", trajectory.title, None
    yield None, "feedback_text", trajectory.feedback_text, None
    yield None, "agent", trajectory.agent, None
    yield None, "model_name", trajectory.model, None
    yield None, "agent_version", trajectory.agent_version, None
    for path, text, key in _strings(trajectory.metadata or {}, "metadata"):
        yield None, path, text, key
    for position, event in enumerate(trajectory.events):
        yield position, "text", event.text, None
        for path, value, key in _strings(event.data or {}, "data"):
            yield position, path, value, key


def find_in_entries(
    scanner: engine.Scanner, entries: Iterator[tuple[int | None, str, str, str | None]]
) -> list[Located]:
    found: list[Located] = []
    batch: list[tuple[int | None, str, str, str | None]] = []
    cut: list[tuple[int | None, str, str]] = []
    size = 0
    memo = ScanMemo()  # a string repeated anywhere in the trajectory is read once

    def flush() -> None:
        results = scanner.scan_many([text for _, _, text, _ in batch], memo)
        hit: set[int] = set()
        for index, detection in results:
            position, path, _, _ = batch[index]
            found.append(Located(position, path, detection))
            hit.add(index)
        for index, (position, path, text, key) in enumerate(batch):
            if key is not None and index not in hit:
                pair = scanner.scan_pair(key, text)
                if pair is not None:
                    found.append(Located(position, path, pair))
        batch.clear()

    for entry in entries:
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


def _partials(found: list[Located], texts: list[tuple[int | None, str, str]]) -> list[Located]:
    """Partial secrets: the start of a found value cut off by an ellipsis (the automatic title
    stops at 119 characters and adds "…"; previews cut the same way). A partial secret is a
    secret: it gets the placeholder of the value it is the start of."""
    kind_of: dict[str, str] = {}
    for located in found:
        kind_of.setdefault(located.detection.shown, located.detection.kind)
    values = sorted(kind_of)
    out: list[Located] = []
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
                    detection = engine.Detection(
                        kind_of[value], part, base + i, match.end(1), value
                    )
                    out.append(Located(position, path, detection))
                    break
    return out


def new_secrets(found: list[Located], previous: dict[str, str]) -> bool:
    return any(
        located.detection.kind in engine.SECRET_KINDS and located.detection.shown not in previous
        for located in found
    )
