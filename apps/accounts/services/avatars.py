"""GitHub avatars, fetched once into our own storage and served from the site (the CSP allows
images from the site only, and a visitor's browser then tells GitHub nothing).

The image is fetched only from TRAJHUB_AVATAR_SOURCES, at most MAX_BYTES, decoded and re-encoded
as a small PNG by Pillow: what is stored is pixels we wrote, never the bytes someone sent.
"""

from __future__ import annotations

import io
import logging
import urllib.error
import urllib.request

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from PIL import Image, UnidentifiedImageError

from apps.accounts.models import User

logger = logging.getLogger(__name__)

MAX_BYTES = 1_000_000
SIZE = 160  # pixels, square: the profile shows it at 80, sharp on high-density screens
TIMEOUT_SECONDS = 10


class AvatarError(Exception):
    """The avatar could not be fetched or is not an image (the profile shows none)."""


def _allowed(url: str) -> bool:
    return any(url.startswith(prefix) for prefix in settings.TRAJHUB_AVATAR_SOURCES)


def _download(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "TrajHub avatar fetch"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            if not _allowed(response.geturl()):  # a redirect elsewhere
                raise AvatarError("the avatar redirected outside the allowed sources")
            data = response.read(MAX_BYTES + 1)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise AvatarError(f"could not fetch the avatar: {exc}") from exc
    if len(data) > MAX_BYTES:
        raise AvatarError("the avatar is larger than 1 MB")
    return data


def _as_png(data: bytes) -> bytes:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", (SIZE, SIZE))
            picture = image.convert("RGBA")
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise AvatarError("the avatar is not an image") from exc
    picture.thumbnail((SIZE, SIZE))
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()


def avatar_fetch(*, user: User, url: str) -> bool:
    """Fetch the user's avatar once. False when they have one already or the URL is not from an
    allowed source; AvatarError when it cannot be fetched or read."""
    if user.avatar_path or not url or not _allowed(url):
        return False
    png = _as_png(_download(url))
    storage = storages["default"]
    path = storage.save(f"avatars/{user.pk}.png", ContentFile(png))
    updated = User.objects.filter(pk=user.pk, avatar_path="").update(avatar_path=path)
    if updated != 1:  # fetched meanwhile by another task: keep that one
        storage.delete(path)
        return False
    user.avatar_path = path
    logger.info("avatar of account %s stored", user.pk)
    return True


def avatar_read(user: User) -> bytes:
    with storages["default"].open(user.avatar_path, "rb") as handle:
        return handle.read()
