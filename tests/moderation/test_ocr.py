"""OCR: text in screenshots is scanned like other text (real tesseract, an image Pillow draws)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from apps.moderation.models import Finding
from apps.moderation.scanning import ocr
from apps.moderation.services.scan import trajectory_scan
from apps.trajectories.models import Image, TrajectoryImage
from tests.conftest import skip_or_fail
from tests.moderation import samples as s
from tests.moderation.conftest import make_trajectory

pytestmark = pytest.mark.django_db
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
# A fixed token that tesseract reads back exactly in this image (drawn tokens are brittle: of
# eight random ones, half came back with a character or a space wrong, and the seeded sample
# generator's next token depends on which tests ran before).
DRAWN_TOKEN = "ghp" + "_tKXgMsJuYt3PHvuyQdHt6FuExRp3shZmvmdY"  # split: no literal token in the repo


@pytest.fixture(autouse=True)
def tesseract(settings):
    if not ocr.available():
        skip_or_fail("tesseract (Debian tesseract-ocr) is not installed")
    settings.TRAJHUB_OCR = True
    settings.TRAJHUB_OCR_TIMEOUT = 600  # a loaded CI machine: never cut the test's OCR short


def screenshot(*lines: str) -> bytes:
    font = ImageFont.truetype(str(FONT), 28) if FONT.exists() else ImageFont.load_default(28)
    picture = PILImage.new("RGB", (1400, 60 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(picture)
    for row, line in enumerate(lines):
        draw.text((20, 30 + 60 * row), line, fill="black", font=font)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def attach(trajectory, data: bytes) -> Image:
    digest = hashlib.sha256(data).hexdigest()
    path = storages["default"].save(f"images/{digest}.png", ContentFile(data))
    image = Image.objects.create(sha256=digest, content_type="image/png", size=len(data), path=path)
    TrajectoryImage.objects.create(trajectory=trajectory, image=image)
    return image


def test_a_key_drawn_into_a_screenshot_holds_the_trajectory():
    trajectory = make_trajectory(events=["browse https://github.com/settings/tokens"])
    image = attach(trajectory, screenshot("Personal access tokens", f"token {DRAWN_TOKEN}"))
    result = trajectory_scan(trajectory=trajectory)
    assert result.review_state == "held" and result.counts == {"github_token": 1}
    (finding,) = Finding.objects.filter(trajectory=trajectory)
    assert finding.path == f"image:{image.sha256}"  # the finding points at the image
    assert finding.kind == "github_token" and finding.category == "secret"


def test_an_ordinary_screenshot_changes_nothing():
    trajectory = make_trajectory(events=["open the docs"])
    attach(trajectory, screenshot("Welcome to the documentation", "Getting started"))
    assert trajectory_scan(trajectory=trajectory).review_state == "approved"


def test_ocr_off(settings):
    settings.TRAJHUB_OCR = False
    trajectory = make_trajectory(events=["browse"])
    attach(trajectory, screenshot(f"token {s.github_token()}"))
    assert trajectory_scan(trajectory=trajectory).review_state == "approved"
