"""Images a moderator dropped: what everyone but the owner and moderators gets in their place.

A dropped image (Image.dropped_at; its sha256 listed in Trajectory.dropped_images) shows a secret
that no placeholder inside the picture can hide. Its reference `trajhub-image:<sha256>` is replaced
by `IMAGE_REMOVED` in every string a visitor receives (cards, "Show JSON", the API's events,
exports), and the image endpoints answer 410 for it; the renderers show "image removed by a
moderator" where the picture was. Pure Python, like redaction.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from apps.trajectories.redaction import Redact, identity

IMAGE_REMOVED = "trajhub-image:removed"
_REF = re.compile(r"trajhub-image:([0-9a-f]{64})")


def image_dropper(dropped: Iterable[str] | None) -> Redact:
    """A function replacing each reference to a dropped image by IMAGE_REMOVED (inside Markdown
    `![](...)` too); identity when nothing was dropped, so the common case costs nothing."""
    shas = {sha for sha in dropped or () if isinstance(sha, str)}
    if not shas:
        return identity

    def drop(text: str) -> str:
        if not text or "trajhub-image:" not in text:
            return text
        return _REF.sub(lambda m: IMAGE_REMOVED if m.group(1) in shas else m.group(0), text)

    return drop


def chain(first: Redact, then: Redact) -> Redact:
    """`then(first(text))`, without a wrapper when either is the identity."""
    if first is identity:
        return then
    if then is identity:
        return first
    return lambda text: then(first(text))
