"""When an image of a trajectory is public: one rule for the site's pages, the image
endpoints, the API, the exports and the releases.

Text in a picture cannot be redacted; OCR (tesseract, TRAJHUB_OCR) reads it so that the scan
can hold a trajectory whose screenshot shows a key. Where OCR is off or missing, nobody has
looked for text in an image, so it is public only once a moderator has cleared it
(`Image.cleared_at`), unless the operator chose to publish such images unread
(TRAJHUB_IMAGES_PUBLISH_UNREAD: on under `make run`, off in production). Every surface asks
this module, so the site and the releases cannot disagree:

- dropped by a moderator: never public (`dropped.IMAGE_REMOVED`);
- cleared by a moderator: public;
- read by OCR with findings: withheld (`dropped.IMAGE_WITHHELD`) on the site as in releases
  until a moderator clears or drops it, whatever the trajectory's review state: approving a
  trajectory redacts its text, and no placeholder can redact a picture;
- read by OCR and found clean: public;
- unread: where OCR is off or missing, public only with TRAJHUB_IMAGES_PUBLISH_UNREAD, otherwise
  `dropped.IMAGE_WITHHELD` in its place until a moderator clears it; where OCR reads images,
  withheld until it is read (a read that timed out) or cleared.

The trajectory keeps the sha256 of its unread, uncleared images in `Trajectory.unchecked_images`
and of its flagged, uncleared ones in `Trajectory.flagged_images` (written by the scan and by a
clearance, like `dropped_images`), so a page needs no query.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import Q

from apps.trajectories.dropped import image_dropper
from apps.trajectories.redaction import Redact

if TYPE_CHECKING:
    from apps.trajectories.models import Image, Trajectory

# What the image endpoints answer a visitor (403) for an image withheld.
WITHHELD_TEXT = (
    "This image is not shown until a moderator checks it: it was not read for text (OCR is off)."
)
FLAGGED_TEXT = (
    "This image is not shown until a moderator checks it: text was found in it that may be a "
    "secret or personal data."
)


def publish_unread() -> bool:
    """Whether images nobody read are public anyway: the setting, where OCR is off or missing.
    Where OCR reads images, one it has not read (a read that timed out, or scanned before OCR
    was installed) waits for the next scan or a moderator whatever the setting."""
    return bool(settings.TRAJHUB_IMAGES_PUBLISH_UNREAD) and not ocr_available()


def ocr_available() -> bool:
    """Whether the scan reads images: OCR switched on and the tesseract program installed."""
    return bool(settings.TRAJHUB_OCR) and shutil.which("tesseract") is not None


def unchecked_q() -> Q:
    """Images nobody has looked at: not read by OCR, not cleared, not dropped."""
    return Q(ocr_version="", cleared_at__isnull=True, dropped_at__isnull=True)


def flagged_q() -> Q:
    """Images OCR found something in that no moderator has cleared or dropped."""
    return ~Q(ocr_version="") & Q(
        ocr_findings__gt=0, cleared_at__isnull=True, dropped_at__isnull=True
    )


def releasable_q() -> Q:
    """Images whose bytes go into a release (the rule above, as a filter)."""
    clean = Q(cleared_at__isnull=False) | (~Q(ocr_version="") & Q(ocr_findings=0))
    if publish_unread():
        clean |= Q(ocr_version="")
    return Q(dropped_at__isnull=True) & clean


def image_releasable(image: Image) -> bool:
    """`releasable_q` for one Image row (the release build asks per image)."""
    if image.dropped_at is not None:
        return False
    if image.cleared_at is not None:
        return True
    if image.ocr_version:
        return not image.ocr_findings
    return publish_unread()


def withheld_images(trajectory: Trajectory) -> frozenset[str]:
    """sha256 of the trajectory's images that visitors do not get (besides dropped ones):
    flagged by OCR and not cleared, and unread ones unless they are published unread."""
    flagged = {sha for sha in trajectory.flagged_images or () if isinstance(sha, str)}
    if publish_unread():
        return frozenset(flagged)
    unread = {sha for sha in trajectory.unchecked_images or () if isinstance(sha, str)}
    return frozenset(flagged | unread)


def image_flagged(image: Image) -> bool:
    """Whether OCR found something in this image that no moderator has cleared."""
    return bool(image.ocr_version) and image.ocr_findings > 0 and image.cleared_at is None


def image_withheld(image: Image) -> bool:
    """Whether a visitor is refused this image (the endpoints): flagged and uncleared, or
    unread and uncleared (unless published unread). `releasable_q` for one image, but for
    dropped ones, which the endpoints answer apart (410)."""
    if image.cleared_at is not None:
        return False
    if image.ocr_version:
        return image.ocr_findings > 0
    return not publish_unread()


def withheld_text(image: Image) -> str:
    """What the image endpoints tell a visitor refused `image`, by why it is withheld."""
    return FLAGGED_TEXT if image_flagged(image) else WITHHELD_TEXT


def visitor_images(trajectory: Trajectory) -> Redact:
    """References to dropped and withheld images replaced by their placeholders, for anyone
    but the owner and moderators."""
    return image_dropper(trajectory.dropped_images, withheld_images(trajectory))


@dataclass(frozen=True)
class ImageRule:
    """Which rule applies now, in words (the release card, the admin, `ocr_status`)."""

    ocr: bool  # the scan reads images
    publish_unread: bool

    @property
    def name(self) -> str:
        if self.ocr:
            return "ocr"
        return "unread_published" if self.publish_unread else "moderator_cleared"

    @property
    def summary(self) -> str:
        if self.ocr:
            return (
                "OCR reads every image for text: an image is public once it was read and found "
                "clean, or a moderator cleared it."
            )
        why = (
            "TRAJHUB_OCR is off"
            if not settings.TRAJHUB_OCR
            else "OCR is on but tesseract is not installed"
        )
        if self.publish_unread:
            return (
                f"{why}: images are not read for text, and TRAJHUB_IMAGES_PUBLISH_UNREAD "
                "publishes them unread (only the text around them is scanned)."
            )
        return (
            f"{why}: images are not read for text, so each one is public only once a "
            "moderator has cleared it (a placeholder until then)."
        )


def image_rule() -> ImageRule:
    return ImageRule(ocr=ocr_available(), publish_unread=publish_unread())
