"""Small but real PNG images for the demo generator: browser screenshots, set-of-marks, plots.

Pure Python + Pillow, no Django. Every picture is drawn from the caller's random.Random, so the
same seed gives the same bytes, and no two pages look alike. `extra_bytes` adds a block of noise
(a "photo" on the page) that PNG cannot compress, which lets benchmarks make screenshots as heavy
as real 1280x720 ones without drawing them.
"""

from __future__ import annotations

import base64
import io
import random

from PIL import Image, ImageDraw, ImageFont

_FONT = ImageFont.load_default()

PALETTES = [
    ((36, 41, 47), (246, 248, 250), (9, 105, 218)),  # dark header, light page, blue links
    ((22, 27, 34), (255, 255, 255), (31, 136, 61)),
    ((88, 44, 131), (250, 247, 255), (130, 80, 223)),
    ((15, 76, 129), (240, 246, 252), (207, 34, 46)),
    ((51, 51, 51), (255, 253, 245), (191, 135, 0)),
    ((0, 92, 75), (245, 255, 250), (0, 128, 96)),
]


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    # Level 6 keeps drawn pages small; noise blocks do not compress whatever the level.
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _noise_block(rng: random.Random, width: int, nbytes: int) -> Image.Image:
    height = max(1, nbytes // (3 * width))
    return Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))


def browser_page(
    rng: random.Random,
    *,
    url: str,
    title: str,
    lines: list[str],
    size: tuple[int, int] = (480, 300),
    extra_bytes: int = 0,
) -> tuple[bytes, bytes]:
    """A screenshot of a web page and its set-of-marks twin (numbered boxes on the elements)."""
    header, page, accent = rng.choice(PALETTES)
    width, height = size
    noise = _noise_block(rng, width - 40, extra_bytes) if extra_bytes > 0 else None
    if noise is not None:
        height += noise.height + 10
    image = Image.new("RGB", (width, height), page)
    draw = ImageDraw.Draw(image)
    # Browser chrome: tab strip and address bar.
    draw.rectangle((0, 0, width, 22), fill=(222, 225, 230))
    draw.rounded_rectangle((8, 3, 8 + min(180, 8 + 6 * len(title)), 22), 4, fill=page)
    draw.text((14, 6), title[:28], fill=(40, 40, 40), font=_FONT)
    draw.rectangle((0, 22, width, 44), fill=(248, 249, 250))
    draw.rounded_rectangle(
        (40, 26, width - 10, 40), 6, fill=(255, 255, 255), outline=(200, 200, 200)
    )
    draw.text((48, 28), url[:70], fill=(60, 60, 60), font=_FONT)
    # Site header with a logo block and nav links.
    draw.rectangle((0, 44, width, 74), fill=header)
    draw.rectangle((10, 50, 28, 68), fill=accent)
    draw.text((36, 54), title[:24], fill=(255, 255, 255), font=_FONT)
    elements: list[tuple[int, int, int, int]] = []
    x = width - 20
    for word in reversed(rng.sample(["Docs", "Issues", "Pulls", "Wiki", "Settings", "Login"], 3)):
        x -= 8 * len(word) + 16
        draw.text((x, 54), word, fill=(230, 230, 230), font=_FONT)
        elements.append((x - 4, 50, x + 7 * len(word) + 4, 68))
    y = 86
    for line in lines[:14]:
        if y > size[1] - 30:
            break
        if line.startswith("#"):
            draw.text((20, y), line.lstrip("# ")[:60], fill=(20, 20, 20), font=_FONT)
            draw.line((20, y + 14, width - 20, y + 14), fill=(220, 220, 220))
            y += 22
        elif line.startswith("[button]"):
            label = line.removeprefix("[button]").strip()[:20]
            box = (20, y, 32 + 7 * len(label), y + 18)
            draw.rounded_rectangle(box, 4, fill=accent)
            draw.text((26, y + 3), label, fill=(255, 255, 255), font=_FONT)
            elements.append(box)
            y += 26
        else:
            text = line[:70]
            draw.text((20, y), text, fill=(50, 50, 50), font=_FONT)
            if "http" in text or rng.random() < 0.2:
                draw.line((20, y + 12, 20 + 6 * len(text), y + 12), fill=accent)
                elements.append((18, y - 2, 22 + 6 * len(text), y + 13))
            y += 16
    if noise is not None:
        image.paste(noise, (20, size[1]))
    screenshot = _png(image)
    # Set-of-marks: the same page with each interactive element boxed and numbered, as BrowserGym does.
    marks = image.copy()
    draw = ImageDraw.Draw(marks)
    for number, box in enumerate(elements, start=rng.randint(1, 40)):
        draw.rectangle(box, outline=(255, 0, 0), width=2)
        draw.rectangle((box[0], box[1] - 10, box[0] + 14, box[1]), fill=(255, 0, 0))
        draw.text((box[0] + 2, box[1] - 10), str(number), fill=(255, 255, 255), font=_FONT)
    return screenshot, _png(marks)


def plot(rng: random.Random, *, title: str, values: list[float], kind: str = "bar") -> bytes:
    """A matplotlib-looking chart: axes, ticks, bars or a line, a title."""
    width, height = 400, 260
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = 45, 30, width - 15, height - 30
    draw.text((width // 2 - 3 * len(title), 8), title[:60], fill=(0, 0, 0), font=_FONT)
    draw.line((left, bottom, right, bottom), fill=(0, 0, 0))
    draw.line((left, top, left, bottom), fill=(0, 0, 0))
    peak = max(values) or 1.0
    for tick in range(5):
        ty = bottom - (bottom - top) * tick // 4
        draw.line((left - 4, ty, left, ty), fill=(0, 0, 0))
        draw.text((4, ty - 5), f"{peak * tick / 4:.3g}", fill=(0, 0, 0), font=_FONT)
    color = rng.choice([(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)])
    step = (right - left) / max(1, len(values))
    points = []
    for index, value in enumerate(values):
        x0 = left + step * index
        y = bottom - (bottom - top) * value / peak
        if kind == "bar":
            draw.rectangle((x0 + step * 0.15, y, x0 + step * 0.85, bottom), fill=color)
        points.append((x0 + step / 2, y))
        draw.text((x0 + step / 2 - 3, bottom + 4), str(index), fill=(0, 0, 0), font=_FONT)
    if kind == "line" and len(points) > 1:
        draw.line(points, fill=color, width=2)
    return _png(image)


def photo(rng: random.Random, *, size: tuple[int, int] = (320, 200)) -> bytes:
    """A picture a user might attach: a gradient with a few shapes (a phone photo of a bug)."""
    width, height = size
    base = rng.choice(PALETTES)[1]
    image = Image.new("RGB", size, base)
    draw = ImageDraw.Draw(image)
    for row in range(0, height, 4):
        shade = int(40 * row / height)
        draw.rectangle((0, row, width, row + 4), fill=tuple(max(0, c - shade) for c in base))
    for _ in range(rng.randint(3, 7)):
        x, y = rng.randrange(width), rng.randrange(height)
        r = rng.randint(8, 40)
        fill = tuple(rng.randrange(256) for _ in range(3))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)
    draw.text((10, height - 18), "500 Internal Server Error", fill=(200, 0, 0), font=_FONT)
    return _png(image)
