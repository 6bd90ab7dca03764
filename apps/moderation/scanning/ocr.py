"""Text read from images (screenshots, plots, attached pictures) by Tesseract, to be scanned like
any other text: a browser screenshot shows the dashboard page with the API key on it.

Through `pytesseract` (the maintained binding that runs the Debian `tesseract-ocr` program), so a
missing program is a clear error, not a crash of the process.
"""

from __future__ import annotations

import io
import os
import shutil

import pytesseract  # type: ignore[import-untyped]  # no stubs
from PIL import Image, UnidentifiedImageError

# Tesseract's OpenMP threads fight each other and the worker's other processes for cores: one
# thread per image is faster on a busy machine (the worker runs several scans in parallel).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")
# Tesseract reads dark-on-light text best: small screenshots are scaled up to this width.
_MIN_WIDTH = 1200
_MAX_PIXELS = 40_000_000  # a decompression bomb is not OCR'd


def available() -> bool:
    return shutil.which("tesseract") is not None


def read_text(data: bytes, *, timeout: float = 60) -> str:
    """The text Tesseract reads in an image ("" for what is not an image)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > _MAX_PIXELS:
                return ""
            picture = image.convert("L")
    except (UnidentifiedImageError, OSError, ValueError):
        return ""
    if picture.width < _MIN_WIDTH:
        scale = _MIN_WIDTH / max(picture.width, 1)
        picture = picture.resize((_MIN_WIDTH, max(1, int(picture.height * scale))))
    try:
        return str(pytesseract.image_to_string(picture, timeout=timeout))
    except RuntimeError:  # pytesseract's timeout
        return ""
