"""Cleaning of what is stored: NUL characters replaced, embedded images moved out to storage
(each replaced by a reference), over-long header fields clipped."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable
from typing import Any

IMAGE_REF_PREFIX = "trajhub-image:"
# PostgreSQL refuses U+0000 in text and jsonb; U+2400 (SYMBOL FOR NULL) keeps it visible.
NUL_REPLACEMENT = "\u2400"

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF87a", "image/gif", "gif"),
    (b"GIF89a", "image/gif", "gif"),
    (b"BM", "image/bmp", "bmp"),
)
_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/bmp": "bmp",
}
# Raster images only: SVG is markup (scripts) and stays inline, escaped like any other text.
_DATA_URL = re.compile(r"data:image/(?:png|jpe?g|gif|webp|bmp);base64,([A-Za-z0-9+/]+={0,2})")
_BASE64_KEYS = {"screenshot_data"}  # OpenHands V1: bare base64 without a data: prefix


def _sniff(blob: bytes) -> str | None:
    for magic, content_type, _ in _IMAGE_MAGIC:
        if blob.startswith(magic):
            return content_type
    if blob[:4] == b"RIFF" and blob[8:12] == b"WEBP":
        return "image/webp"
    return None


def _complete(blob: bytes, content_type: str) -> bool:
    """Whether the image ends where its format says (a truncated one is kept as text)."""
    if content_type == "image/png":
        return blob.endswith(b"IEND\xaeB`\x82")
    if content_type == "image/jpeg":
        return b"\xff\xd9" in blob[-64:]
    if content_type == "image/gif":
        return blob.endswith(b";") or blob.rstrip(b"\x00").endswith(b";")
    if content_type == "image/webp":
        return len(blob) >= 12 and int.from_bytes(blob[4:8], "little") + 8 <= len(blob)
    if content_type == "image/bmp":
        return len(blob) >= 6 and int.from_bytes(blob[2:6], "little") <= len(blob)
    return False


_ImageStore = Callable[[str, bytes, str], None]


class _Cleaner:
    """Replaces NULs and moves images out: each image goes to `store` as soon as it is found
    (so a payload with 50 screenshots never holds them all decoded), and is listed in `images`
    as sha256 -> (size, content type)."""

    def __init__(self, store: _ImageStore) -> None:
        self.store = store
        self.images: dict[str, tuple[int, str]] = {}

    def _image_ref(self, payload: str) -> str | None:
        try:
            blob = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
        content_type = _sniff(blob)
        if content_type is None or not _complete(blob, content_type):
            return None  # not an image, or a truncated one: it stays text
        sha = hashlib.sha256(blob).hexdigest()
        if sha not in self.images:
            self.store(sha, blob, content_type)
            self.images[sha] = (len(blob), content_type)
        return IMAGE_REF_PREFIX + sha

    def text(self, value: str, key: str = "") -> str:
        if "\x00" in value:
            value = value.replace("\x00", NUL_REPLACEMENT)
        if key in _BASE64_KEYS and len(value) > 64 and "data:" not in value[:8]:
            ref = self._image_ref(value.strip())
            if ref:
                return ref
        if "data:image/" in value:
            value = _DATA_URL.sub(lambda m: self._image_ref(m.group(1)) or m.group(0), value)
        return value

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return self.text(value, key)
        if isinstance(value, dict):
            return {
                (k.replace("\x00", NUL_REPLACEMENT) if isinstance(k, str) else k): self.value(v, k)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, key) for item in value]
        return value


def _needs_cleaning(dumped: bytes) -> bool:
    return b"\\u0000" in dumped or b"data:image/" in dumped or b"screenshot_data" in dumped


def _clip(value: Any, length: int) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\x00", NUL_REPLACEMENT)
    return text[:length]
