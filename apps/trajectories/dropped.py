"""Images a moderator dropped: what everyone but the owner and moderators gets in their place.

A dropped image (Image.dropped_at; its sha256 listed in Trajectory.dropped_images) shows a secret
that no placeholder inside the picture can hide. Its reference `trajhub-image:<sha256>` is replaced
by `IMAGE_REMOVED` in every string a visitor receives (cards, "Show JSON", the API's events,
exports), and the image endpoints answer 410 for it; the renderers show "image removed by a
moderator" where the picture was. An image nobody has read (image_rule.py) is replaced the same
way by `IMAGE_WITHHELD` until a moderator clears it. Pure Python, like redaction.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from apps.trajectories.redaction import Redact, identity

IMAGE_REMOVED = "trajhub-image:removed"
# An image nobody has read yet (no OCR, no moderator: image_rule.py), in place of its reference
# until a moderator clears it.
IMAGE_WITHHELD = "trajhub-image:withheld"
_REF = re.compile(r"trajhub-image:([0-9a-f]{64})")


def image_dropper(dropped: Iterable[str] | None, withheld: Iterable[str] | None = None) -> Redact:
    """A function replacing each reference to a dropped image by IMAGE_REMOVED, and to a
    withheld one by IMAGE_WITHHELD (inside Markdown `![](...)` too); identity when there is
    neither, so the common case costs nothing."""
    shas = {sha for sha in dropped or () if isinstance(sha, str)}
    held = {sha for sha in withheld or () if isinstance(sha, str)} - shas
    if not shas and not held:
        return identity

    def placeholder(match: re.Match[str]) -> str:
        sha = match.group(1)
        if sha in shas:
            return IMAGE_REMOVED
        return IMAGE_WITHHELD if sha in held else match.group(0)

    def drop(text: str) -> str:
        if not text or "trajhub-image:" not in text:
            return text
        return _REF.sub(placeholder, text)

    return drop


def chain(first: Redact, then: Redact) -> Redact:
    """`then(first(text))`, without a wrapper when either is the identity."""
    if first is identity:
        return then
    if then is identity:
        return first
    return lambda text: then(first(text))
